package evaluator

import (
	"strconv"
	"testing"
)

// TestStrTableMatchesMap holds the table to a Go map over adds, repeats, lookups of absent
// strings and resets, through several growths.
func TestStrTableMatchesMap(t *testing.T) {
	var tab strTable
	for round := range 3 {
		want := map[string]int32{}
		for i := range 5000 {
			s := strconv.Itoa(i*7919%3001) + "/" + strconv.Itoa(round)
			if i%11 == 0 {
				s = ""
			}
			v, found := tab.add(s, int32(i))
			w, ok := want[s]
			if !ok {
				want[s] = int32(i)
				w = int32(i)
			}
			if found != ok || v != w {
				t.Fatalf("round %d: add(%q) = %d, %v; want %d, %v", round, s, v, found, w, ok)
			}
		}
		if tab.len() != len(want) {
			t.Fatalf("round %d: len %d, want %d", round, tab.len(), len(want))
		}
		for s, w := range want {
			if v, ok := tab.get(s); !ok || v != w {
				t.Fatalf("round %d: get(%q) = %d, %v; want %d", round, s, v, ok, w)
			}
		}
		if _, ok := tab.get("absent"); ok {
			t.Fatalf("round %d: get of a string never added found it", round)
		}
		tab.reset()
		for _, sl := range tab.slots {
			if sl.tag != 0 || sl.s != "" {
				t.Fatalf("round %d: reset kept a string", round)
			}
		}
		if _, ok := tab.get("0/0"); ok {
			t.Fatalf("round %d: get after reset found a string", round)
		}
	}
}
