package evaluator_test

import (
	"testing"
)

// Liveness (factor_rules, R-14..R-16) and contested records.
func TestLiveness(t *testing.T) {
	t.Parallel()
	type row struct {
		name     string
		x        M
		live     int
		split    int
		dangling int
	}
	mem := func(rs ...M) M { return X("mem0", rs...) }
	rows := []row{
		{"R-14/supersedes-string", mem(R("a", "x", "supersedes", "b"), R("b", "x")), 1, 0, 0},
		{"R-14/supersedes-array", mem(R("a", "x", "supersedes", []any{"b", "c"}), R("b", "x"), R("c", "y"), R("d", "z")), 2, 0, 0},
		{"R-14/supersedes-self", mem(R("a", "x", "supersedes", "a")), 1, 0, 0},
		{"R-14/supersedes-self-in-array", mem(R("a", "x", "supersedes", []any{"a", "b"}), R("b", "x")), 1, 0, 0},
		{"R-14/supersedes-dangling-distinct", mem(R("a", "x", "supersedes", []any{"gone1", "gone2", "gone1"}), R("b", "x", "supersedes", "gone1")), 2, 0, 2},
		{"R-14/supersedes-non-string-entries", mem(R("a", "x", "supersedes", []any{5, nil, true, M{}}), R("b", "y")), 2, 0, 0},
		{"R-14/supersedes-number", mem(R("a", "x", "supersedes", 1), R("b", "y")), 2, 0, 0},
		{"R-14/supersedes-chain", mem(R("a", "x", "supersedes", "b"), R("b", "x", "supersedes", "c"), R("c", "x")), 1, 0, 0},
		{"R-14/superseder-not-live-still-supersedes", mem(R("a", "x", "supersedes", "b", "is_deleted", true), R("b", "x")), 0, 0, 0},
		{"R-14/mutual-supersedes", mem(R("a", "x", "supersedes", "b"), R("b", "x", "supersedes", "a")), 0, 0, 0},
		{"R-15/replaced_by-set", mem(R("a", "x", "replaced_by", "z"), R("b", "y")), 1, 0, 0},
		{"R-15/replaced_by-empty-string", mem(R("a", "x", "replaced_by", ""), R("b", "y")), 2, 0, 0},
		{"R-15/replaced_by-empty-array", mem(R("a", "x", "replaced_by", []any{}), R("b", "y")), 2, 0, 0},
		{"R-15/replaced_by-empty-object", mem(R("a", "x", "replaced_by", M{}), R("b", "y")), 2, 0, 0},
		{"R-15/replaced_by-false", mem(R("a", "x", "replaced_by", false), R("b", "y")), 2, 0, 0},
		{"R-15/replaced_by-array", mem(R("a", "x", "replaced_by", []any{"z"}), R("b", "y")), 1, 0, 0},
		{"R-15/replaced_by-zero-is-set", mem(R("a", "x", "replaced_by", 0), R("b", "y")), 1, 0, 0},
		{"R-15/superseded_by-set", mem(R("a", "x", "superseded_by", "z"), R("b", "y")), 1, 0, 0},
		{"R-15/superseded_by-true", mem(R("a", "x", "superseded_by", true), R("b", "y")), 1, 0, 0},
		{"R-15/superseded_by-empty", mem(R("a", "x", "superseded_by", ""), R("b", "y")), 2, 0, 0},
		{"R-15/is_deleted-true", mem(R("a", "x", "is_deleted", true), R("b", "y")), 1, 0, 0},
		{"R-15/is_deleted-string-true", mem(R("a", "x", "is_deleted", "true"), R("b", "y")), 2, 0, 0},
		{"R-15/is_deleted-one", mem(R("a", "x", "is_deleted", 1), R("b", "y")), 2, 0, 0},
		{"R-15/is_deleted-false", mem(R("a", "x", "is_deleted", false), R("b", "y")), 2, 0, 0},
		{"R-16/invalid_at-only-split", mem(R("a", "x", "invalid_at", "2026-01-01T00:00:00Z"), R("b", "y")), 1, 1, 0},
		{"R-16/expired_at-only-split", mem(R("a", "x", "expired_at", "2026-01-01T00:00:00Z"), R("b", "y")), 1, 1, 0},
		{"R-16/both-set-not-split", mem(R("a", "x", "invalid_at", "t1", "expired_at", "t2"), R("b", "y")), 1, 0, 0},
		{"R-16/both-null-live", mem(R("a", "x", "invalid_at", nil, "expired_at", nil), R("b", "y")), 2, 0, 0},
		{"R-16/empty-string-not-set", mem(R("a", "x", "invalid_at", "", "expired_at", "t2"), R("b", "y")), 1, 1, 0},
		{"R-16/number-is-set", mem(R("a", "x", "invalid_at", 0)), 0, 1, 0},
		{"R-16/split-zep", X("zep_graphiti", R("a", "x", "group_id", "g", "invalid_at", "t"), R("b", "x", "group_id", "g", "expired_at", "t")), 0, 2, 0},
		{"R-16/split-letta", X("letta", R("a", "x", "attached_to", []any{"a1"}, "expired_at", "t")), 0, 1, 0},
		{"R-16/split-generic", X("generic", R("a", "x", "invalid_at", "t")), 0, 1, 0},
		{"R-15/lifecycle_state-superseded", mem(R("a", "x", "lifecycle_state", "superseded"), R("b", "y")), 1, 0, 0},
		{"R-15/lifecycle_state-deleted", mem(R("a", "x", "lifecycle_state", "deleted"), R("b", "y")), 1, 0, 0},
		{"R-15/lifecycle_state-expired", mem(R("a", "x", "lifecycle_state", "expired"), R("b", "y")), 1, 0, 0},
		{"R-15/state-superseded", mem(R("a", "x", "state", "superseded"), R("b", "y")), 1, 0, 0},
		{"R-15/state-deleted", mem(R("a", "x", "state", "deleted"), R("b", "y")), 1, 0, 0},
		{"R-15/state-expired", mem(R("a", "x", "state", "expired"), R("b", "y")), 1, 0, 0},
		{"R-15/state-case-sensitive-Expired", mem(R("a", "x", "state", "Expired"), R("b", "y")), 2, 0, 0},
		{"R-15/lifecycle_state-case-sensitive-DELETED", mem(R("a", "x", "lifecycle_state", "DELETED"), R("b", "y")), 2, 0, 0},
		{"R-15/state-padded", mem(R("a", "x", "state", " superseded"), R("b", "y")), 2, 0, 0},
		{"R-15/state-array", mem(R("a", "x", "state", []any{"expired"}), R("b", "y")), 2, 0, 0},
		{"R-15/state-active", mem(R("a", "x", "state", "active", "lifecycle_state", "archived"), R("b", "y")), 2, 0, 0},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			rep := audit(t, r.x)
			n := len(r.x["records"].([]any))
			c := rep.Coverage
			if rep.Live != r.live || c.NotLive != n-r.live || c.SplitState != r.split || c.DanglingSupersedes != r.dangling {
				t.Fatalf("live %d not_live %d split %d dangling %d; want %d %d %d %d",
					rep.Live, c.NotLive, c.SplitState, c.DanglingSupersedes, r.live, n-r.live, r.split, r.dangling)
			}
			if iv(rep.Factors.Duplicates.Live) != r.live {
				t.Fatalf("duplicates.live %d", iv(rep.Factors.Duplicates.Live))
			}
		})
	}

	// liveness does not change the scope_presence / unscoped_rate denominators.
	t.Run("R-13/not-live-still-eligible", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("mem0", R("a", "x", "user_id", "u", "is_deleted", true), R("b", "y"), R("c", "z", "user_id", "v")))
		sp, ur := rep.Factors.ScopePresence, rep.Factors.UnscopedRate
		if iv(sp.Eligible) != 3 || iv(sp.Scoped) != 2 || sp.Rate.Value != "66.7%" || iv(ur.Unscoped) != 1 || ur.Rate.Value != "33.3%" {
			t.Fatalf("scope_presence %s unscoped_rate %s", marshal(t, sp), marshal(t, ur))
		}
	})
	// Superseded records never form or join a cluster.
	t.Run("R-14/superseded-never-joins-cluster", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("mem0", R("a", "x", "user_id", "alice", "supersedes", "b"), R("b", "x", "user_id", "bob")))
		noClusters(t, rep)
		rep = audit(t, X("mem0", R("a", "x", "user_id", "alice"), R("b", "x", "user_id", "bob"), R("c", "x", "user_id", "carol", "state", "expired")))
		if c := onlyCluster(t, rep); len(c.Members) != 2 || c.DistinctScopes != 2 {
			t.Fatalf("cluster %s", marshal(t, c))
		}
	})
}

