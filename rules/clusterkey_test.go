package rules

import (
	"math/rand"
	"testing"
)

// TestClusterOrderKey: the shipped cluster programs compare counts only, so clusters are keyed by
// the outcome of those comparisons; across many random clusters sharing one memo, every decision
// equals a fresh evaluation of the same cluster.
func TestClusterOrderKey(t *testing.T) {
	ps, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if !ps.fast.clusterKey.ok {
		t.Fatal("the shipped cluster programs should be keyed by the order type of their counts")
	}
	r := rand.New(rand.NewSource(28))
	for _, fam := range []string{"generic", "letta", "mem0", "zep_graphiti"} {
		s := Scope{Family: fam, Form: "full_text"}
		shared := &ClusterActivation{Scope: s}
		for i := 0; i < 20000; i++ {
			n := func() int64 { return int64(r.Intn(6)) }
			c := Cluster{Letta: fam == "letta", Copies: n(), Globals: n(), DistinctScopes: n(), DisjointPair: r.Intn(2) == 0,
				Covered: n(), Malformed: n() / 4, Contradictions: n() / 4, BrokenPointers: n() / 4, KeySets: n(), Sourced: n(),
				DistinctSources: n(), WithTemplateID: n(), TemplateIDs: n(), WithBaseTemplateID: n(), BaseTemplateIDs: n()}
			shared.Cluster = &c
			got, gerr := ps.EvalCluster(shared)
			fresh := &ClusterActivation{Scope: s, Cluster: &c}
			want, werr := ps.evalCluster(fresh)
			if got != want || (gerr == nil) != (werr == nil) || shared.B5 != fresh.B5 {
				t.Fatalf("%s %+v: memoized %+v %v (b5 %v), fresh %+v %v (b5 %v)", fam, c, got, gerr, shared.B5, want, werr, fresh.B5)
			}
		}
		t.Logf("%s: %d decisions for 20000 clusters", fam, len(shared.memoCode))
	}
	// Counts that compare differently never share a key.
	k := &ps.fast.clusterKey
	a, b := Cluster{Copies: 3, Covered: 2}, Cluster{Copies: 3, Covered: 3}
	if k.canon(&a) == k.canon(&b) {
		t.Error("covered < copies and covered == copies share a key")
	}
	a, b = Cluster{Copies: 9, Covered: 7, Globals: 4}, Cluster{Copies: 8, Covered: 5}
	if k.canon(&a) != k.canon(&b) {
		t.Error("clusters whose compared counts compare alike have different keys")
	}
}
