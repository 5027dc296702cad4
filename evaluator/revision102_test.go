package evaluator_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// criteria101 is the v1 revision before 1.0.2, kept to show what each 1.0.2 reading changes.
func criteria101(t *testing.T) *rules.ProgramSet {
	t.Helper()
	src, err := os.ReadFile("../rules/testdata/criteria-1.0.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := rules.Load("criteria-1.0.1.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// markerFacts are the coverage members that are facts of cross_scope_clusters.
var markerFacts = []string{"b5_not_run", "template_lineage", "m3_declared_absent", "marked_share"}

func coverageJSON(t *testing.T, rep *evaluator.Report) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(marshal(t, rep.Coverage), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestR54MarkerFactsOnlyBesideAnAssessableFactor: a NOT ASSESSABLE cross_scope_clusters leaves
// none of its facts in the coverage block; 1.0.1 printed them as zeros.
func TestR54MarkerFactsOnlyBesideAnAssessableFactor(t *testing.T) {
	old := criteria101(t)
	for _, tc := range []struct {
		name       string
		x          M
		assessable bool
	}{
		{"R-54/generic-no-keys", X("generic", R("a", "x"), R("b", "x")), false},
		{"R-54/zep_cloud-single-scope", with(X("zep_graphiti", R("a", "x", "group_id", "g1"), R("b", "x", "group_id", "g1")), "variant", "zep_cloud"), false},
		{"R-54/zep_cloud-one-live-graph", with(X("zep_graphiti", R("a", "x", "group_id", "g1"), R("b", "y", "group_id", "g2", "is_deleted", true)), "variant", "zep_cloud"), false},
		{"R-54/mem0-assessable", X("mem0", R("a", "x", "user_id", "u1"), R("b", "x", "user_id", "u2")), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := audit(t, tc.x)
			if got := rep.Factors.CrossScopeClusters.Status == "ASSESSABLE"; got != tc.assessable {
				t.Fatalf("cross_scope_clusters %s", rep.Factors.CrossScopeClusters.Status)
			}
			cov := coverageJSON(t, rep)
			for _, k := range markerFacts {
				if _, has := cov[k]; has != tc.assessable {
					t.Errorf("coverage %s present %v beside cross_scope_clusters %s", k, has, rep.Factors.CrossScopeClusters.Status)
				}
			}
			// The canonical (signed) form is the JCS form of the JSON form.
			checkCanonical(t, tc.name, rep)
			if !tc.assessable {
				// Not schema-checked: 1.0.1's zeros are what the 1.0.2 schema refuses.
				oldRep, _, err := evaluator.Audit(old, marshal(t, tc.x), now)
				if err != nil || oldRep == nil {
					t.Fatalf("1.0.1: %v", err)
				}
				before := coverageJSON(t, oldRep)
				if _, has := before["marked_share"]; !has {
					t.Errorf("1.0.1 did not print the marked share here; the test does not show the defect")
				}
				// The published schema refuses 1.0.1's zeros beside a NOT ASSESSABLE factor.
				if validAgainst(loadSchemas(t)["report"], oldRep) == nil {
					t.Errorf("report.schema.json accepts marker figures beside a NOT ASSESSABLE cross_scope_clusters")
				}
			}
		})
	}
}

// TestR55DeclaredKeysHoldingContent: declared scope keys named like a family's content field, or
// whose values read as free text, are declared_scope_keys_invalid; 1.0.1 accepted them all.
func TestR55DeclaredKeysHoldingContent(t *testing.T) {
	old := criteria101(t)
	long := func(n int, space bool) string {
		if !space {
			return strings.Repeat("x", n)
		}
		return "a " + strings.Repeat("y", n-2)
	}
	decl := func(x M, keys ...any) M { return with(x, "manifest", M{"declared_scope_keys": keys}) }
	refusedCases := []struct {
		name  string
		x     M
		index int
	}{
		{"R-55/memory-mem0", decl(X("mem0", R("a", "x", "user_id", "u")), "user_id", "memory"), -1},
		{"R-55/fact-zep", decl(X("zep_graphiti", R("a", "x")), "fact"), -1},
		{"R-55/value-letta", decl(X("letta", R("a", "x", "attached_to", []any{"ag"})), "value"), -1},
		{"R-55/text-generic", decl(X("generic", R("a", "x")), "topic", "text"), -1},
		{"R-55/data-hash-only", decl(hashOnly(X("mem0", R("a", "h"))), "data"), -1},
		{"R-55/content-generic", decl(X("generic", R("a", "x")), "content"), -1},
		{"R-55/free-text-65-bytes-with-space", decl(X("generic", R("a", "x", "topic", "alice"), R("b", "y", "topic", long(65, true))), "topic"), 1},
		{"R-55/free-text-257-bytes", decl(X("mem0", R("a", "x", "run_id", long(257, false))), "run_id"), 0},
		{"R-55/free-text-tab", decl(X("zep_graphiti", R("a", "x", "graph_id", "g"), R("b", "x", "group_id", "tab\t"+long(70, false))), "group_id", "graph_id"), 1},
		{"R-55/free-text-not-live-record", decl(X("generic", R("a", "x", "topic", long(300, true), "is_deleted", true)), "topic"), 0},
	}
	for _, tc := range refusedCases {
		t.Run(tc.name, func(t *testing.T) {
			ref := refuse(t, tc.x)
			if ref.Rule != "declared_scope_keys_invalid" || iv(ref.RecordIndex) != tc.index {
				t.Fatalf("refusal %s index %v, want declared_scope_keys_invalid index %d", ref.Rule, deref(ref.RecordIndex), tc.index)
			}
			validateOutput(t, "refusal", ref)
			if _, r, err := evaluator.Audit(old, marshal(t, tc.x), now); err != nil || r != nil {
				t.Errorf("1.0.1 already refused it: %v %v", r, err)
			}
		})
	}
	for _, tc := range []struct {
		name string
		x    M
	}{
		{"R-55/64-bytes-with-space-accepted", decl(X("generic", R("a", "x", "topic", long(64, true))), "topic")},
		{"R-55/256-bytes-no-space-accepted", decl(X("generic", R("a", "x", "topic", long(256, false))), "topic")},
		{"R-55/short-text-accepted", decl(X("generic", R("a", "x", "topic", "a b")), "topic")},
		{"R-55/letta-not-scanned", decl(X("letta", R("a", "x", "attached_to", []any{"ag"}, "topic", long(300, true))), "topic")},
		{"R-55/default-keys-not-scanned", X("mem0", R("a", "x", "user_id", long(300, true)))},
		{"R-55/undeclared-member-not-scanned", decl(X("generic", R("a", "x", "topic", "t", "note", long(300, true))), "topic")},
		{"R-55/Memory-is-another-name", decl(X("generic", R("a", "x", "Memory", "m")), "Memory")},
	} {
		t.Run(tc.name, func(t *testing.T) { audit(t, tc.x) })
	}
}