func TestContested(t *testing.T) {
	t.Parallel()
	type row struct {
		name      string
		x         M
		contested int
		live      int
	}
	rows := []row{
		{"R-17/generic-pending", X("generic", R("a", "x", "state", "pending"), R("b", "y")), 1, 2},
		{"R-17/generic-pending-not-live", X("generic", R("a", "x", "state", "pending", "replaced_by", "b"), R("b", "y")), 0, 1},
		{"R-17/generic-pending-superseded-target", X("generic", R("a", "x", "state", "pending"), R("b", "y", "supersedes", "a")), 0, 1},
		{"R-17/mem0-pending-not-contested", X("mem0", R("a", "x", "state", "pending")), 0, 1},
		{"R-17/zep-pending-not-contested", X("zep_graphiti", R("a", "x", "state", "pending")), 0, 1},
		{"R-17/letta-pending-not-contested", X("letta", R("a", "x", "state", "pending")), 0, 1},
		{"R-17/generic-lifecycle_state-pending-not-contested", X("generic", R("a", "x", "lifecycle_state", "pending")), 0, 1},
		{"R-17/generic-Pending-case", X("generic", R("a", "x", "state", "Pending")), 0, 1},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			rep := audit(t, r.x)
			if rep.Coverage.Contested != r.contested || rep.Live != r.live {
				t.Fatalf("contested %d live %d, want %d %d", rep.Coverage.Contested, rep.Live, r.contested, r.live)
			}
		})
	}
	t.Run("R-48/contested-out-of-duplicate-groups", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("generic", R("a", "x"), R("b", "x", "state", "pending"), R("c", "x")))
		d := rep.Factors.Duplicates
		if rep.Live != 3 || iv(d.Excess) != 1 || iv(d.Live) != 3 || d.Rate.Value != "33.3%" || d.Rate.Denominator != 3 {
			t.Fatalf("duplicates %s", marshal(t, d))
		}
		cl := *d.Clusters
		if len(cl) != 1 || cl[0].Count != 2 || cl[0].Members[0] != "a" || cl[0].Members[1] != "c" || cl[0].Partition != "unscoped" || cl[0].Scope != "" {
			t.Fatalf("clusters %s", marshal(t, cl))
		}
	})
	t.Run("R-48/contested-pair-no-group", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("generic", R("a", "x", "state", "pending"), R("b", "x")))
		d := rep.Factors.Duplicates
		if iv(d.Excess) != 0 || len(*d.Clusters) != 0 || d.Rate.Value != "0.0%" || d.Rate.Denominator != 2 {
			t.Fatalf("duplicates %s", marshal(t, d))
		}
	})
	t.Run("R-17/contested-stays-in-clusters", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, with(X("generic", R("a", "x", "user", "u1", "state", "pending"), R("b", "x", "user", "u2")),
			"manifest", M{"declared_scope_keys": []any{"user"}}))
		c := onlyCluster(t, rep)
		if c.Classification != "undeclared" || len(c.Members) != 2 {
			t.Fatalf("cluster %s", marshal(t, c))
		}
	})
}
