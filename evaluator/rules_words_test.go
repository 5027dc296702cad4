package evaluator_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
)

// mem0Rate builds a mem0 export of n records, k of them unscoped.
func mem0Rate(n, k int) M {
	var rs []M
	for i := 0; i < n; i++ {
		id := "r" + strconv.Itoa(i)
		if i < k {
			rs = append(rs, R(id, id))
		} else {
			rs = append(rs, R(id, id, "user_id", "u"+strconv.Itoa(i)))
		}
	}
	return X("mem0", rs...)
}

// percent to one decimal, half up, in integers.
func TestRounding(t *testing.T) {
	t.Parallel()
	type row struct {
		name              string
		n, k              int
		unscoped, present string
	}
	rows := []row{
		{"R-28/1-of-16", 16, 1, "6.3%", "93.8%"},
		{"R-28/1-of-8", 8, 1, "12.5%", "87.5%"},
		{"R-28/1-of-3", 3, 1, "33.3%", "66.7%"},
		{"R-28/2-of-3", 3, 2, "66.7%", "33.3%"},
		{"R-28/0-of-2", 2, 0, "0.0%", "100.0%"},
		{"R-28/2-of-2", 2, 2, "100.0%", "0.0%"},
		{"R-28/1-of-6", 6, 1, "16.7%", "83.3%"},
		{"R-28/1-of-40", 40, 1, "2.5%", "97.5%"},
		{"R-28/1-of-80", 80, 1, "1.3%", "98.8%"},
		{"R-28/1-of-400", 400, 1, "0.3%", "99.8%"},
		{"R-28/1-of-1000", 1000, 1, "0.1%", "99.9%"},
		{"R-28/1-of-999", 999, 1, "0.1%", "99.9%"},
		{"R-28/3-of-7", 7, 3, "42.9%", "57.1%"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			rep := audit(t, mem0Rate(r.n, r.k))
			ur, sp := rep.Factors.UnscopedRate, rep.Factors.ScopePresence
			if ur.Rate.Value != r.unscoped || ur.Rate.Numerator != r.k || ur.Rate.Denominator != r.n || iv(ur.Unscoped) != r.k || iv(ur.Eligible) != r.n {
				t.Fatalf("unscoped_rate %s, want %s", marshal(t, ur), r.unscoped)
			}
			if sp.Rate.Value != r.present || sp.Rate.Numerator != r.n-r.k || iv(sp.Scoped) != r.n-r.k || iv(sp.DistinctScopes) != r.n-r.k {
				t.Fatalf("scope_presence %s, want %s", marshal(t, sp), r.present)
			}
			if !strings.Contains(rep.VerdictLine, "· unscoped: "+r.unscoped+" ·") {
				t.Fatalf("verdict %q", rep.VerdictLine)
			}
		})
	}
}

