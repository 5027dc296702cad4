package forget

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Revision 1.0.1's readings (FE-R-35 … FE-R-39), each checked on the examples the
// readings give, every member derived by hand from their text.

const (
	wantNoneJudged = `{"status": "NOT ASSESSABLE", "reason": "none judged: no reinsert has both a recorded envelope and a principal"}`
	wantNoTable    = `{"status": "NOT ASSESSABLE", "reason": "no principals: the export declares no principal table"}`
	wantTerminal   = `{"status": "NOT ASSESSABLE", "reason": "terminal-forget store: a write back into a retired key is counted as a retired-key write (factor reopens) and judged against its envelope (factor reinserts_outside_envelope)"}`
	wantNewKey     = `{"status": "NOT ASSESSABLE", "reason": "trivially satisfied (the seed's words): the export declares that the store gives a re-added record a new key, so no write can reinsert into a forgotten key"}`
	wantDNA        = `{"status": "NOT ASSESSABLE", "reason": "does not apply: the export declares a tombstone-only store whose audit log is the sole source of truth, which the seed excludes from these rules"}`
)

// logT is a log over the one dimension t with no principal table.
func logT(mode string, events ...obj) obj {
	return with(log3(mode, events...), "scope_dimensions", []any{"t"})
}

func kT(name string) obj { return k(sc("t", "A"), name) }

// tableT gives p1 and p2 a grant covering t:A.
var tableT = table(pr("p1", sc("t", "A")), pr("p2", sc("t", "A")))

// revisionCase compares whole factors (every member) and, when set, the verdict
// prefix's middle part.
type revisionCase struct {
	name    string
	body    obj
	factors map[string]string // factor name -> the whole factor as JSON
	verdict string            // a substring the verdict prefix must contain
}

func checkRevision(t *testing.T, tc revisionCase) {
	t.Helper()
	o := Expect(bodyOf(t, tc.body))
	if o.Refusal != nil {
		t.Fatalf("refused: %+v", *o.Refusal)
	}
	for f, w := range tc.factors {
		if d := cmp.Diff(parse(t, w), generic(t, o.Audit.Factors[f])); d != "" {
			t.Errorf("%s (-want +got):\n%s", f, d)
		}
		// The pre-check states the factor's status only; member gates are not shown.
		pre := generic(t, o.Precheck.Factors[f]).(map[string]any)
		want := parse(t, w).(map[string]any)
		if pre["status"] != want["status"] || pre["reason"] != want["reason"] || len(pre) > 2 {
			t.Errorf("%s: pre-check %v", f, pre)
		}
	}
	if !strings.Contains(o.Audit.VerdictPrefix, tc.verdict) {
		t.Errorf("verdict %q does not contain %q", o.Audit.VerdictPrefix, tc.verdict)
	}
}

