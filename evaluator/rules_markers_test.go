package evaluator_test

import (
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/evaluator"
)

// Copies of the same content under mem0 scopes alice, bob, carol.
func ca(kv ...any) M { return R("a", "same", append([]any{"user_id", "alice"}, kv...)...) }
func cb(kv ...any) M { return R("b", "same", append([]any{"user_id", "bob"}, kv...)...) }
func cc(kv ...any) M { return R("c", "same", append([]any{"user_id", "carol"}, kv...)...) }

// gl is a global (M2) copy of the same content.
func gl(id string, kv ...any) M { return R(id, "same", append([]any{"user_id", "global"}, kv...)...) }

func manifest(x M, m M) M { return with(x, "manifest", m) }

type clusterRow struct {
	name string
	x    M
	// decided is the precedence rule that classifies the single cluster ("" : no cluster).
	decided string
	check   func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport)
}

var classOf = map[string]string{"N4": "ambiguous", "N3": "ambiguous", "N2": "ambiguous", "N5": "ambiguous", "B5": "ambiguous",
	"N1": "ambiguous", "B1": "marked_shared", "B2": "undeclared"}

var reasonOf = map[string]string{"N4": "malformed marker", "N3": "contradictory declaration", "N2": "broken pointer",
	"N5": "partition ambiguity", "B5": "attribution conflict", "N1": "partial coverage"}

const undeclaredLabel = "undeclared cross-scope identical content — contamination indicator, not proof of a runtime leak"

func runClusterRows(t *testing.T, rows []clusterRow) {
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			rep := audit(t, r.x)
			if r.decided == "" {
				noClusters(t, rep)
				if r.check != nil {
					r.check(t, rep, evaluator.ClusterReport{})
				}
				return
			}
			c := onlyCluster(t, rep)
			f := rep.Factors.CrossScopeClusters
			if c.DecidedBy != r.decided || c.Classification != classOf[r.decided] || c.Reason != reasonOf[r.decided] || c.Cluster != 1 {
				t.Fatalf("cluster decided by %s (%s, %q), want %s\n%s", c.DecidedBy, c.Classification, c.Reason, r.decided, marshal(t, c))
			}
			want := map[string]string{"ambiguous": "NOT ASSESSABLE", "marked_shared": "declared shared by the operator", "undeclared": undeclaredLabel}
			if c.Statement != want[c.Classification] {
				t.Errorf("statement %q", c.Statement)
			}
			counts := map[string]int{c.Classification: 1}
			if iv(f.Candidate) != 1 || iv(f.MarkedShared) != counts["marked_shared"] || iv(f.Undeclared) != counts["undeclared"] || iv(f.Ambiguous) != counts["ambiguous"] {
				t.Errorf("counts %s", marshal(t, f))
			}
			if r.check != nil {
				r.check(t, rep, c)
			}
		})
	}
}

func covered(ids ...string) func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
	return func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
		t.Helper()
		var got []string
		for _, m := range c.Members {
			if m.Covered {
				got = append(got, m.ID)
			}
		}
		if strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Fatalf("covered %v, want %v\n%s", got, ids, marshal(t, c))
		}
	}
}

func both(fs ...func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport)) func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
	return func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
		t.Helper()
		for _, f := range fs {
			f(t, rep, c)
		}
	}
}

func coverage(f func(evaluator.Coverage) bool) func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
	return func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
		t.Helper()
		if !f(rep.Coverage) {
			t.Fatalf("coverage %s", marshal(t, rep.Coverage))
		}
	}
}

func markedShare(num, den int, value string) func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
	return func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
		t.Helper()
		r := rep.Factors.CrossScopeClusters.MarkedShare
		if r.Numerator != num || r.Denominator != den || r.Value != value {
			t.Fatalf("marked_share %s, want %d/%d %s", marshal(t, r), num, den, value)
		}
	}
}