// a zero denominator is NOT ASSESSABLE, never printed as zero.
func TestZeroDenominators(t *testing.T) {
	t.Parallel()
	factorJSON := func(t *testing.T, rep *evaluator.Report) map[string]any {
		var all map[string]any
		_ = json.Unmarshal(marshal(t, rep.Factors), &all)
		return all
	}
	t.Run("R-28/letta-all-templates-no-eligible", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("letta", L("t1", "x", at("a1"), "is_template", true), L("t2", "y", at("a2"), "is_template", true)))
		all := factorJSON(t, rep)
		wantSP := map[string]any{"status": "NOT ASSESSABLE", "reason": "no eligible records", "scoped": 0.0, "eligible": 0.0, "distinct_scopes": 2.0}
		wantUR := map[string]any{"status": "NOT ASSESSABLE", "reason": "no eligible records", "unscoped": 0.0, "eligible": 0.0}
		if string(marshal(t, all["scope_presence"])) != string(marshal(t, wantSP)) || string(marshal(t, all["unscoped_rate"])) != string(marshal(t, wantUR)) {
			t.Fatalf("scope_presence %s unscoped_rate %s", marshal(t, all["scope_presence"]), marshal(t, all["unscoped_rate"]))
		}
		want := "MEMORY SCOPE-HYGIENE — records: 2 · live: 2 · unscoped: NOT ASSESSABLE · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 0 — " + nowText
		if rep.VerdictLine != want {
			t.Fatalf("verdict\n got %q\nwant %q", rep.VerdictLine, want)
		}
		if rep.Coverage.Eligible != 0 || rep.Coverage.ExcludedTemplates != 2 {
			t.Fatalf("coverage %s", marshal(t, rep.Coverage))
		}
		for _, f := range []string{"scope_presence", "unscoped_rate"} {
			if s := string(marshal(t, all[f])); strings.Contains(s, "%") || strings.Contains(s, "rate") {
				t.Fatalf("%s carries a rate: %s", f, s)
			}
		}
	})
	t.Run("R-28/letta-all-source-passages", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("letta", R("p1", "x", "file_id", "f"), L("p2", "y", at("a1"), "source_passage", true)))
		sp := rep.Factors.ScopePresence
		if sp.Status != "NOT ASSESSABLE" || sp.Reason != "no eligible records" || iv(sp.Eligible) != 0 || iv(sp.Scoped) != 0 || sp.Rate != nil || iv(sp.DistinctScopes) != 1 {
			t.Fatalf("%s", marshal(t, sp))
		}
		if rep.Coverage.ExcludedSourcePass != 2 {
			t.Fatalf("%s", marshal(t, rep.Coverage))
		}
	})
	t.Run("R-28/no-live-records", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("mem0", R("a", "x", "user_id", "alice", "is_deleted", true), R("b", "x", "user_id", "bob", "state", "deleted")))
		ms, d := rep.Factors.CrossScopeClusters.MarkedShare, rep.Factors.Duplicates
		na := evaluator.Rate{Numerator: 0, Denominator: 0, Value: "NOT ASSESSABLE", Reason: "no live records"}
		if *ms != na || *d.Rate != na {
			t.Fatalf("marked_share %s duplicates %s", marshal(t, ms), marshal(t, d))
		}
		// Counts stay: the duplicate count is a count and reads 0.
		if iv(d.Excess) != 0 || iv(d.Live) != 0 {
			t.Fatalf("%s", marshal(t, d))
		}
		want := "MEMORY SCOPE-HYGIENE — records: 2 · live: 0 · unscoped: 0.0% · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 0 — " + nowText
		if rep.VerdictLine != want {
			t.Fatalf("verdict\n got %q\nwant %q", rep.VerdictLine, want)
		}
		s := string(marshal(t, rep.Factors.Duplicates)) + string(marshal(t, rep.Factors.CrossScopeClusters))
		if strings.Contains(s, "0.0%") {
			t.Fatalf("zero printed: %s", s)
		}
	})
	t.Run("R-28/never-0.0-for-not-assessable", func(t *testing.T) {
		t.Parallel()
		// Generic, no keys: three factors NOT ASSESSABLE, carrying no number at all.
		rep := audit(t, X("generic", R("a", "x"), R("b", "y")))
		all := factorJSON(t, rep)
		for _, f := range []string{"scope_presence", "unscoped_rate", "cross_scope_clusters", "scope_conflicts"} {
			if len(all[f].(map[string]any)) != 2 {
				t.Fatalf("%s: %s", f, marshal(t, all[f]))
			}
		}
		want := "MEMORY SCOPE-HYGIENE — records: 2 · live: 2 · unscoped: NOT ASSESSABLE · undeclared cross-scope clusters: NOT ASSESSABLE · conflicts: NOT ASSESSABLE · live duplicates: 0 — " + nowText
		if rep.VerdictLine != want {
			t.Fatalf("verdict\n got %q\nwant %q", rep.VerdictLine, want)
		}
		if rep.UndeclaredCount() != nil {
			t.Fatal("ledger undeclared count must be null when NOT ASSESSABLE")
		}
	})
}

