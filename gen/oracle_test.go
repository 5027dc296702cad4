package gen

import (
	"testing"
)

// Hand-computed sanity tests. Each expectation below was worked out by hand from
// the criteria text and the readings; the tests never call Expect twice to compare.

func mustExpect(t *testing.T, body []byte) Expected {
	t.Helper()
	e, err := Expect(body)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustAudit(t *testing.T, o obj) *Audit {
	t.Helper()
	e := mustExpect(t, bytesOf(o))
	if e.Refusal != nil {
		t.Fatalf("unexpected refusal %s", e.Refusal.Rule)
	}
	return e.Audit
}

func TestPercentR42(t *testing.T) {
	for _, tc := range []struct {
		name     string
		num, den int
		want     string
	}{
		{"R-42/1-of-16", 1, 16, "6.3%"},    // 6.25 -> half up
		{"R-42/3-of-16", 3, 16, "18.8%"},   // 18.75
		{"R-42/11-of-16", 11, 16, "68.8%"}, // 68.75
		{"R-42/1-of-80", 1, 80, "1.3%"},    // 1.25
		{"R-42/1-of-400", 1, 400, "0.3%"},  // 0.25
		{"R-42/1-of-3", 1, 3, "33.3%"},
		{"R-42/2-of-3", 2, 3, "66.7%"},
		{"R-42/1-of-8", 1, 8, "12.5%"},
		{"R-42/0-of-5", 0, 5, "0.0%"},
		{"R-42/5-of-5", 5, 5, "100.0%"},
		{"R-42/1-of-2000", 1, 2000, "0.1%"}, // 0.05 -> half up
		{"R-42/1-of-2001", 1, 2001, "0.0%"}, // 0.0499...
		{"R-42/999-of-1000", 999, 1000, "99.9%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percent(tc.num, tc.den, "x").Value; got != tc.want {
				t.Fatalf("percent(%d,%d) = %s, want %s", tc.num, tc.den, got, tc.want)
			}
		})
	}
	t.Run("R-28/zero-denominator", func(t *testing.T) {
		r := percent(0, 0, reasonNoLive)
		if r.Value != statusNotAssessable || r.Reason != reasonNoLive || r.Numerator != 0 || r.Denominator != 0 {
			t.Fatalf("got %+v", r)
		}
	})
}

