package evaluator

import (
	"math/rand"
	"strconv"
	"testing"
)

// TestDistinctMatchesMap: distinct counts what a set counts, both below smallDistinct (pairwise)
// and above it (sorted), for strings and numbers drawn from few values so that repeats are common.
func TestDistinctMatchesMap(t *testing.T) {
	r := rand.New(rand.NewSource(28))
	for i := 0; i < 5000; i++ {
		n := r.Intn(2*smallDistinct + 2)
		ss, ns := make([]string, n), make([]int32, n)
		set, nset := map[string]bool{}, map[int32]bool{}
		for j := range ss {
			v := r.Intn(1 + r.Intn(n+1))
			ss[j], ns[j] = "g"+strconv.Itoa(v), int32(v)
			set[ss[j]], nset[ns[j]] = true, true
		}
		if got := distinct(ss); got != int64(len(set)) {
			t.Fatalf("distinct(%d strings) = %d, want %d", n, got, len(set))
		}
		if got := distinct(ns); got != int64(len(nset)) {
			t.Fatalf("distinct(%d numbers) = %d, want %d", n, got, len(nset))
		}
	}
}