func TestVerdictLine(t *testing.T) {
	t.Parallel()
	type row struct {
		name string
		x    M
		when time.Time
		want string
	}
	rows := []row{
		{"verdict/mem0", X("mem0",
			R("a", "same", "user_id", "alice"), R("b", "same", "user_id", "bob"), R("c", "other", "user_id", "alice", "attributed_scope", "zed"),
			R("d", "other", "user_id", "alice"), R("e", "lone"), R("f", "gone", "user_id", "alice", "replaced_by", "a")), now,
			"MEMORY SCOPE-HYGIENE — records: 6 · live: 5 · unscoped: 16.7% · undeclared cross-scope clusters: 1 · conflicts: 1 · live duplicates: 1 — 2026-11-30T12:00:00Z"},
		{"verdict/zep-cloud-single-scope", with(X("zep_graphiti", R("a", "x", "group_id", "g"), R("b", "x", "group_id", "g")), "variant", "zep_cloud"), now,
			"MEMORY SCOPE-HYGIENE — records: 2 · live: 2 · unscoped: NOT ASSESSABLE · undeclared cross-scope clusters: NOT ASSESSABLE · conflicts: NOT ASSESSABLE · live duplicates: 1 — 2026-11-30T12:00:00Z"},
		{"R-29/check-end-utc-whole-seconds", X("mem0", R("a", "x", "user_id", "u")), time.Date(2026, 11, 30, 13, 0, 5, 999999999, time.FixedZone("CET", 3600)),
			"MEMORY SCOPE-HYGIENE — records: 1 · live: 1 · unscoped: 0.0% · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 0 — 2026-11-30T12:00:05Z"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			rep, ref, err := evaluator.Audit(shipped(t), marshal(t, r.x), r.when)
			if err != nil || ref != nil {
				t.Fatalf("%v %v", ref, err)
			}
			validateOutput(t, "report", rep)
			if rep.VerdictLine != r.want {
				t.Fatalf("verdict\n got %q\nwant %q", rep.VerdictLine, r.want)
			}
			if !strings.HasSuffix(r.want, " — "+rep.CheckEnd) {
				t.Fatalf("check_end %q", rep.CheckEnd)
			}
			for _, c := range []string{"\u00b7", "\u2014"} {
				if !strings.Contains(rep.VerdictLine, c) {
					t.Fatalf("verdict lacks %U", []rune(c)[0])
				}
			}
		})
	}
	t.Run("verdict/report-header", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("mem0", R("a", "x")))
		c := shipped(t).Criteria()
		if rep.Kind != "audit_report" || rep.Op != "audit" || rep.Service != "scope-hygiene" || rep.CriteriaID != "memory-scope-hygiene/v1" ||
			rep.CriteriaRevision != "1.0.2" || rep.CriteriaDigest != shipped(t).Digest() || rep.ScopeStatement != c.Texts.ScopeText ||
			rep.HonestyLine != c.Texts.HonestyLine || rep.CheckEnd != nowText {
			t.Fatalf("%s", marshal(t, rep))
		}
		// No composite score anywhere.
		s := strings.ToLower(string(marshal(t, rep.Factors)) + string(marshal(t, rep.Coverage)))
		for _, w := range []string{"score", "grade", "band"} {
			if strings.Contains(s, w) {
				t.Fatalf("report carries %q", w)
			}
		}
	})
}