func TestStrictDecoderR3(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		ok   bool
	}{
		{"R-3/object", `{"a":[1,2,{"b":null}]}`, true},
		{"R-3/bom", "\xef\xbb\xbf{}", false},
		{"R-3/duplicate-top", `{"a":1,"a":1}`, false},
		{"R-3/duplicate-deep", `{"a":[{"b":{"c":1,"c":2}}]}`, false},
		{"R-3/duplicate-by-escape", `{"a":1,"\u0061":2}`, false},
		{"R-3/same-name-different-objects", `{"a":{"x":1},"b":{"x":1}}`, true},
		{"R-3/lone-high", `"\ud800"`, false},
		{"R-3/lone-low", `"\udfff"`, false},
		{"R-3/reversed-pair", `"\udc00\ud800"`, false},
		{"R-3/pair", `"\ud800\udc00"`, true},
		{"R-3/invalid-utf8", "\"\xfe\"", false},
		{"R-3/encoded-surrogate-utf8", "\"\xed\xa0\x80\"", false},
		{"R-3/leading-zero", `01`, false},
		{"R-3/number-forms", `[-0,1.5e-3,2E+2,0.0]`, true},
		{"R-3/nan", `NaN`, false},
		{"R-3/single-quote", `{'a':1}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeStrict([]byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("accepted=%v, want %v", err == nil, tc.ok)
			}
		})
	}
	nest := func(n int) string {
		s := ""
		for i := 0; i < n; i++ {
			s += "["
		}
		for i := 0; i < n; i++ {
			s += "]"
		}
		return s
	}
	if _, err := decodeStrict([]byte(nest(64))); err != nil {
		t.Fatalf("R-3/depth-64 refused")
	}
	if _, err := decodeStrict([]byte(nest(65))); err == nil {
		t.Fatalf("R-3/depth-65 accepted")
	}
}

func TestRefusalsR1(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		rule  string
		index int // -1: no record_index
	}{
		{"export_required/array", `[]`, "export_required", -1},
		{"family_required/null", `{"family":null,"form":"x"}`, "family_required", -1},
		{"family_unknown/before-form", `{"family":"x"}`, "family_unknown", -1},
		{"form_invalid/before-records", `{"family":"mem0","form":"x"}`, "form_invalid", -1},
		{"records_required/object", `{"family":"mem0","form":"hash_only","records":{}}`, "records_required", -1},
		{"records_empty", `{"family":"mem0","form":"hash_only","records":[]}`, "records_empty", -1},
		{"record_not_object/wins-over-index-0-id", `{"family":"mem0","form":"full_text","records":[{},1]}`, "record_not_object", 1},
		{"record_id_required/wins-over-duplicate", `{"family":"mem0","form":"full_text","records":[{"id":"a"},{"id":"a"},{"id":null}]}`, "record_id_required", 2},
		{"record_id_duplicate/later", `{"family":"mem0","form":"full_text","records":[{"id":"a"},{"id":"b"},{"id":"a"},{"id":"b"}]}`, "record_id_duplicate", 2},
		{"content_text_required", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":""},{"id":"b","content_text":1}]}`, "content_text_required", 1},
		{"content_hash_required/empty", `{"family":"mem0","form":"hash_only","records":[{"id":"a","content_hash":""}]}`, "content_hash_required", 0},
		{"manifest_invalid/before-variant", `{"family":"mem0","form":"hash_only","variant":"x","manifest":[],"records":[{"id":"a","content_hash":"h"}]}`, "manifest_invalid", -1},
		{"declared_scope_keys_invalid", `{"family":"mem0","form":"hash_only","variant":"x","manifest":{"declared_scope_keys":[1]},"records":[{"id":"a","content_hash":"h"}]}`, "declared_scope_keys_invalid", -1},
		{"variant_unknown", `{"family":"generic","form":"hash_only","variant":"platform","records":[{"id":"a","content_hash":"h"}]}`, "variant_unknown", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mustExpect(t, []byte(tc.body))
			if e.Refusal == nil || e.Refusal.Rule != tc.rule {
				t.Fatalf("got %+v, want %s", e.Refusal, tc.rule)
			}
			if (tc.index < 0) != (e.Refusal.RecordIndex == nil) || (tc.index >= 0 && *e.Refusal.RecordIndex != tc.index) {
				t.Fatalf("record_index wrong")
			}
		})
	}
	t.Run("body_bytes_cap/R-2", func(t *testing.T) {
		big := make([]byte, BodyBytesCap+1)
		e := mustExpect(t, big)
		if e.Refusal == nil || e.Refusal.Rule != "body_bytes_cap" || *e.Refusal.Cap != 262144 || *e.Refusal.Observed != 262145 {
			t.Fatalf("got %+v", e.Refusal)
		}
	})
}