func TestClustersForm(t *testing.T) {
	t.Parallel()
	runClusterRows(t, []clusterRow{
		{"B2/two-scopes-unmarked", X("mem0", ca(), cb()), "B2", both(covered(), markedShare(0, 2, "0.0%"), func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			if c.DistinctScopes != 2 || c.Members[0].ID != "a" || c.Members[0].Scope != "alice" || c.Members[1].Scope != "bob" || c.DistinctSources != nil {
				t.Fatalf("%s", marshal(t, c))
			}
		})},
		{"P0/same-scope-no-cluster", X("mem0", ca(), R("b", "same", "user_id", "alice")), "", nil},
		{"P0/unscoped-never-joins", X("mem0", ca(), R("u", "same")), "", nil},
		{"P0/unscoped-not-member", X("mem0", ca(), cb(), R("u", "same", "shared", true)), "B2", both(markedShare(0, 3, "0.0%"), func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			if len(c.Members) != 2 {
				t.Fatalf("members %s", marshal(t, c.Members))
			}
		})},
		{"exactness/no-normalisation", X("mem0", ca(), R("b", "same ", "user_id", "bob"), R("c", "Same", "user_id", "carol")), "", nil},
		{"exactness/hash-as-is", hashOnly(X("mem0", R("a", "H1", "user_id", "alice"), R("b", "h1", "user_id", "bob"))), "", nil},
		{"B2/hash-only", hashOnly(X("mem0", ca(), cb())), "B2", nil},
		{"B2/three-scopes", X("mem0", ca(), cb(), cc(), R("d", "same", "user_id", "alice")), "B2", func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			if c.DistinctScopes != 3 || len(c.Members) != 4 {
				t.Fatalf("%s", marshal(t, c))
			}
			// Intra-scope excess still counts under duplicates: a and d in alice.
			if iv(rep.Factors.Duplicates.Excess) != 1 {
				t.Fatalf("duplicates %s", marshal(t, rep.Factors.Duplicates))
			}
		}},
	})
	t.Run("R-41/cluster-ordering", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("mem0",
			R("z1", "k1", "user_id", "alice"), R("b2", "k1", "user_id", "bob"),
			R("a9", "k2", "user_id", "alice"), R("c1", "k2", "user_id", "bob"),
			R("b", "k3", "user_id", "alice"), R("b10", "k3", "user_id", "bob"), R("b1", "k3", "user_id", "carol")))
		got := strings.Join(clusterIDs(rep), " ")
		if got != "a9,c1 b,b1,b10 b2,z1" {
			t.Fatalf("cluster order %q", got)
		}
		for i, c := range *rep.Factors.CrossScopeClusters.Clusters {
			if c.Cluster != i+1 {
				t.Fatalf("cluster numbers %s", marshal(t, rep.Factors.CrossScopeClusters.Clusters))
			}
		}
	})
}

