package gen

import (
	"encoding/json"
	"strings"
	"testing"
)

// Revision 1.0.2's readings, on the examples the readings give; every
// expectation worked out by hand from their text.

// coverageMembers returns the coverage block's member names as the report prints them.
func coverageMembers(t *testing.T, a *Audit) map[string]any {
	t.Helper()
	b, err := json.Marshal(a.Coverage)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var markerFacts = []string{"marked_share", "b5_not_run", "template_lineage", "m3_declared_absent"}

func TestCoverageMarkerFactsR54(t *testing.T) {
	t.Run("R-54/generic-no-keys", func(t *testing.T) {
		a := mustAudit(t, generic(txt("a", "x"), txt("b", "x")))
		if a.Factors.CrossScopeClusters.Status != statusNotAssessable {
			t.Fatalf("clusters %s", a.Factors.CrossScopeClusters.Status)
		}
		got := coverageMembers(t, a)
		want := map[string]any{"scope_keys": []any{}, "scope_keys_source": "family_default", "session_id_as_run_id": 0.0,
			"non_string_scope_values": 0.0, "eligible": 2.0, "excluded_templates": 0.0, "excluded_source_passages": 0.0,
			"not_live": 0.0, "split_state": 0.0, "contested": 0.0, "dangling_supersedes": 0.0, "manifest_ignored": 0.0}
		if len(got) != len(want) {
			t.Fatalf("coverage members %v", got)
		}
		for k, v := range want {
			gb, _ := json.Marshal(got[k])
			wb, _ := json.Marshal(v)
			if string(gb) != string(wb) {
				t.Errorf("%s = %s, want %s", k, gb, wb)
			}
		}
	})
	t.Run("R-54/zep_cloud-single-scope", func(t *testing.T) {
		a := mustAudit(t, zep(txt("e1", "x", "group_id", "g1"), txt("e2", "y", "group_id", "g1")).with("variant", "zep_cloud"))
		got := coverageMembers(t, a)
		for _, m := range markerFacts {
			if _, ok := got[m]; ok {
				t.Errorf("%s printed for a NOT ASSESSABLE cross_scope_clusters", m)
			}
		}
	})
	t.Run("R-54/mem0-assessable-unchanged", func(t *testing.T) {
		a := mustAudit(t, mem0(txt("a", "x", "user_id", "u1"), txt("b", "x", "user_id", "u2")))
		c := a.Coverage
		if c.MarkedShare == nil || c.MarkedShare.Value != "0.0%" || c.MarkedShare.Numerator != 0 || c.MarkedShare.Denominator != 2 ||
			c.B5NotRun == nil || *c.B5NotRun != 1 || c.TemplateLineage == nil || *c.TemplateLineage != 0 ||
			c.M3DeclaredAbsent == nil || *c.M3DeclaredAbsent != (M3Absent{}) {
			t.Fatalf("coverage %+v", c)
		}
		if *a.Factors.CrossScopeClusters.Undeclared != 1 || a.Factors.CrossScopeClusters.MarkedShare.Value != "0.0%" {
			t.Fatalf("clusters %+v", a.Factors.CrossScopeClusters)
		}
	})
	t.Run("R-54/no-zero-anywhere-for-not-assessable", func(t *testing.T) {
		a := mustAudit(t, generic(txt("a", "x", "shared", true), txt("b", "y")))
		b, _ := json.Marshal(a)
		for _, m := range markerFacts {
			if strings.Contains(string(b), `"`+m+`"`) {
				t.Errorf("%s appears in the audit", m)
			}
		}
	})
}

func TestDeclaredKeysHoldingContentR55(t *testing.T) {
	long := func(n int, ws bool) string {
		if ws {
			return "a " + strings.Repeat("b", n-2)
		}
		return strings.Repeat("b", n)
	}
	for _, tc := range []struct {
		name  string
		body  obj
		index int // -1: refused without record_index; -2: accepted
	}{
		{"R-55/ex1-mem0-memory", mem0(txt("a", "x", "user_id", "u")).manifest("declared_scope_keys", list("user_id", "memory")), -1},
		{"R-55/ex1-generic-memory", generic(txt("a", "x", "user_id", "u")).manifest("declared_scope_keys", list("user_id", "memory")), -1},
		{"R-55/ex1-letta-memory", letta(txt("a", "x", "attached_to", list("g"))).manifest("declared_scope_keys", list("user_id", "memory")), -1},
		{"R-55/data", genericKeys(list("data"), txt("a", "x")), -1},
		{"R-55/content", genericKeys(list("content"), txt("a", "x")), -1},
		{"R-55/text", genericKeys(list("text"), txt("a", "x")), -1},
		{"R-55/fact", zep(txt("a", "x")).manifest("declared_scope_keys", list("fact")), -1},
		{"R-55/value-hash_only", ex("mem0", "hash_only", hsh("a", "h")).manifest("declared_scope_keys", list("value")), -1},
		{"R-55/case-sensitive", genericKeys(list("Fact", "values"), txt("a", "x")), -2},
		{"R-55/ex2-66-bytes-spaced", genericKeys(list("topic"), txt("a", "x", "topic", "alice"),
			txt("b", "y", "topic", "The user said that they prefer dark mode in every app they use it.")), 1},
		{"R-55/ex3-64-spaced-accepted", genericKeys(list("topic"), txt("a", "x", "topic", long(64, true))), -2},
		{"R-55/ex3-65-spaced-refused", genericKeys(list("topic"), txt("a", "x", "topic", long(65, true))), 0},
		{"R-55/ex3-256-solid-accepted", genericKeys(list("topic"), txt("a", "x", "topic", long(256, false))), -2},
		{"R-55/ex3-257-solid-refused", genericKeys(list("topic"), txt("a", "x", "topic", long(257, false))), 0},
		{"R-55/ex3-short-spaced-accepted", genericKeys(list("topic"), txt("a", "x", "topic", "a b")), -2},
		{"R-55/ex3-letta-not-scanned", letta(txt("a", "x", "attached_to", list("g"), "topic", long(300, true))).manifest("declared_scope_keys", list("topic")), -2},
		{"R-55/ex3-default-keys-not-scanned", mem0(txt("a", "x", "user_id", long(300, true))), -2},
		{"R-55/newline-and-cr", genericKeys(list("k"), txt("a", "x", "k", "u"), txt("b", "x", "k", long(70, false)+"\r"),
			txt("c", "x", "k", long(70, false)+"\n")), 1},
		{"R-55/utf8-bytes", genericKeys(list("k"), txt("a", "x", "k", strings.Repeat("é", 128))), -2}, // 256 bytes
		{"R-55/utf8-bytes-over", genericKeys(list("k"), txt("a", "x", "k", strings.Repeat("é", 128)+"e")), 0},
		{"R-55/non-string-not-read", genericKeys(list("k"), txt("a", "x", "k", list(long(300, true)))), -2},
		{"R-55/not-live-records-read", genericKeys(list("k"), txt("a", "x", "k", "k1"), txt("b", "x", "k", long(300, false), "is_deleted", true)), 1},
		{"R-55/second-declared-key", genericKeys(list("k", "j"), txt("a", "x", "k", "k1", "j", long(65, true))), 0},
		{"R-55/empty-list-not-scanned", generic(txt("a", "x", "k", long(300, true))).manifest("declared_scope_keys", list()), -2},
		{"R-55/before-variant-unknown", genericKeys(list("k"), txt("a", "x", "k", long(300, false))).with("variant", "nope"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mustExpect(t, bytesOf(tc.body))
			switch {
			case tc.index == -2:
				if e.Refusal != nil {
					t.Fatalf("refused %+v", *e.Refusal)
				}
			case e.Refusal == nil || e.Refusal.Rule != ruleDeclaredScopeKeysInval:
				t.Fatalf("got %+v, want declared_scope_keys_invalid", e.Refusal)
			case tc.index == -1 && e.Refusal.RecordIndex != nil:
				t.Fatalf("record_index %d, want none", *e.Refusal.RecordIndex)
			case tc.index >= 0 && (e.Refusal.RecordIndex == nil || *e.Refusal.RecordIndex != tc.index):
				t.Fatalf("record_index %v, want %d", e.Refusal.RecordIndex, tc.index)
			}
		})
	}
}