func TestClusterOutcomes(t *testing.T) {
	a := func(id, user string, kv ...any) obj {
		return txt(id, "note-a", append([]any{"user_id", user}, kv...)...)
	}
	for _, tc := range []struct {
		name       string
		body       obj
		decidedBy  string // "" when no cluster
		undeclared int
		marked     string // marked share value
	}{
		// two users, same text, no marker: one undeclared cluster, 0 of 2 marked
		{"B2/two-scopes", mem0(a("r1", "u1"), a("r2", "u2")), "B2", 1, "0.0%"},
		// both marked: marked shared, 2 of 2
		{"B1/both-shared", mem0(a("r1", "u1", "shared", true), a("r2", "u2", "metadata", obj{"shared": true})), "B1", 0, "100.0%"},
		// one of three copies covered: partial coverage, 1 of 3
		{"N1/one-of-three", mem0(a("r1", "u1", "shared", true), a("r2", "u2"), a("r3", "u3")), "N1", 0, "33.3%"},
		// malformed shared on one copy wins over everything
		{"N4/string-shared", mem0(a("r1", "u1", "shared", "true"), a("r2", "u2", "shared", true)), "N4", 0, "50.0%"},
		// shared true at record level, false in metadata
		{"N3/both-levels", mem0(a("r1", "u1", "shared", true, "metadata", obj{"shared": false}), a("r2", "u2")), "N3", 0, "50.0%"},
		// pointer to a missing origin
		{"N2/missing-origin", mem0(a("r1", "u1", "shared", true), a("r2", "u2", "origin_claim_id", "zz")), "N2", 0, "50.0%"},
		// copies carry key sets {user_id} and {user_id, agent_id}
		{"N5/key-sets", mem0(a("r1", "u1"), a("r2", "u2", "agent_id", "g1")), "N5", 0, "0.0%"},
		// sources disagree and one copy covered
		{"B5/attribution", mem0(a("r1", "u1", "source", "s-1", "shared", true), a("r2", "u2", "source", "s-2")), "B5", 0, "50.0%"},
		// sources disagree, nothing covered: B2 stands
		{"B5/disagree-uncovered-B2", mem0(a("r1", "u1", "source", "s-1"), a("r2", "u2", "source", "s-2")), "B2", 1, "0.0%"},
		// M4 cycle r1->r2->r1 with no M1/M3 on it: broken pointer
		{"M4/cycle-uncovered", mem0(a("r1", "u1", "origin_claim_id", "r2"), a("r2", "u2", "origin_claim_id", "r1")), "N2", 0, "0.0%"},
		// M4 chain r3->r2->r1(shared): all covered
		{"M4/chain", mem0(a("r1", "u1", "shared", true), a("r2", "u2", "origin_claim_id", "r1"), a("r3", "u3", "origin_claim_id", "r2")), "B1", 0, "100.0%"},
		// M2: global plus one scope is no cluster; global counts in marked share (1 of 2)
		{"M2/global-plus-one", mem0(a("r1", "global"), a("r2", "u1")), "", 0, "50.0%"},
		// Letta L-2: overlapping sets never cluster
		{"L-2/overlap", letta(txt("r1", "x", "attached_to", list("a1", "a2")), txt("r2", "x", "attached_to", list("a2"))), "", 0, "0.0%"},
		// Letta L-2: disjoint sets cluster
		{"L-2/disjoint", letta(txt("r1", "x", "attached_to", list("a1")), txt("r2", "x", "attached_to", list("a2"))), "B2", 1, "0.0%"},
		// P0: unscoped copies never cluster
		{"P0/unscoped", mem0(txt("r1", "x"), txt("r2", "x", "user_id", "u1")), "", 0, "0.0%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			au := mustAudit(t, tc.body)
			cl := au.Factors.CrossScopeClusters
			if cl.Status != statusAssessable {
				t.Fatalf("clusters not assessable: %s", cl.Reason)
			}
			if tc.decidedBy == "" {
				if len(*cl.Clusters) != 0 {
					t.Fatalf("want no cluster, got %d", len(*cl.Clusters))
				}
			} else if len(*cl.Clusters) != 1 || (*cl.Clusters)[0].DecidedBy != tc.decidedBy {
				t.Fatalf("want one cluster decided by %s, got %+v", tc.decidedBy, *cl.Clusters)
			}
			if *cl.Undeclared != tc.undeclared || cl.MarkedShare.Value != tc.marked {
				t.Fatalf("undeclared=%d share=%s", *cl.Undeclared, cl.MarkedShare.Value)
			}
		})
	}
}

func TestB5ReferralsR40(t *testing.T) {
	// mem0 with an attribution field so scope_conflicts is assessable; r3 conflicts
	// (attributed u9 vs scope u1). The B5 cluster's copies r1, r2 are referrals.
	au := mustAudit(t, mem0(
		txt("r1", "x", "user_id", "u1", "source", "s-1", "shared", true),
		txt("r2", "x", "user_id", "u2", "source", "s-2"),
		txt("r3", "y", "user_id", "u1", "attributed_scope", "u9"),
	))
	sc := au.Factors.ScopeConflicts
	if sc.Status != statusAssessable || *sc.Conflicts != 1 || sc.Records.AttributedScope[0] != "r3" {
		t.Fatalf("conflicts %+v", sc)
	}
	if len(*sc.Referrals) != 2 || (*sc.Referrals)[0] != "r1" || (*sc.Referrals)[1] != "r2" {
		t.Fatalf("referrals %v", *sc.Referrals)
	}
	c := (*au.Factors.CrossScopeClusters.Clusters)[0]
	if c.Reason != "attribution conflict" || *c.DistinctSources != 2 {
		t.Fatalf("cluster %+v", c)
	}
}

func TestVerdictAndCoverage(t *testing.T) {
	// 6 records: r1,r2 u1 "x" (intra-scope duplicate), r3 u2 "x" (cross-scope),
	// r4 unscoped, r5 superseded by r6, r6 u1 "z". Conflict: r6 attributed "u2" vs "u1".
	au := mustAudit(t, mem0(
		txt("r1", "x", "user_id", "u1"),
		txt("r2", "x", "user_id", "u1"),
		txt("r3", "x", "user_id", "u2"),
		txt("r4", "y"),
		txt("r5", "z", "user_id", "u1"),
		txt("r6", "z", "user_id", "u1", "supersedes", "r5", "attributed_scope", "u2"),
	))
	// records 6, live 5 (r5 superseded), unscoped 1 of 6 = 16.7%, one undeclared
	// cluster {r1,r2,r3}, one conflict, duplicates excess 1 (r1,r2 in u1).
	want := "MEMORY SCOPE-HYGIENE \u2014 records: 6 \u00b7 live: 5 \u00b7 unscoped: 16.7% \u00b7 undeclared cross-scope clusters: 1 \u00b7 conflicts: 1 \u00b7 live duplicates: 1"
	if au.VerdictPrefix != want {
		t.Fatalf("verdict\n got %s\nwant %s", au.VerdictPrefix, want)
	}
	if au.Factors.Duplicates.Rate.Value != "20.0%" { // 1 of 5 live
		t.Fatalf("duplicate rate %s", au.Factors.Duplicates.Rate.Value)
	}
	if au.Coverage.NotLive != 1 || au.Coverage.B5NotRun == nil || *au.Coverage.B5NotRun != 1 || au.Coverage.ScopeKeysSource != "family_default" {
		t.Fatalf("coverage %+v", au.Coverage)
	}
	if *au.Factors.ScopePresence.DistinctScopes != 2 {
		t.Fatalf("distinct scopes")
	}
}