func TestMarkersM1M2(t *testing.T) {
	t.Parallel()
	runClusterRows(t, []clusterRow{
		{"M1/shared-true-record", X("mem0", ca("shared", true), cb("shared", true)), "B1", both(covered("a", "b"), markedShare(2, 2, "100.0%"))},
		{"M1/shared-true-metadata", X("mem0", ca("metadata", M{"shared": true}), cb("metadata", M{"shared": true})), "B1", covered("a", "b")},
		{"M1/sharing-global-record", X("mem0", ca("sharing", "global"), cb("sharing", "global")), "B1", covered("a", "b")},
		{"M1/sharing-global-metadata", X("mem0", ca("metadata", M{"sharing": "global"}), cb("metadata", M{"sharing": "global", "other": 1})), "B1", nil},
		{"M1/mixed-levels", X("mem0", ca("shared", true), cb("metadata", M{"sharing": "global"})), "B1", nil},
		{"M1/sharing-GLOBAL-not-marker", X("mem0", ca("sharing", "GLOBAL"), cb("sharing", "Global")), "B2", covered()},
		{"M1/sharing-true-not-marker", X("mem0", ca("sharing", true), cb("sharing", "shared")), "B2", nil},
		{"M1/shared-false-both", X("mem0", ca("shared", false), cb("metadata", M{"shared": false})), "B2", covered()},
		{"M1/shared-null-absent", X("mem0", ca("shared", nil), cb("metadata", M{"shared": nil})), "B2", nil},
		{"M1/metadata-not-object", X("mem0", ca("metadata", "shared"), cb("metadata", []any{M{"shared": true}})), "B2", nil},
		{"N4/shared-string-true", X("mem0", ca("shared", "true"), cb("shared", true)), "N4", nil},
		{"N4/shared-number", X("mem0", ca("shared", true), cb("metadata", M{"shared": 1})), "N4", nil},
		{"N4/shared-empty-string", X("mem0", ca("shared", ""), cb()), "N4", nil},
		{"N4/shared-object", X("mem0", ca("metadata", M{"shared": M{}}), cb()), "N4", nil},
		{"N1/one-marked", X("mem0", ca("shared", true), cb()), "N1", both(covered("a"), markedShare(1, 2, "50.0%"))},
		{"M1/marker-on-non-live-inert", X("mem0", ca("shared", true), cb(), cc("shared", true, "is_deleted", true)), "N1", func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			if len(c.Members) != 2 {
				t.Fatalf("%s", marshal(t, c))
			}
		}},
		{"N4/malformed-on-non-live-ignored", X("mem0", ca(), cb(), cc("shared", "yes", "replaced_by", "a")), "B2", nil},
		// M2: the reserved value, exactly.
		{"M2/global-member-listed-not-judged", X("mem0", ca(), cb(), gl("g")), "B2", both(markedShare(1, 3, "33.3%"), func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			if len(c.Members) != 3 || c.DistinctScopes != 2 {
				t.Fatalf("%s", marshal(t, c))
			}
			g := c.Members[2]
			if g.ID != "g" || !g.Global || g.Covered || g.Scope != "global" {
				t.Fatalf("global member %+v", g)
			}
		})},
		{"M2/one-copy-plus-global-no-cluster", X("mem0", ca(), gl("g")), "", nil},
		{"M2/GLOBAL-not-reserved", X("mem0", ca(), R("b", "same", "user_id", "GLOBAL")), "B2", func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			if c.Members[1].Global || c.DistinctScopes != 2 {
				t.Fatalf("%s", marshal(t, c))
			}
		}},
		{"M2/space-global-not-reserved", X("mem0", ca(), R("b", "same", "user_id", " global")), "B2", nil},
		{"M2/star-not-reserved", X("mem0", ca(), R("b", "same", "user_id", "*")), "B2", nil},
		{"M2/shared-all-not-reserved", X("mem0", R("a", "same", "user_id", "shared"), R("b", "same", "user_id", "all")), "B2", nil},
		{"M2/global-plus-second-key-not-global", X("mem0", R("a", "same", "user_id", "global", "agent_id", "x"), R("b", "same", "user_id", "alice", "agent_id", "x")), "B2", func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			if c.Members[0].Global || c.Members[0].Scope != "global/x" {
				t.Fatalf("%s", marshal(t, c))
			}
		}},
		{"M2/global-on-other-key", X("mem0", ca(), cb(), R("g", "same", "agent_id", "global")), "B2", func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			if !c.Members[2].Global {
				t.Fatalf("%s", marshal(t, c))
			}
		}},
		{"R-22/global-malformed-marker-not-judged", X("mem0", ca("shared", true), cb("shared", true), gl("g", "shared", "yes")), "B1", nil},
		{"R-22/global-unmarked-does-not-break-B1", X("mem0", ca("shared", true), cb("shared", true), gl("g", "shared", false)), "B1", markedShare(3, 3, "100.0%")},
		{"M2/two-globals-no-cluster", X("mem0", gl("g1"), R("g2", "same", "agent_id", "global")), "", func(t *testing.T, rep *evaluator.Report, _ evaluator.ClusterReport) {
			d := *rep.Factors.Duplicates.Clusters
			if len(d) != 1 || d[0].Partition != "global" || d[0].Scope != "global" || d[0].Count != 2 {
				t.Fatalf("duplicates %s", marshal(t, d))
			}
		}},
	})
}

