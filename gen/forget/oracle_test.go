package forget

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

// bodyOf marshals a test body exactly as a corpus case's body is submitted.
func bodyOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// generic turns an outcome part into plain JSON values for comparison with a
// hand-written expectation.
func generic(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func parse(t *testing.T, s string) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("bad expectation %s: %v", s, err)
	}
	return out
}

// TestWorkedExample: docs/forget-envelope.md's worked example, every member as the
// document states it by hand.
func TestWorkedExample(t *testing.T) {
	raw := `{"format": "mutation-log", "forget_mode": "transitional", "scope_dimensions": ["tenant", "agent", "session"],
 "principals": [{"id": "p-owner", "grants": [{"tenant": "A", "agent": "7", "session": "s1"}]},
                {"id": "p-other", "grants": [{"tenant": "A", "agent": "7"}]}],
 "events": [
  {"seq": 1, "op": "write", "key": {"scope": {"tenant": "A", "agent": "7", "session": "s1"}, "name": "pref"}, "principal": "p-owner", "version": 1},
  {"seq": 2, "op": "forget", "key": {"scope": {"tenant": "A", "agent": "7", "session": "s1"}, "name": "pref"}, "principal": "p-owner", "envelope": ["p-owner"]},
  {"seq": 3, "op": "reassign", "session": {"tenant": "A", "agent": "7", "session": "s1"}, "principal": "p-other", "to": "p-other"},
  {"seq": 4, "op": "write", "key": {"scope": {"tenant": "a", "agent": "7", "session": "s1"}, "name": " Pref"}, "principal": "p-other", "version": 2}],
 "snapshot": [{"key": {"scope": {"tenant": "A", "agent": "7", "session": "s1"}, "name": "pref"}, "version": 1}]}`
	o := Expect([]byte(raw))
	if o.Refusal != nil {
		t.Fatalf("refused: %+v", o.Refusal)
	}
	const verdict = "FORGET ENVELOPE — events: 4 · forgets: 1 · with envelope: 100.0% · reinserts: 1 · outside envelope: 1 · alias reinserts: 1 · unchecked reopens: NOT ASSESSABLE · retired-key writes: NOT ASSESSABLE · unchecked reassignments: 1 · replay mismatches: 1"
	if o.Audit.VerdictPrefix != verdict {
		t.Errorf("verdict\n got %s\nwant %s", o.Audit.VerdictPrefix, verdict)
	}
	want := parse(t, `{
	 "forget_envelopes": {"status": "ASSESSABLE", "forgets": 1, "with_envelope": 1, "without_envelope": [], "rate": {"numerator": 1, "denominator": 1, "value": "100.0%"}},
	 "reinserts_after_forget": {"status": "ASSESSABLE", "reinserts": 1, "seqs": [4]},
	 "reinserts_outside_envelope": {"status": "ASSESSABLE", "reinserts": 1, "checked": 1, "no_envelope": 0, "outside": 1, "silent": 1, "unattributed": 0, "outside_seqs": [4], "silent_seqs": [4], "unattributed_seqs": [], "judged": 1, "unjudged": 0},
	 "alias_reinserts": {"status": "ASSESSABLE", "reinserts": 1, "aliases": 1, "seqs": [4]},
	 "reopens": {"status": "NOT ASSESSABLE", "reason": "transitional-forget store: a forget retires no key"},
	 "reassignments": {"status": "ASSESSABLE", "reassignments": 1, "unchecked": 1, "unchecked_seqs": [3]},
	 "replay": {"status": "ASSESSABLE", "live_slots": 1, "snapshot_entries": 1, "mismatches": 1, "missing": 0, "extra": 0, "version": 1, "duplicate": 0, "missing_seqs": [], "extra_indexes": [], "version_indexes": [0], "duplicate_indexes": []}}`)
	if d := cmp.Diff(want, generic(t, o.Audit.Factors)); d != "" {
		t.Errorf("factors (-want +got):\n%s", d)
	}
	wantCov := parse(t, `{"scope_dimensions": ["tenant", "agent", "session"], "canonicalization": ["trim_ascii_space", "ascii_lower"],
	 "slots": 1, "aliased_slots": 1, "forgets_of_not_live": 0, "reopens_ineffective": 0, "unattributed_events": 0, "principals": 2, "live_slots": 1}`)
	if d := cmp.Diff(wantCov, generic(t, o.Audit.Coverage)); d != "" {
		t.Errorf("coverage (-want +got):\n%s", d)
	}
}

