package evaluator

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"
)

// TestWholeSortKeysIsAStableSort: the index's radix sort orders as a stable comparison sort by
// both halves of the key, with many equal keys (duplicate ids) and first halves that tie.
func TestWholeSortKeysIsAStableSort(t *testing.T) {
	r := rand.New(rand.NewSource(28))
	for _, n := range []int{0, 1, 2, 17, 1000, 70000} {
		s := make([]idPlace, n)
		for i := range s {
			k := key128{r.Uint64(), r.Uint64()}
			switch r.Intn(4) {
			case 0:
				k.a = uint64(r.Intn(5)) << (16 * uint(r.Intn(4))) // first halves that tie
			case 1:
				if i > 0 {
					k = s[r.Intn(i)].k // an id that comes again
				}
			}
			s[i] = idPlace{k: k, part: int32(i / 100), index: int32(i % 100)}
		}
		want := slices.Clone(s)
		slices.SortStableFunc(want, func(x, y idPlace) int { return compareKeys(x.k, y.k) })
		sortKeys(s, func(p *idPlace) key128 { return p.k })
		if !slices.Equal(s, want) {
			t.Fatalf("n=%d: the radix sort differs from the stable sort", n)
		}
		if !slices.IsSortedFunc(s, func(x, y idPlace) int {
			return cmp.Or(compareKeys(x.k, y.k), cmp.Compare(x.part, y.part), cmp.Compare(x.index, y.index))
		}) {
			t.Fatalf("n=%d: not in the order finish needs", n)
		}
	}
}