func TestMarkersM3(t *testing.T) {
	t.Parallel()
	absent := func(s, k, i int) func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
		return coverage(func(c evaluator.Coverage) bool {
			m := c.M3DeclaredAbsent
			return m["global_scopes"] == s && m["global_content_keys"] == k && m["global_claim_ids"] == i && len(m) == 3
		})
	}
	runClusterRows(t, []clusterRow{
		{"M3-a/global_scopes-all", manifest(X("mem0", ca(), cb()), M{"global_scopes": []any{"alice", "bob"}}), "B1", both(covered("a", "b"), absent(0, 0, 0))},
		{"M3-a/global_scopes-partial", manifest(X("mem0", ca(), cb()), M{"global_scopes": []any{"alice"}}), "N1", covered("a")},
		{"M3-a/global_scopes-exact-string", manifest(X("mem0", ca(), cb()), M{"global_scopes": []any{"Alice", "bob "}}), "B2", absent(2, 0, 0)},
		{"M3-a/global_scopes-joined-string", manifest(X("mem0", ca("agent_id", "bot"), cb("agent_id", "bot")), M{"global_scopes": []any{"alice/bot", "bob/bot"}}), "B1", nil},
		{"M3-b/global_content_keys-full-text", manifest(X("mem0", ca(), cb()), M{"global_content_keys": []any{"same"}}), "B1", both(covered("a", "b"), absent(0, 0, 0))},
		{"M3-b/global_content_keys-hash-only", manifest(hashOnly(X("mem0", ca(), cb())), M{"global_content_keys": []any{"same"}}), "B1", nil},
		{"M3-b/global_content_keys-near-miss", manifest(X("mem0", ca(), cb()), M{"global_content_keys": []any{"same ", "SAME"}}), "B2", absent(0, 2, 0)},
		{"M3-c/global_claim_ids", manifest(X("mem0", ca(), cb()), M{"global_claim_ids": []any{"a", "b"}}), "B1", both(covered("a", "b"), absent(0, 0, 0))},
		{"M3-c/global_claim_ids-partial", manifest(X("mem0", ca(), cb()), M{"global_claim_ids": []any{"b"}}), "N1", covered("b")},
		{"R-49/declared-absent-counted-each-time", manifest(X("mem0", ca(), cb()),
			M{"global_scopes": []any{"alice", "zed", "zed"}, "global_content_keys": []any{"nope"}, "global_claim_ids": []any{"ghost", "a", "ghost2"}}),
			"N1", both(absent(2, 1, 2), covered("a"))},
		{"R-25/declared-present-on-non-live-record", manifest(X("mem0", ca(), cb(), R("d", "other", "user_id", "dave", "is_deleted", true)),
			M{"global_scopes": []any{"dave"}, "global_content_keys": []any{"other"}, "global_claim_ids": []any{"d"}}), "B2", absent(0, 0, 0)},
		{"R-49/global_scopes-unscoped-record-not-a-scope", manifest(X("mem0", ca(), cb(), R("u", "other")), M{"global_scopes": []any{""}}), "B2", absent(1, 0, 0)},
		{"R-45/manifest-ignored", manifest(X("mem0", ca(), cb()), M{"global_scopes": "alice", "global_content_keys": []any{5, nil, "same"},
			"global_claim_ids": M{}, "private_scopes": true, "scope_filtered": "yes", "multi_scope": 1, "unknown": []any{1}}), "B1",
			coverage(func(c evaluator.Coverage) bool { return c.ManifestIgnored == 7 })},
		{"R-45/manifest-null-members-not-ignored", manifest(X("mem0", ca(), cb()), M{"global_scopes": nil, "private_scopes": nil, "scope_filtered": nil, "multi_scope": false}), "B2",
			coverage(func(c evaluator.Coverage) bool { return c.ManifestIgnored == 0 })},
		{"R-6/m3-on-non-live-inert", manifest(X("mem0", ca(), cb(), cc("is_deleted", true)), M{"global_claim_ids": []any{"c"}}), "B2", nil},
	})
}