func TestRevision101(t *testing.T) {
	r := "reinserts_outside_envelope"
	for _, tc := range []revisionCase{
		// FE-R-35: no table; outside is counted, silent needs the table.
		{"FE-R-35/ex1-no-table-outside-counted", logT("transitional",
			wr(1, kT("n"), "p1", 1), fg(2, kT("n"), "p1", env("p1")), wr(3, kT("n"), "p2", 2)),
			map[string]string{r: `{"status": "ASSESSABLE", "reinserts": 1, "checked": 1, "no_envelope": 0, "unattributed": 0,
				"unattributed_seqs": [], "judged": 1, "unjudged": 0, "outside": 1, "outside_seqs": [3], "silent": ` + wantNoTable + `}`},
			"· outside envelope: 1 ·"},
		{"FE-R-35/ex2-with-table-silent", with(logT("transitional",
			wr(1, kT("n"), "p1", 1), fg(2, kT("n"), "p1", env("p1")), wr(3, kT("n"), "p2", 2)), "principals", tableT),
			map[string]string{r: `{"status": "ASSESSABLE", "reinserts": 1, "checked": 1, "no_envelope": 0, "unattributed": 0,
				"unattributed_seqs": [], "judged": 1, "unjudged": 0, "outside": 1, "outside_seqs": [3], "silent": 1, "silent_seqs": [3]}`},
			"· outside envelope: 1 ·"},
		{"FE-R-35/ex3-inside", logT("transitional",
			wr(1, kT("n"), "p1", 1), fg(2, kT("n"), "p1", env("p1")), wr(3, kT("n"), "p1", 2)),
			map[string]string{r: `{"status": "ASSESSABLE", "reinserts": 1, "checked": 1, "no_envelope": 0, "unattributed": 0,
				"unattributed_seqs": [], "judged": 1, "unjudged": 0, "outside": 0, "outside_seqs": [], "silent": ` + wantNoTable + `}`},
			"· outside envelope: 0 ·"},
		// FE-R-36: terminal retired-key writes are judged against their envelope.
		{"FE-R-36/ex1-terminal-retired-write-judged", logT("terminal",
			wr(1, kT("n"), "p1", 1), fg(2, kT("n"), nil, env("p1")), wr(3, kT("n"), "p2", 2)),
			map[string]string{
				"reopens": `{"status": "ASSESSABLE", "reopens": 0, "unchecked": 0, "unchecked_seqs": [], "retired_writes": 1, "retired_write_seqs": [3]}`,
				r: `{"status": "ASSESSABLE", "reinserts": 1, "checked": 1, "no_envelope": 0, "unattributed": 0,
					"unattributed_seqs": [], "judged": 1, "unjudged": 0, "outside": 1, "outside_seqs": [3], "silent": ` + wantNoTable + `}`,
				"reinserts_after_forget": wantTerminal, "alias_reinserts": wantTerminal},
			"· reinserts: NOT ASSESSABLE · outside envelope: 1 · alias reinserts: NOT ASSESSABLE · unchecked reopens: 0 · retired-key writes: 1 ·"},
		{"FE-R-36/ex2-reopen-then-write-not-reinsert", logT("terminal",
			wr(1, kT("n"), "p1", 1), fg(2, kT("n"), nil, env("p1")), ro(3, kT("n"), nil, true), wr(4, kT("n"), "p2", 2)),
			map[string]string{
				"reopens": `{"status": "ASSESSABLE", "reopens": 1, "unchecked": 0, "unchecked_seqs": [], "retired_writes": 0, "retired_write_seqs": []}`,
				r: `{"status": "ASSESSABLE", "reinserts": 0, "checked": 0, "no_envelope": 0, "unattributed": 0,
					"unattributed_seqs": [], "judged": 0, "unjudged": 0, "outside": 0, "outside_seqs": [], "silent": ` + wantNoTable + `}`},
			"· outside envelope: 0 ·"},
		{"FE-R-36/ex3-terminal-no-envelope", logT("terminal",
			wr(1, kT("n"), "p1", 1), fg(2, kT("n"), nil, nil), wr(3, kT("n"), "p2", 2)),
			map[string]string{r: `{"status": "NOT ASSESSABLE", "reason": "no forget records an envelope"}`},
			"· outside envelope: NOT ASSESSABLE ·"},
		// FE-R-37: never a zero where nothing was judged.
		{"FE-R-37/ex1-no-envelope-on-the-governing-forget", with(logT("transitional",
			wr(1, kT("a"), "p1", 1), fg(2, kT("a"), nil, nil), fg(3, kT("b"), nil, env("p1")), wr(4, kT("a"), "p2", 2)), "principals", tableT),
			map[string]string{r: `{"status": "ASSESSABLE", "reinserts": 1, "checked": 0, "no_envelope": 1, "unattributed": 0,
				"unattributed_seqs": [], "judged": 0, "unjudged": 1, "outside": ` + wantNoneJudged + `, "silent": ` + wantNoneJudged + `}`},
			"· outside envelope: NOT ASSESSABLE ·"},
		{"FE-R-37/ex2-unattributed", with(logT("transitional",
			wr(1, kT("a"), "p1", 1), fg(2, kT("a"), nil, env("p1")), wr(3, kT("a"), nil, 2)), "principals", tableT),
			map[string]string{r: `{"status": "ASSESSABLE", "reinserts": 1, "checked": 1, "no_envelope": 0, "unattributed": 1,
				"unattributed_seqs": [3], "judged": 0, "unjudged": 1, "outside": ` + wantNoneJudged + `, "silent": ` + wantNoneJudged + `}`},
			"· outside envelope: NOT ASSESSABLE ·"},
		{"FE-R-37/ex2-unattributed-no-table", logT("transitional",
			wr(1, kT("a"), "p1", 1), fg(2, kT("a"), nil, env("p1")), wr(3, kT("a"), nil, 2)),
			map[string]string{r: `{"status": "ASSESSABLE", "reinserts": 1, "checked": 1, "no_envelope": 0, "unattributed": 1,
				"unattributed_seqs": [3], "judged": 0, "unjudged": 1, "outside": ` + wantNoneJudged + `, "silent": ` + wantNoneJudged + `}`},
			"· outside envelope: NOT ASSESSABLE ·"},
		{"FE-R-37/ex3-one-judged", with(logT("transitional",
			wr(1, kT("a"), "p1", 1), fg(2, kT("a"), nil, env("p1")), wr(3, kT("a"), "p1", 2), fg(4, kT("b"), nil, nil), wr(5, kT("b"), "p9", 1)),
			"principals", table(pr("p1", sc("t", "A")), pr("p9"))),
			map[string]string{r: `{"status": "ASSESSABLE", "reinserts": 2, "checked": 1, "no_envelope": 1, "unattributed": 0,
				"unattributed_seqs": [], "judged": 1, "unjudged": 1, "outside": 0, "outside_seqs": [], "silent": 0, "silent_seqs": []}`},
			"· outside envelope: 0 ·"},
		// FE-R-38: a declared tombstone-only store: the rules do not apply.
		{"FE-R-38/ex1-tombstone-only", with(logT("transitional",
			wr(1, kT("n"), "p1", 1), fg(2, kT("n"), nil, env("p1")), wr(3, kT("n"), "p2", 2)), "forget_semantics", "tombstone_only"),
			map[string]string{"forget_envelopes": wantDNA, "reinserts_after_forget": wantDNA, r: wantDNA, "alias_reinserts": wantDNA,
				"reopens": wantDNA, "reassignments": wantDNA, "replay": wantDNA},
			"FORGET ENVELOPE — events: 3 · forgets: 1 · does not apply: the export declares a tombstone-only store whose audit log is the sole source of truth, which the seed excludes from these rules"},
		{"FE-R-38/ex2-other-value-declares-nothing", with(logT("transitional",
			wr(1, kT("n"), "p1", 1), fg(2, kT("n"), nil, env("p1")), wr(3, kT("n"), "p2", 2)), "forget_semantics", "TOMBSTONE_ONLY"),
			map[string]string{"reinserts_after_forget": `{"status": "ASSESSABLE", "reinserts": 1, "seqs": [3]}`},
			"· outside envelope: 1 ·"},
		{"FE-R-38/ex3-terminal-and-new-key-yield", with(logT("terminal",
			wr(1, kT("n"), "p1", 1), fg(2, kT("n"), nil, env("p1"))), "forget_semantics", "tombstone_only", "reinsert_identity", "new_key"),
			map[string]string{"forget_envelopes": wantDNA, "reinserts_after_forget": wantDNA, r: wantDNA, "alias_reinserts": wantDNA,
				"reopens": wantDNA, "reassignments": wantDNA, "replay": wantDNA},
			"· forgets: 1 · does not apply:"},
		// FE-R-39: the new-key reason; terminal comes first for two factors only.
		{"FE-R-39/ex1-new-key", with(logT("transitional", fg(1, kT("n"), nil, env("p1"))), "reinsert_identity", "new_key"),
			map[string]string{"reinserts_after_forget": wantNewKey, r: wantNewKey, "alias_reinserts": wantNewKey},
			"· reinserts: NOT ASSESSABLE · outside envelope: NOT ASSESSABLE · alias reinserts: NOT ASSESSABLE ·"},
		{"FE-R-39/ex2-terminal-new-key", with(logT("terminal", fg(1, kT("n"), nil, env("p1"))), "reinsert_identity", "new_key"),
			map[string]string{"reinserts_after_forget": wantTerminal, r: wantNewKey, "alias_reinserts": wantTerminal},
			"· unchecked reopens: 0 ·"},
		{"FE-R-39/ex3-new-key-before-no-forgets", with(logT("transitional", wr(1, kT("n"), "p1", 1)), "reinsert_identity", "new_key"),
			map[string]string{"reinserts_after_forget": wantNewKey, r: wantNewKey, "alias_reinserts": wantNewKey,
				"forget_envelopes": `{"status": "NOT ASSESSABLE", "reason": "no forget events in the log"}`},
			"· with envelope: NOT ASSESSABLE ·"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkRevision(t, tc) })
	}
}

// TestDoesNotApplyKeepsCoverage: FE-R-38, the coverage block still says what the
// log holds.
func TestDoesNotApplyKeepsCoverage(t *testing.T) {
	o := Expect(bodyOf(t, with(logT("transitional",
		wr(1, kT("n"), "p1", 1), fg(2, kT("n"), nil, env("p1")), wr(3, kT("N"), "p2", 2)), "forget_semantics", "tombstone_only")))
	want := parse(t, `{"scope_dimensions": ["t"], "canonicalization": ["trim_ascii_space", "ascii_lower"], "slots": 1,
		"aliased_slots": 1, "forgets_of_not_live": 0, "reopens_ineffective": 0, "unattributed_events": 1, "principals": 0, "live_slots": 1}`)
	if d := cmp.Diff(want, generic(t, o.Audit.Coverage)); d != "" {
		t.Errorf("coverage (-want +got):\n%s", d)
	}
	if o.Audit.Events != 3 || o.Audit.Forgets != 1 || o.Audit.ForgetMode != "transitional" {
		t.Errorf("top-level counts %d %d %s", o.Audit.Events, o.Audit.Forgets, o.Audit.ForgetMode)
	}
}