func TestScopeKeys(t *testing.T) {
	t.Parallel()
	type row struct {
		name     string
		x        M
		keys     string
		source   string
		scoped   int
		stand    int
		nonStr   int
		distinct int
		scopes   string // each record's scope string via a conflict probe is overkill: read cluster members
	}
	rows := []row{
		{"R-8/mem0-defaults", X("mem0", R("a", "x", "user_id", "u", "agent_id", "g", "app_id", "p", "run_id", "r")), "user_id,agent_id,app_id,run_id", "family_default", 1, 0, 0, 1, ""},
		{"R-8/session_id-stands-in", X("mem0", R("a", "x", "session_id", "s1"), R("b", "y", "user_id", "u", "session_id", "s2")), "user_id,agent_id,app_id,run_id", "family_default", 2, 2, 0, 2, ""},
		{"R-8/session_id-when-run_id-empty", X("mem0", R("a", "x", "run_id", "", "session_id", "s1")), "user_id,agent_id,app_id,run_id", "family_default", 1, 1, 0, 1, ""},
		{"R-8/session_id-when-run_id-non-string", X("mem0", R("a", "x", "run_id", 5, "session_id", "s1")), "user_id,agent_id,app_id,run_id", "family_default", 1, 1, 1, 1, ""},
		{"R-8/run_id-wins-over-session_id", X("mem0", R("a", "x", "run_id", "r1", "session_id", "s1")), "user_id,agent_id,app_id,run_id", "family_default", 1, 0, 0, 1, ""},
		{"R-8/session_id-empty-no-stand-in", X("mem0", R("a", "x", "session_id", "")), "user_id,agent_id,app_id,run_id", "family_default", 0, 0, 0, 0, ""},
		{"R-44/no-stand-in-under-declared-keys", manifest(X("mem0", R("a", "x", "session_id", "s1"), R("b", "x", "run_id", "r")), M{"declared_scope_keys": at("user_id", "run_id")}), "user_id,run_id", "manifest", 1, 0, 0, 1, ""},
		{"R-8/declared-keys-replace-defaults", manifest(X("mem0", R("a", "x", "user_id", "u"), R("b", "y", "team", "t")), M{"declared_scope_keys": at("team")}), "team", "manifest", 1, 0, 0, 1, ""},
		{"R-8/declared-key-repeated-counts-once", manifest(X("mem0", R("a", "x", "team", "t", "user_id", "u")), M{"declared_scope_keys": at("team", "user_id", "team")}), "team,user_id", "manifest", 1, 0, 0, 1, ""},
		{"R-8/declared-keys-empty-mem0", manifest(X("mem0", R("a", "x", "user_id", "u")), M{"declared_scope_keys": []any{}}), "", "manifest", 0, 0, 0, 0, ""},
		{"R-8/declared-keys-empty-zep", manifest(X("zep_graphiti", R("a", "x", "group_id", "g")), M{"declared_scope_keys": []any{}}), "", "manifest", 0, 0, 0, 0, ""},
		{"R-47/zep-defaults", X("zep_graphiti", R("a", "x", "group_id", "g"), R("b", "y", "graph_id", "k"), R("c", "z", "user_id", "u")), "group_id,graph_id", "family_default", 2, 0, 0, 2, ""},
		{"R-43/generic-declared", manifest(X("generic", R("a", "x", "user", "u"), R("b", "y")), M{"declared_scope_keys": at("user")}), "user", "manifest", 1, 0, 0, 1, ""},
		{"R-7/non-string-scope-values", X("mem0", R("a", "x", "user_id", 5, "agent_id", true, "app_id", []any{"p"}), R("b", "y", "user_id", "")), "user_id,agent_id,app_id,run_id", "family_default", 0, 0, 3, 0, ""},
		{"R-13/distinct-scopes-include-global-and-non-live", X("mem0", R("a", "x", "user_id", "global"), R("b", "y", "user_id", "u", "is_deleted", true), R("c", "z", "user_id", "u")), "user_id,agent_id,app_id,run_id", "family_default", 3, 0, 0, 2, ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			rep := audit(t, r.x)
			c := rep.Coverage
			if strings.Join(c.ScopeKeys, ",") != r.keys || c.ScopeKeysSource != r.source || c.SessionIDAsRunID != r.stand || c.NonStringScopeValues != r.nonStr {
				t.Fatalf("coverage %s", marshal(t, c))
			}
			if c.ScopeKeys == nil {
				t.Fatal("scope_keys must be a list, never null")
			}
			sp := rep.Factors.ScopePresence
			if iv(sp.Scoped) != r.scoped || iv(sp.DistinctScopes) != r.distinct {
				t.Fatalf("scope_presence %s", marshal(t, sp))
			}
		})
	}
	t.Run("R-8/scope-string-declared-order", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, manifest(X("mem0", R("a", "s", "user_id", "u1", "team", "t1"), R("b", "s", "user_id", "u2", "team", "t2")), M{"declared_scope_keys": at("team", "user_id")}))
		c := onlyCluster(t, rep)
		if c.Members[0].Scope != "t1/u1" || c.Members[1].Scope != "t2/u2" {
			t.Fatalf("%s", marshal(t, c))
		}
	})
	t.Run("R-8/session-stand-in-scope-string", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("mem0", R("a", "s", "user_id", "u", "session_id", "s1"), R("b", "s", "user_id", "u", "run_id", "s2")))
		c := onlyCluster(t, rep)
		if c.Members[0].Scope != "u/s1" || c.Members[1].Scope != "u/s2" || c.DecidedBy != "B2" {
			t.Fatalf("%s", marshal(t, c))
		}
	})
	t.Run("extension/undeclared-key-never-guessed", func(t *testing.T) {
		t.Parallel()
		// Scope never parsed out of source, id or content.
		rep := audit(t, X("mem0", R("user_id:alice", "user_id=alice", "source", "user_id=alice"), R("b", "user_id=alice", "metadata", M{"user_id": "alice"})))
		if iv(rep.Factors.ScopePresence.Scoped) != 0 || iv(rep.Factors.ScopePresence.DistinctScopes) != 0 {
			t.Fatalf("%s", marshal(t, rep.Factors.ScopePresence))
		}
		noClusters(t, rep)
	})
}