func TestMarkersM4(t *testing.T) {
	t.Parallel()
	runClusterRows(t, []clusterRow{
		{"M4/resolves-to-global-root", X("mem0", gl("g"), ca("origin_claim_id", "g"), cb("origin_claim_id", "g")), "B1", covered("a", "b")},
		{"M4/origin-covered-only-by-own-markers", X("mem0", ca(), cb("origin_claim_id", "a")), "N1", covered("b")},
		{"M4/origin-with-own-marker", X("mem0", ca("shared", true), cb("origin_claim_id", "a")), "B1", covered("a", "b")},
		{"M4/broken-absent", X("mem0", ca("shared", true), cb("origin_claim_id", "nowhere")), "N2", covered("a")},
		{"M4/broken-key-mismatch", X("mem0", R("o", "other", "user_id", "global"), ca("shared", true), cb("origin_claim_id", "o")), "N2", nil},
		{"M4/broken-origin_scope-mismatch", X("mem0", gl("g"), ca("origin_claim_id", "g", "origin_scope", "alice"), cb("origin_claim_id", "g")), "N2", covered("b")},
		{"M4/origin_scope-match", X("mem0", gl("g"), ca("origin_claim_id", "g", "origin_scope", "global"), cb("origin_claim_id", "g", "origin_scope", nil)), "B1", nil},
		{"M4/origin_scope-non-string", X("mem0", gl("g"), ca("origin_claim_id", "g", "origin_scope", 5), cb("origin_claim_id", "g")), "N2", nil},
		{"M4/origin_scope-multi-key-string", X("mem0", R("o", "same", "user_id", "zed", "agent_id", "bot", "shared", true),
			ca("agent_id", "bot", "origin_claim_id", "o", "origin_scope", "zed/bot"), cb("agent_id", "bot", "shared", true)), "B1", covered("a", "b", "o")},
		{"M4/broken-non-string", X("mem0", ca("shared", true), cb("origin_claim_id", 5)), "N2", nil},
		{"M4/broken-non-string-array", X("mem0", ca("shared", true), cb("origin_claim_id", []any{"a"})), "N2", nil},
		{"M4/pointer-null-no-pointer", X("mem0", ca("shared", true), cb("origin_claim_id", nil)), "N1", nil},
		{"M4/origin-not-live-still-resolves", X("mem0", R("o", "same", "user_id", "zed", "is_deleted", true), ca("origin_claim_id", "o"), cb("origin_claim_id", "o")), "B1", nil},
		{"M4/origin-unscoped-resolves", X("mem0", R("o", "same"), ca("origin_claim_id", "o"), cb("origin_claim_id", "o")), "B1", nil},
		{"M4/chain-to-root", X("mem0", gl("g"), ca("origin_claim_id", "g"), cb("origin_claim_id", "a")), "B1", covered("a", "b")},
		{"M4/chain-broken-at-second-hop", X("mem0", ca("origin_claim_id", "gone"), cb("origin_claim_id", "a")), "N2", covered()},
		{"R-35/chain-intermediate-origin_scope-checked", X("mem0", R("o", "same", "user_id", "zed"), R("p", "same", "origin_claim_id", "o", "origin_scope", "nope"), ca("shared", true), cb("origin_claim_id", "p")), "N2", covered("a")},
		{"R-35/chain-intermediate-origin_scope-matches", X("mem0", R("o", "same", "user_id", "zed"), R("p", "same", "origin_claim_id", "o", "origin_scope", "zed"), ca("shared", true), cb("origin_claim_id", "p")), "N1", covered("a", "b")},
		{"M4/chain-second-hop-non-string", X("mem0", R("o", "same", "origin_claim_id", 7), ca("shared", true), cb("origin_claim_id", "o")), "N2", nil},
		{"M4/chain-second-hop-key-mismatch", X("mem0", R("o", "other"), R("p", "same", "origin_claim_id", "o"), ca("shared", true), cb("origin_claim_id", "p")), "N2", nil},
		// Depth: the cluster size is 2 (a, b live and scoped); unscoped hops still count.
		{"M4/depth-equal-size-resolves", X("mem0", R("u1", "same", "origin_claim_id", "u2"), R("u2", "same"), ca("shared", true), cb("origin_claim_id", "u1")), "B1", nil},
		{"M4/over-deep", X("mem0", R("u1", "same", "origin_claim_id", "u2"), R("u2", "same", "origin_claim_id", "u3"), R("u3", "same"), ca("shared", true), cb("origin_claim_id", "u1")), "N2", covered("a")},
		{"M4/cycle-uncovered", X("mem0", ca("origin_claim_id", "b"), cb("origin_claim_id", "a")), "N2", covered()},
		{"M4/cycle-anchored-m1", X("mem0", ca("origin_claim_id", "b", "shared", true), cb("origin_claim_id", "a")), "B1", covered("a", "b")},
		{"M4/cycle-anchored-m3-a", manifest(X("mem0", ca("origin_claim_id", "b"), cb("origin_claim_id", "a")), M{"global_scopes": []any{"alice"}}), "B1", nil},
		{"M4/cycle-anchored-m3-b-covers-all", manifest(X("mem0", ca("origin_claim_id", "b"), cb("origin_claim_id", "a")), M{"global_content_keys": []any{"same"}}), "B1", nil},
		{"M4/cycle-anchor-not-live", X("mem0", R("o", "same", "user_id", "zed", "origin_claim_id", "a", "shared", true, "replaced_by", "x"), ca("origin_claim_id", "o"), cb("shared", true)), "N2", covered("b")},
		{"M4/cycle-three-anchored", X("mem0", ca("origin_claim_id", "b"), cb("origin_claim_id", "c"), cc("origin_claim_id", "a", "shared", true)), "B1", covered("a", "b", "c")},
		{"M4/cycle-three-uncovered", X("mem0", ca("origin_claim_id", "b"), cb("origin_claim_id", "c"), cc("origin_claim_id", "a")), "N2", covered()},
		{"M4/attested-listed-absent", manifest(X("mem0", ca("origin_claim_id", "ghost"), cb("origin_claim_id", "ghost")), M{"global_claim_ids": []any{"ghost"}}), "B1",
			coverage(func(c evaluator.Coverage) bool { return c.M3DeclaredAbsent["global_claim_ids"] == 1 })},
		{"M4/listed-present-checked-key", manifest(X("mem0", R("o", "other", "user_id", "zed"), ca("shared", true), cb("origin_claim_id", "o")), M{"global_claim_ids": []any{"o"}}), "N2", nil},
		{"M4/listed-present-checked-origin_scope", manifest(X("mem0", R("o", "same", "user_id", "zed"), ca("shared", true), cb("origin_claim_id", "o", "origin_scope", "bob")), M{"global_claim_ids": []any{"o"}}), "N2", nil},
		{"M4/listed-present-ends-chain", manifest(X("mem0", R("o", "same", "origin_claim_id", "gone"), ca("shared", true), cb("origin_claim_id", "o")), M{"global_claim_ids": []any{"o"}}), "B1", nil},
		{"M4/pointer-on-unscoped-not-judged", X("mem0", ca(), cb(), R("u", "same", "origin_claim_id", "gone")), "B2", nil},
	})
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	runClusterRows(t, []clusterRow{
		{"N4/malformed", X("mem0", ca("shared", "true"), cb("shared", true)), "N4", nil},
		{"N4/beats-N3", X("mem0", ca("shared", 1), cb("shared", true, "metadata", M{"shared": false})), "N4", nil},
		{"N3/covered-and-shared-false-metadata", X("mem0", ca("shared", true, "metadata", M{"shared": false}), cb("shared", true)), "N3", nil},
		{"N3/covered-and-private", manifest(X("mem0", ca("shared", true), cb("shared", true)), M{"private_scopes": []any{"alice"}}), "N3", nil},
		{"N3/covered-by-m3-and-shared-false", manifest(X("mem0", ca("shared", false), cb()), M{"global_content_keys": []any{"same"}}), "N3", nil},
		{"N3/metadata-true-record-false", X("mem0", ca("shared", false, "metadata", M{"shared": true}), cb("shared", true)), "N3", nil},
		{"N3/global-and-private-scope", manifest(X("mem0", ca(), cb()), M{"global_scopes": []any{"alice"}, "private_scopes": []any{"alice"}}), "N3", nil},
		{"N3/not-covered-private-is-N1", manifest(X("mem0", ca(), cb("shared", true)), M{"private_scopes": []any{"alice"}}), "N1", nil},
		{"N3/not-covered-shared-false-is-B2", manifest(X("mem0", ca("shared", false), cb()), M{"private_scopes": []any{"bob"}}), "B2", nil},
		{"N3/beats-N2", X("mem0", ca("shared", true, "metadata", M{"shared": false}), cb("origin_claim_id", "gone")), "N3", nil},
		{"N2/broken", X("mem0", ca("shared", true), cb("origin_claim_id", "gone")), "N2", nil},
		{"N2/beats-N5", X("mem0", ca("shared", true), R("b", "same", "user_id", "bob", "agent_id", "x", "origin_claim_id", "gone")), "N2", nil},
		{"N5/different-key-sets", X("mem0", ca(), R("b", "same", "user_id", "bob", "agent_id", "x")), "N5", nil},
		{"N5/disjoint-key-sets", X("mem0", ca("shared", true), R("b", "same", "agent_id", "x", "shared", true)), "N5", nil},
		{"N5/beats-B5", X("mem0", ca("shared", true, "source", "s1"), R("b", "same", "user_id", "bob", "agent_id", "x", "source", "s2")), "N5", nil},
		{"N5/session-stand-in-same-key-set", X("mem0", R("a", "same", "run_id", "r1"), R("b", "same", "session_id", "r2")), "B2",
			coverage(func(c evaluator.Coverage) bool { return c.SessionIDAsRunID == 1 })},
		{"N5/globals-not-judged", X("mem0", ca(), cb(), R("g", "same", "agent_id", "global")), "B2", nil},
		{"N5/never-letta", X("letta", R("a", "same", "attached_to", []any{"a1"}), R("b", "same", "attached_to", []any{"a2", "a3"})), "B2", nil},
		{"B5/beats-N1", X("mem0", ca("shared", true, "source", "s1"), cb("source", "s2")), "B5", nil},
		{"N1/partial", X("mem0", ca("shared", true), cb(), cc("shared", true)), "N1", covered("a", "c")},
		{"B1/all-covered", X("mem0", ca("shared", true), cb("sharing", "global"), cc("metadata", M{"shared": true})), "B1", nil},
		{"B2/none-covered", X("mem0", ca(), cb(), cc()), "B2", nil},
	})
}