// TestRefusals: one row per refusal rule, named by its reading, with the expected
// rule and index derived by hand from the text.
func TestRefusals(t *testing.T) {
	ok := `{"format":"mutation-log","forget_mode":"transitional","scope_dimensions":["t"],"events":[{"seq":1,"op":"write","key":{"scope":{},"name":"n"},"version":1}]}`
	sub := func(old, repl string) string {
		if !strings.Contains(ok, old) {
			t.Fatalf("no %q in the base body", old)
		}
		return strings.Replace(ok, old, repl, 1)
	}
	evs := func(list string) string {
		return sub(`[{"seq":1,"op":"write","key":{"scope":{},"name":"n"},"version":1}]`, list)
	}
	w := func(seq int, extra string) string {
		return `{"seq":` + itoa(seq) + `,"op":"write","key":{"scope":{},"name":"n"},"version":1` + extra + `}`
	}
	for _, tc := range []struct {
		name, body, rule string
		index            int // -1: none
	}{
		{"FE-R-3/bom", "\xef\xbb\xbf" + ok, "export_required", -1},
		{"FE-R-3/duplicate-name", sub(`"format"`, `"format":"x","format"`), "export_required", -1},
		{"FE-R-3/lone-surrogate", sub(`"name":"n"`, `"name":"\udfff"`), "export_required", -1},
		{"FE-R-3/not-object", `[` + ok + `]`, "export_required", -1},
		{"FE-R-3/two-values", ok + ok, "export_required", -1},
		{"FE-R-5/format", sub(`"mutation-log"`, `"mutation_log"`), "format_invalid", -1},
		{"FE-R-5/mode", sub(`"transitional"`, `null`), "forget_mode_invalid", -1},
		{"FE-R-6/duplicate", sub(`["t"]`, `["t","t"]`), "scope_dimensions_invalid", -1},
		{"FE-R-7/not-array", sub(`"events"`, `"principals":{},"events"`), "principals_invalid", -1},
		{"FE-R-7/later-duplicate-id", sub(`"events"`, `"principals":[{"id":"a"},{"id":"b"},{"id":"a"}],"events"`), "principals_invalid", 2},
		{"FE-R-7/grant-member-null-undeclared", sub(`"events"`, `"principals":[{"id":"a","grants":[{"t":"x"},{"u":null}]}],"events"`), "principals_invalid", 0},
		{"FE-R-8/required", sub(`"events"`, `"eventz"`), "events_required", -1},
		{"FE-R-8/empty", evs(`[]`), "events_empty", -1},
		{"FE-R-8/not-object", evs(`[` + w(1, "") + `,7]`), "event_not_object", 1},
		{"FE-R-9/seq-fraction", evs(`[` + w(1, "") + `,{"seq":2.0,"op":"write"}]`), "event_seq_invalid", 1},
		{"FE-R-9/seq-negative-zero", evs(`[{"seq":-0,"op":"write"}]`), "event_seq_invalid", 0},
		{"FE-R-9/duplicate", evs(`[` + w(1, "") + `,` + w(2, "") + `,` + w(1, "") + `]`), "event_seq_duplicate", 2},
		{"FE-R-10/op", evs(`[` + w(1, "") + `,{"seq":2,"op":"WRITE"}]`), "event_op_invalid", 1},
		{"FE-R-1/op-wins-over-earlier-key", evs(`[{"seq":1,"op":"write"},{"seq":2,"op":"x"}]`), "event_op_invalid", 1},
		{"FE-R-11/name-null", evs(`[{"seq":1,"op":"forget","key":{"scope":{},"name":null}}]`), "event_key_invalid", 0},
		{"FE-R-11/scope-undeclared", evs(`[{"seq":1,"op":"reopen","key":{"scope":{"u":"x"},"name":""}}]`), "event_key_invalid", 0},
		{"FE-R-11/session", evs(`[` + w(1, "") + `,{"seq":2,"op":"reassign","key":{"scope":{},"name":"n"}}]`), "event_key_invalid", 1},
		{"FE-R-25/principal-empty", evs(`[` + w(1, `,"principal":""`) + `]`), "event_principal_invalid", 0},
		{"FE-R-25/to-undeclared", sub(`"events":[`, `"principals":[{"id":"p"}],"events":[{"seq":9,"op":"reassign","session":{},"principal":"p","to":"q"},`), "event_principal_invalid", 0},
		{"FE-R-9/version-exponent", evs(`[{"seq":1,"op":"write","key":{"scope":{},"name":"n"},"version":1E0}]`), "event_version_invalid", 0},
		{"FE-R-9/version-too-large", evs(`[{"seq":1,"op":"write","key":{"scope":{},"name":"n"},"version":9007199254740992}]`), "event_version_invalid", 0},
		{"FE-R-20/envelope-object", evs(`[` + w(1, "") + `,{"seq":2,"op":"forget","key":{"scope":{},"name":"n"},"envelope":{}}]`), "envelope_invalid", 1},
		{"FE-R-28/not-array", sub(`"events"`, `"snapshot":"x","events"`), "snapshot_invalid", -1},
		{"FE-R-28/version", sub(`"events"`, `"snapshot":[{"key":{"scope":{},"name":"n"},"version":1},{"key":{"scope":{},"name":"n"},"version":-1}],"events"`), "snapshot_invalid", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Expect([]byte(tc.body))
			if o.Refusal == nil {
				t.Fatalf("accepted, want %s", tc.rule)
			}
			r := o.Refusal
			if r.Rule != tc.rule {
				t.Fatalf("rule %s, want %s", r.Rule, tc.rule)
			}
			switch {
			case tc.index < 0 && r.Index != nil:
				t.Errorf("index %d, want none", *r.Index)
			case tc.index >= 0 && (r.Index == nil || *r.Index != tc.index):
				t.Errorf("index %v, want %d", r.Index, tc.index)
			}
			if r.Cap != nil || r.Observed != nil {
				t.Errorf("cap/observed on a non-cap rule")
			}
		})
	}
	t.Run("FE-R-8/count-cap", func(t *testing.T) {
		var list []string
		for i := 1; i <= EventsCap+5; i++ {
			list = append(list, `{"seq":`+itoa(i)+`,"op":"reassign","session":{}}`)
		}
		r := Expect([]byte(evs("[" + strings.Join(list, ",") + "]"))).Refusal
		if r == nil || r.Rule != "event_count_cap" || *r.Cap != 1000 || *r.Observed != 1005 || r.Index != nil {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("FE-R-2/body-cap", func(t *testing.T) {
		body := sub(`"events"`, `"pad":"`+strings.Repeat("y", BodyBytesCap)+`","events"`)
		r := Expect([]byte(body)).Refusal
		if r == nil || r.Rule != "body_bytes_cap" || *r.Observed != len(body) {
			t.Fatalf("got %+v", r)
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }

// factorCase is one hand-derived expectation: the members of one factor (or of
// coverage) that the text fixes for the log.
type factorCase struct {
	name   string
	body   obj
	factor string // a factor name, or "coverage"
	want   string // JSON object: the members compared
}

func checkFactor(t *testing.T, tc factorCase) {
	t.Helper()
	o := Expect(bodyOf(t, tc.body))
	if o.Refusal != nil {
		t.Fatalf("refused: %+v", *o.Refusal)
	}
	var got map[string]any
	if tc.factor == "coverage" {
		got = generic(t, o.Audit.Coverage).(map[string]any)
	} else {
		got = generic(t, o.Audit.Factors[tc.factor]).(map[string]any)
	}
	want := parse(t, tc.want).(map[string]any)
	for name, w := range want {
		if d := cmp.Diff(w, got[name]); d != "" {
			t.Errorf("%s.%s (-want +got):\n%s", tc.factor, name, d)
		}
	}
}

// TestFactors: per reading, the members the text fixes, derived by hand.
func TestFactors(t *testing.T) {
	for _, tc := range []factorCase{
		{"FE-R-12/trim-lower", tr(wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")),
			wr(3, k(sc("tenant", " a\t", "agent", "7", "session", "S1\r\n"), "PREF"), "p-owner", 2)),
			"alias_reinserts", `{"reinserts": 1, "aliases": 1, "seqs": [3]}`},
		{"FE-R-12/no-unicode-fold", tr(wr(1, kA("é"), "p-owner", 1), fg(2, kA("é"), "p-owner", nil), wr(3, kA("É"), "p-owner", 2)),
			"reinserts_after_forget", `{"reinserts": 0, "seqs": []}`},
		{"FE-R-12/vertical-tab-not-trimmed", tr(fg(1, kA("a"), "p-owner", nil), wr(2, kA("\va"), "p-owner", 2)),
			"coverage", `{"slots": 2, "aliased_slots": 0, "forgets_of_not_live": 1}`},
		{"FE-R-13/omitted-vs-empty", tr(fg(1, k(sc("tenant", "A"), "n"), "p-owner", nil), wr(2, k(sc("tenant", "A", "agent", ""), "n"), "p-owner", 1)),
			"coverage", `{"slots": 2, "live_slots": 1}`},
		{"FE-R-13/null-is-omitted", tr(fg(1, k(sc("tenant", "A"), "n"), "p-owner", nil), wr(2, k(sc("tenant", "A", "agent", nil), "n"), "p-owner", 1)),
			"alias_reinserts", `{"reinserts": 1, "aliases": 0, "seqs": []}`},
		{"FE-R-14/seq-order", tr(wr(3, kA("a"), "p-other", 2), fg(2, kA("a"), "p-owner", env("p-owner")), wr(1, kA("a"), "p-owner", 1)),
			"reinserts_outside_envelope", `{"reinserts": 1, "checked": 1, "outside": 1, "outside_seqs": [3], "silent": 1, "silent_seqs": [3]}`},
		{"FE-R-15/terminal-reopen-absent", with(tm(wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", nil), ro(3, kA("a"), "p-owner", true)), "snapshot", snap(se(kA("a"), 1))),
			"replay", `{"live_slots": 0, "extra": 1, "extra_indexes": [0], "mismatches": 1}`},
		{"FE-R-16/forgets-of-not-live", tr(fg(1, kA("a"), "p-owner", nil), wr(2, kA("b"), "p-owner", 1), fg(3, kA("b"), "p-owner", nil), fg(4, kA("b"), "p-owner", nil), ro(5, kA("b"), "p-owner", true)),
			"coverage", `{"forgets_of_not_live": 2, "reopens_ineffective": 1, "slots": 2, "live_slots": 0}`},
		{"FE-R-16/terminal-ineffective-reopens", tm(wr(1, kA("a"), "p-owner", 1), ro(2, kA("a"), "p-owner", nil), fg(3, kA("a"), "p-owner", nil), ro(4, kA("a"), "p-owner", nil), ro(5, kA("a"), "p-owner", nil)),
			"reopens", `{"reopens": 1, "unchecked": 1, "unchecked_seqs": [4], "retired_writes": 0, "retired_write_seqs": []}`},
		{"FE-R-17/missing-by-last-write", with(tr(wr(5, kA("a"), "p-owner", 1), wr(9, kA("A"), "p-owner", 2), wr(2, kA("b"), "p-owner", 1)), "snapshot", snap()),
			"replay", `{"live_slots": 2, "missing": 2, "missing_seqs": [2, 9], "mismatches": 2}`},
		{"FE-R-18/reinsert-only-from-forgotten", tr(wr(1, kA("a"), "p-owner", 1), wr(2, kA("a"), "p-owner", 2), fg(3, kA("a"), "p-owner", nil), wr(4, kA("a"), "p-owner", 3), wr(5, kA("a"), "p-owner", 4)),
			"reinserts_after_forget", `{"reinserts": 1, "seqs": [4]}`},
		{"FE-R-19/latest-forget-governs", tr(wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), fg(3, kA("a"), "p-owner", nil), wr(4, kA("a"), "p-other", 2)),
			"reinserts_outside_envelope", `{"reinserts": 1, "checked": 0, "no_envelope": 1, "judged": 0, "unjudged": 1, "outside": {"status": "NOT ASSESSABLE", "reason": "none judged: no reinsert has both a recorded envelope and a principal"}, "silent": {"status": "NOT ASSESSABLE", "reason": "none judged: no reinsert has both a recorded envelope and a principal"}}`},
		{"FE-R-20/empty-envelope", tr(fg(1, kA("a"), "p-owner", env()), wr(2, kA("a"), "p-owner", 1)),
			"reinserts_outside_envelope", `{"checked": 1, "outside": 1, "outside_seqs": [2], "silent": 1}`},
		{"FE-R-21/rate", tr(fg(1, kA("a"), "p-owner", env()), fg(2, kA("b"), "p-owner", nil), fg(3, kA("c"), "p-owner", env("x"))),
			"forget_envelopes", `{"forgets": 3, "with_envelope": 2, "without_envelope": [2], "rate": {"numerator": 2, "denominator": 3, "value": "66.7%"}}`},
		{"FE-R-22/unattributed", tr(fg(1, kA("a"), "p-owner", env("p-owner")), wr(2, kA("a"), nil, 1), fg(3, kA("a"), "p-owner", env("p-owner")), wr(4, kA("a"), "p-owner", 2)),
			"reinserts_outside_envelope", `{"reinserts": 2, "checked": 2, "unattributed": 1, "unattributed_seqs": [2], "outside": 0, "outside_seqs": []}`},
		{"FE-R-23/grant-misses-other-tenant", tr(fg(1, kB("a"), "p-owner", env("p-owner")), wr(2, kB("a"), "p-other", 1)),
			"reinserts_outside_envelope", `{"outside": 1, "silent": 0, "silent_seqs": []}`},
		{"FE-R-23/grant-needs-dimension", tr(fg(1, k(sc("tenant", "A"), "a"), "p-owner", env("p-owner")), wr(2, k(sc("tenant", "A"), "a"), "p-other", 1)),
			"reinserts_outside_envelope", `{"outside": 1, "silent": 0}`},
		{"FE-R-24/alias-vs-governing", tr(fg(1, kA("A"), "p-owner", nil), wr(2, kA("a"), "p-owner", 1), fg(3, kA("a"), "p-owner", nil), wr(4, kA("a"), "p-owner", 1)),
			"alias_reinserts", `{"reinserts": 2, "aliases": 1, "seqs": [2]}`},
		{"FE-R-26/retired-writes", tm(fg(1, kA("a"), "p-owner", nil), wr(2, kA("a"), "p-owner", 1), fg(3, kA("a"), "p-owner", nil), ro(4, kA("a"), "p-owner", "true"), wr(5, kA("a"), "p-owner", 1)),
			"reopens", `{"reopens": 1, "unchecked": 1, "unchecked_seqs": [4], "retired_writes": 1, "retired_write_seqs": [2]}`},
		{"FE-R-27/reassign", tr(ra(2, sc(), nil, nil, true), ra(1, sc(), nil, nil, 1), wr(3, kA("a"), nil, 1)),
			"reassignments", `{"reassignments": 2, "unchecked": 1, "unchecked_seqs": [1]}`},
		{"FE-R-29/order-of-classes", with(tr(wr(1, kA("a"), "p-owner", 1), wr(2, kA("b"), "p-owner", 1)), "snapshot", snap(se(kA("z"), 1), se(kA("Z"), 1), se(kA("a"), 2), se(kA(" a"), 1))),
			"replay", `{"extra": 1, "extra_indexes": [0], "duplicate": 2, "duplicate_indexes": [1, 3], "version": 1, "version_indexes": [2], "missing": 1, "missing_seqs": [2], "mismatches": 5, "snapshot_entries": 4, "live_slots": 2}`},
		{"FE-R-32/rounding", tr(fg(1, kA("a"), nil, env()), fg(2, kA("b"), nil, nil), fg(3, kA("c"), nil, nil), fg(4, kA("d"), nil, nil), fg(5, kA("e"), nil, nil), fg(6, kA("f"), nil, nil), fg(7, kA("g"), nil, nil), fg(8, kA("h"), nil, nil)),
			"forget_envelopes", `{"rate": {"numerator": 1, "denominator": 8, "value": "12.5%"}}`},
		{"FE-R-33/unattributed-events", tr(ra(1, sc(), nil, nil, nil), wr(2, kA("a"), nil, 1), wr(3, kA("a"), "p-owner", 1)),
			"coverage", `{"unattributed_events": 2, "principals": 2, "slots": 1}`},
		{"FE-R-35/no-table-assessable", without(tr(fg(1, kA("a"), nil, env())), "principals"),
			"reinserts_outside_envelope", `{"status": "ASSESSABLE", "reinserts": 0, "judged": 0, "unjudged": 0, "outside": 0, "outside_seqs": [], "silent": {"status": "NOT ASSESSABLE", "reason": "no principals: the export declares no principal table"}}`},
		{"FE-R-30/no-envelope", tr(fg(1, kA("a"), nil, nil)),
			"reinserts_outside_envelope", `{"status": "NOT ASSESSABLE", "reason": "no forget records an envelope"}`},
		{"FE-R-34/new-key", with(tr(fg(1, kA("a"), nil, env())), "reinsert_identity", "new_key"),
			"alias_reinserts", `{"status": "NOT ASSESSABLE", "reason": "trivially satisfied (the seed's words): the export declares that the store gives a re-added record a new key, so no write can reinsert into a forgotten key"}`},
		{"FE-R-34/terminal-first", with(tm(fg(1, kA("a"), nil, env())), "reinsert_identity", "new_key"),
			"reinserts_after_forget", `{"status": "NOT ASSESSABLE", "reason": "terminal-forget store: a write back into a retired key is counted as a retired-key write (factor reopens) and judged against its envelope (factor reinserts_outside_envelope)"}`},
	} {
		t.Run(tc.name, func(t *testing.T) { checkFactor(t, tc) })
	}
}

// TestNotAssessableCarriesNoNumber: FE-R-30, a NOT ASSESSABLE factor has exactly
// status and reason, and the verdict prints the literal words in its places.
func TestNotAssessableCarriesNoNumber(t *testing.T) {
	o := Expect(bodyOf(t, tm(wr(1, kA("a"), nil, 1))))
	for _, f := range FactorNames {
		fv := o.Audit.Factors[f]
		if fv["status"] == statusNotAssessable && len(fv) != 2 {
			t.Errorf("%s: NOT ASSESSABLE factor carries %d members", f, len(fv))
		}
		if o.Precheck.Factors[f]["status"] != fv["status"] || o.Precheck.Factors[f]["reason"] != fv["reason"] {
			t.Errorf("%s: pre-check and audit disagree on assessability", f)
		}
	}
	want := "FORGET ENVELOPE — events: 1 · forgets: 0 · with envelope: NOT ASSESSABLE · reinserts: NOT ASSESSABLE · outside envelope: NOT ASSESSABLE · alias reinserts: NOT ASSESSABLE · unchecked reopens: NOT ASSESSABLE · retired-key writes: NOT ASSESSABLE · unchecked reassignments: NOT ASSESSABLE · replay mismatches: NOT ASSESSABLE"
	if o.Audit.VerdictPrefix != want {
		t.Errorf("verdict\n got %s\nwant %s", o.Audit.VerdictPrefix, want)
	}
}

// TestCriteriaWords: every published word, reason, text, cap, refusal code, step
// and transition the oracle spells in Go equals the criteria file's. The criteria
// is read as data here only to catch drift; the oracle itself was written from
// the text.
func TestCriteriaWords(t *testing.T) {
	raw, err := os.ReadFile("../../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		CriteriaID       string            `yaml:"criteria_id"`
		CriteriaRevision string            `yaml:"criteria_revision"`
		Format           string            `yaml:"format"`
		Caps             map[string]int    `yaml:"caps"`
		Corpus           map[string]string `yaml:"corpus"`
		Words            map[string]string `yaml:"words"`
		Texts            map[string]string `yaml:"texts"`
		Refusals         []string          `yaml:"refusals"`
		Canonicalization []string          `yaml:"canonicalization"`
		Replay           struct {
			Modes map[string]map[string]map[string]string `yaml:"modes"`
		} `yaml:"replay"`
		Gates map[string][]struct {
			Reason string `yaml:"reason"`
		} `yaml:"gates"`
		FactGates map[string][]struct {
			Reason string `yaml:"reason"`
		} `yaml:"fact_gates"`
		DoesNotApply []struct {
			Reason string `yaml:"reason"`
		} `yaml:"does_not_apply"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if c.CriteriaID != CriteriaID || c.CriteriaRevision != CriteriaRevision || c.Corpus["id"] != CorpusID || c.Format != formatMutationLog {
		t.Errorf("identity drift: %s %s %s %s", c.CriteriaID, c.CriteriaRevision, c.Corpus["id"], c.Format)
	}
	if c.Caps["body_bytes"] != BodyBytesCap || c.Caps["events_per_audit"] != EventsCap || c.Caps["snapshot_entries"] != SnapshotCap || c.Caps["scope_dimensions"] != ScopeDimsCap || c.Caps["json_depth"] != maxDepth {
		t.Errorf("caps drift: %v", c.Caps)
	}
	if d := cmp.Diff(c.Refusals, RefusalRules[:len(RefusalRules)-1]); d != "" {
		t.Errorf("refusal order (-criteria +oracle):\n%s", d)
	}
	if d := cmp.Diff(c.Canonicalization, Canonicalization); d != "" {
		t.Errorf("canonicalization (-criteria +oracle):\n%s", d)
	}
	if d := cmp.Diff(c.Replay.Modes, transition, cmp.Comparer(func(a, b map[string]string) bool {
		return cmp.Equal(a, b, cmp.Comparer(func(x, y string) bool { return x == y })) || (len(a) == 0 && len(b) == 0)
	})); d != "" {
		t.Errorf("transitions (-criteria +oracle):\n%s", d)
	}
	if c.Texts["scope_text"] != ScopeStatement || c.Texts["honesty_line"] != HonestyLine {
		t.Errorf("scope or honesty text drift")
	}
	if c.Words["not_assessable"] != statusNotAssessable || c.Words["assessable"] != statusAssessable {
		t.Errorf("words drift")
	}
	// The verdict template with every placeholder but check_end filled the oracle's way.
	tmpl := c.Words["verdict"]
	if !strings.HasPrefix(tmpl, verdictHead+" — events: {events} · forgets: {forgets} · with envelope: {with_envelope}") || !strings.HasSuffix(tmpl, " — {check_end}") {
		t.Errorf("verdict template drift: %s", tmpl)
	}
	filled := strings.NewReplacer("{events}", "1", "{forgets}", "2", "{with_envelope}", "3", "{reinserts}", "4", "{outside}", "5",
		"{aliases}", "6", "{unchecked_reopens}", "7", "{retired_writes}", "8", "{unchecked_reassignments}", "9", "{mismatches}", "10",
		" — {check_end}", "").Replace(tmpl)
	if want := "FORGET ENVELOPE — events: 1 · forgets: 2 · with envelope: 3 · reinserts: 4 · outside envelope: 5 · alias reinserts: 6 · unchecked reopens: 7 · retired-key writes: 8 · unchecked reassignments: 9 · replay mismatches: 10"; filled != want {
		t.Errorf("verdict template order drift:\n%s", filled)
	}
	// The does-not-apply verdict (FE-R-38).
	dna := strings.NewReplacer("{events}", "1", "{forgets}", "2", "{does_not_apply}", reasonDoesNotApply, " — {check_end}", "").Replace(c.Words["verdict_does_not_apply"])
	if want := verdictPrefix(&Audit{Events: 1, Forgets: 2}, true); dna != want {
		t.Errorf("does-not-apply verdict drift:\n%s\n%s", dna, want)
	}
	reasons := map[string]bool{}
	for _, gs := range c.Gates {
		for _, g := range gs {
			reasons[g.Reason] = true
		}
	}
	for _, gs := range c.FactGates {
		for _, g := range gs {
			reasons[g.Reason] = true
		}
	}
	for _, g := range c.DoesNotApply {
		reasons[g.Reason] = true
	}
	for _, r := range []string{reasonNoForgets, reasonTerminal, reasonNewKeys, reasonNoPrincipals, reasonNoEnvelope, reasonTransitional,
		reasonNoReassigns, reasonNoSnapshot, reasonNoneJudged, reasonDoesNotApply} {
		if !reasons[r] {
			t.Errorf("reason not in the criteria: %q", r)
		}
		delete(reasons, r)
	}
	if len(reasons) != 0 {
		t.Errorf("criteria reasons the oracle does not know: %v", reasons)
	}
}