func TestGatesMatrix(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		body                         obj
		presence, unscoped, clusters string // "" = ASSESSABLE, else the reason
		conflicts                    string
	}{
		{"extension_rule/generic-no-keys", generic(txt("r1", "x")), reasonGenericNoKeys, reasonGenericNoKeys, reasonGenericNoKeys, reasonGenericConflict},
		{"extension_rule/generic-keys", genericKeys(list("t"), txt("r1", "x", "t", "a")), "", "", "", reasonGenericConflict},
		{"unscoped_rate/mem0-scope-filtered", mem0(txt("r1", "x")).manifest("scope_filtered", true), "", reasonScopeFiltered, "", reasonNoCheckedField},
		{"unscoped_rate/graphiti-one-scope", zep(txt("r1", "x", "group_id", "g")), "", reasonMultiScope, "", reasonNoCheckedField},
		{"unscoped_rate/zep-cloud-one-scope", zep(txt("r1", "x", "group_id", "g")).with("variant", "zep_cloud"), "", reasonZepCloudSingle, reasonZepCloudSingle, reasonNoCheckedField},
		{"unscoped_rate/zep-cloud-multi", zep(txt("r1", "x", "group_id", "g"), txt("r2", "x", "graph_id", "k")).with("variant", "zep_cloud"), "", "", "", reasonNoCheckedField},
		{"scope_conflicts/letta", letta(txt("r1", "x", "attached_to", list("a"), "attributed_scope", "b")), "", "", "", reasonLettaConflicts},
		{"scope_conflicts/zep-history", zep(txt("r1", "x", "group_id", "g", "history_scope", "g"), txt("r2", "y", "group_id", "h")), "", "", "", ""},
		{"L-4/no-eligible", letta(txt("r1", "x", "is_template", true)), reasonNoEligible, reasonNoEligible, "", reasonLettaConflicts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mustExpect(t, bytesOf(tc.body))
			if e.Refusal != nil {
				t.Fatalf("refused: %s", e.Refusal.Rule)
			}
			check := func(what string, got Status, want string) {
				if want == "" && got.Status != statusAssessable || want != "" && (got.Status != statusNotAssessable || got.Reason != want) {
					t.Errorf("%s: got %+v, want %q", what, got, want)
				}
			}
			f := e.Precheck.Factors
			check("scope_presence", f.ScopePresence, tc.presence)
			check("unscoped_rate", f.UnscopedRate, tc.unscoped)
			check("cross_scope_clusters", f.CrossScopeClusters, tc.clusters)
			check("scope_conflicts", f.ScopeConflicts, tc.conflicts)
			check("duplicates", f.Duplicates, "")
		})
	}
}

func TestLivenessAndContestedR17(t *testing.T) {
	// generic, declared key t. r1 pending (contested), r2/r3 same partition,
	// r4 is_deleted "true" (a string: still live), r5 invalid_at only (split, dead).
	au := mustAudit(t, genericKeys(list("t"),
		txt("r1", "x", "t", "a", "state", "pending"),
		txt("r2", "x", "t", "a"),
		txt("r3", "x", "t", "a"),
		txt("r4", "x", "t", "a", "is_deleted", "true"),
		txt("r5", "x", "t", "a", "invalid_at", "2026-01-01T00:00:00Z"),
	))
	// live: r1..r4 = 4; duplicates group {r2,r3,r4} (r1 contested) -> excess 2; rate 2/4.
	if au.Live != 4 || au.Coverage.Contested != 1 || au.Coverage.SplitState != 1 {
		t.Fatalf("live=%d coverage=%+v", au.Live, au.Coverage)
	}
	d := au.Factors.Duplicates
	if d.Excess != 2 || d.Rate.Value != "50.0%" || len(d.Clusters) != 1 || d.Clusters[0].Count != 3 {
		t.Fatalf("duplicates %+v", d)
	}
}