func TestB5(t *testing.T) {
	t.Parallel()
	sources := func(n int) func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
		return func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			t.Helper()
			if n < 0 {
				if c.DistinctSources != nil || iv(rep.Coverage.B5NotRun) != 1 {
					t.Fatalf("b5 ran: %s b5_not_run %d", marshal(t, c), rep.Coverage.B5NotRun)
				}
				return
			}
			if c.DistinctSources == nil || *c.DistinctSources != n || iv(rep.Coverage.B5NotRun) != 0 {
				t.Fatalf("distinct_sources %v, want %d; b5_not_run %d", deref(c.DistinctSources), n, rep.Coverage.B5NotRun)
			}
		}
	}
	notPrinted := func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
		t.Helper()
		if sc := rep.Factors.ScopeConflicts; sc.Referrals != nil {
			t.Fatalf("referrals printed: %s", marshal(t, sc))
		}
	}
	refs := func(ids ...string) func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
		return func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
			t.Helper()
			sc := rep.Factors.ScopeConflicts
			if sc.Referrals == nil || strings.Join(*sc.Referrals, ",") != strings.Join(ids, ",") {
				t.Fatalf("referrals %s, want %v", marshal(t, sc), ids)
			}
		}
	}
	// A checked field on an unrelated record makes scope_conflicts ASSESSABLE (mem0).
	checked := R("k", "unrelated", "user_id", "kate", "attributed_scope", "kate")
	runClusterRows(t, []clusterRow{
		{"B5/agreement-coverage-B1", X("mem0", ca("shared", true, "source", "doc"), cb("shared", true, "source", "doc")), "B1", sources(1)},
		{"B5/agreement-no-coverage-B2", X("mem0", ca("source", "doc"), cb("source", "doc")), "B2", sources(1)},
		{"B5/disagreement-coverage-ambiguous", X("mem0", ca("shared", true, "source", "s1"), cb("shared", true, "source", "s2"), checked),
			"B5", both(sources(2), refs("a", "b"), func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
				// Referrals are not counted in k.
				if iv(rep.Factors.ScopeConflicts.Conflicts) != 0 {
					t.Fatalf("conflicts %s", marshal(t, rep.Factors.ScopeConflicts))
				}
			})},
		{"B5/disagreement-partial-coverage-ambiguous", X("mem0", ca("shared", true, "source", "s1"), cb("source", "s2"), cc("source", "s2"), checked), "B5", both(sources(2), refs("a", "b", "c"))},
		{"B5/disagreement-no-coverage-B2", X("mem0", ca("source", "s1"), cb("source", "s2"), cc("source", "s3"), checked), "B2", both(sources(3), refs())},
		{"B5/referrals-not-printed-when-conflicts-not-assessable", X("mem0", ca("shared", true, "source", "s1"), cb("shared", true, "source", "s2")), "B5",
			both(sources(2), notPrinted, func(t *testing.T, rep *evaluator.Report, c evaluator.ClusterReport) {
				if rep.Factors.ScopeConflicts.Status != "NOT ASSESSABLE" {
					t.Fatal(rep.Factors.ScopeConflicts.Status)
				}
			})},
		{"B5/not-run-source-omitted", X("mem0", ca("shared", true, "source", "s1"), cb("shared", true)), "B1", sources(-1)},
		{"B5/not-run-empty-source", X("mem0", ca("shared", true, "source", "s1"), cb("shared", true, "source", "")), "B1", sources(-1)},
		{"B5/not-run-non-string-source", X("mem0", ca("shared", true, "source", "s1"), cb("shared", true, "source", 5)), "B1", sources(-1)},
		{"B5/not-run-counted-whatever-decides", X("mem0", ca("shared", "bad"), cb()), "N4", sources(-1)},
		{"B5/global-source-irrelevant", X("mem0", ca("shared", true, "source", "s1"), cb("shared", true, "source", "s1"), gl("g", "source", "s9")), "B1", sources(1)},
		{"B5/source-exact", X("mem0", ca("shared", true, "source", "Doc"), cb("shared", true, "source", "doc")), "B5", sources(2)},
	})
	t.Run("R-40/referrals-sorted-unique-across-clusters", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("mem0",
			R("z", "k1", "user_id", "alice", "shared", true, "source", "s1"), R("m", "k1", "user_id", "bob", "source", "s2"),
			R("b", "k2", "user_id", "alice", "shared", true, "source", "s1"), R("y", "k2", "user_id", "bob", "shared", true, "source", "s3"),
			R("g", "k2", "user_id", "global"), R("q", "k3", "user_id", "q", "history_scope", "q")))
		sc := rep.Factors.ScopeConflicts
		if sc.Referrals == nil || strings.Join(*sc.Referrals, ",") != "b,m,y,z" || iv(sc.Conflicts) != 0 {
			t.Fatalf("scope_conflicts %s", marshal(t, sc))
		}
		if iv(rep.Factors.CrossScopeClusters.Ambiguous) != 2 {
			t.Fatalf("clusters %s", marshal(t, rep.Factors.CrossScopeClusters))
		}
	})
}
