package evaluator

import (
	"math/rand"
	"testing"
)

// TestWholeKeySetIsASet: the index's hash set agrees with a map, with keys that come again, first
// halves that tie (one probe chain) and the key that marks an empty slot.
func TestWholeKeySetIsASet(t *testing.T) {
	r := rand.New(rand.NewSource(28))
	for _, n := range []int{0, 1, 2, 17, 1000, 70000} {
		s, m := newKeySet(n), map[key128]bool{}
		keys := make([]key128, n)
		for i := range keys {
			k := key128{r.Uint64(), r.Uint64()}
			switch r.Intn(5) {
			case 0:
				k.a = uint64(r.Intn(3)) // first halves that tie
			case 1:
				if i > 0 {
					k = keys[r.Intn(i)] // a key that comes again
				}
			case 2:
				if r.Intn(50) == 0 {
					k = key128{}
				}
			}
			keys[i] = k
			if got := s.insert(k); got == m[k] {
				t.Fatalf("n=%d: insert(%v) = %v, the map had it: %v", n, k, got, m[k])
			}
			m[k] = true
		}
		for range 1000 {
			k := key128{r.Uint64(), r.Uint64()}
			if r.Intn(2) == 0 && n > 0 {
				k = keys[r.Intn(n)]
			}
			if s.has(k) != m[k] {
				t.Fatalf("n=%d: has(%v) = %v, the map: %v", n, k, s.has(k), m[k])
			}
		}
	}
}