// scope identity is the tuple, never the printed string.
func TestTupleIdentity(t *testing.T) {
	t.Parallel()
	keys := M{"declared_scope_keys": at("a", "b")}
	t.Run("R-9/equal-strings-different-tuples", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, manifest(X("mem0", R("r1", "same", "a", "x/y", "b", "z"), R("r2", "same", "a", "x", "b", "y/z")), keys))
		c := onlyCluster(t, rep)
		if c.DistinctScopes != 2 || c.Members[0].Scope != "x/y/z" || c.Members[1].Scope != "x/y/z" || c.DecidedBy != "B2" {
			t.Fatalf("%s", marshal(t, c))
		}
		if iv(rep.Factors.ScopePresence.DistinctScopes) != 2 {
			t.Fatalf("%s", marshal(t, rep.Factors.ScopePresence))
		}
		if d := *rep.Factors.Duplicates.Clusters; len(d) != 0 {
			t.Fatalf("duplicates %s", marshal(t, d))
		}
	})
	t.Run("R-9/equal-tuples-same-scope", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, manifest(X("mem0", R("r1", "same", "a", "x", "b", "y/z"), R("r2", "same", "b", "y/z", "a", "x")), keys))
		noClusters(t, rep)
		if d := *rep.Factors.Duplicates.Clusters; len(d) != 1 || d[0].Scope != "x/y/z" || d[0].Count != 2 {
			t.Fatalf("duplicates %s", marshal(t, d))
		}
	})
	t.Run("R-9/same-value-different-key", func(t *testing.T) {
		t.Parallel()
		// user_id "x" and agent_id "x" print the same string but are different scopes (and key
		// sets: N5).
		rep := audit(t, X("mem0", R("r1", "same", "user_id", "x"), R("r2", "same", "agent_id", "x")))
		c := onlyCluster(t, rep)
		if c.DistinctScopes != 2 || c.DecidedBy != "N5" {
			t.Fatalf("%s", marshal(t, c))
		}
	})
	t.Run("R-9/letta-set-members-with-slash", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, X("letta", L("r1", "same", at("a/b")), L("r2", "same", at("a", "b"))))
		c := onlyCluster(t, rep)
		if c.DistinctScopes != 2 || c.Members[0].Scope != "a/b" || c.Members[1].Scope != "a/b" {
			t.Fatalf("%s", marshal(t, c))
		}
	})
}
