// Package pooltest holds the engines' shared test of pooled buffers: a result must stay what it
// was while later evaluations reuse the buffers its own evaluation used.
package pooltest

import (
	"encoding/json"
	"testing"
)

// ResultsOutlive runs next for i = 0..n-1; each call evaluates one body through the engine's pool
// and returns its result (a report on even i, a pre-check result on odd i, by the caller's
// choice), or ok false when the body was refused. Every result is marshalled when it is made and
// again after all the later evaluations: the bytes must not change, so nothing in a result points
// into a pooled buffer. At least min results must be made.
func ResultsOutlive(t testing.TB, n, min int, next func(i int) (result any, ok bool)) {
	t.Helper()
	type kept struct {
		v    any
		json []byte
	}
	var keep []kept
	for i := 0; i < n; i++ {
		v, ok := next(i)
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		keep = append(keep, kept{v, b})
	}
	if len(keep) < min {
		t.Fatalf("only %d results kept, want at least %d", len(keep), min)
	}
	for i, k := range keep {
		b, _ := json.Marshal(k.v)
		if string(b) != string(k.json) {
			t.Fatalf("result %d changed after later evaluations reused the pooled buffers", i)
		}
	}
}
