package mutlog_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The exact reasons of revision 1.0.1 (docs/forget-envelope.md).
const (
	reasonNoneJudged = "none judged: no reinsert has both a recorded envelope and a principal"
	reasonNoTable    = "no principals: the export declares no principal table"
	reasonTerminal   = "terminal-forget store: a write back into a retired key is counted as a retired-key write (factor reopens) and judged against its envelope (factor reinserts_outside_envelope)"
	reasonNewKey     = "trivially satisfied (the seed's words): the export declares that the store gives a re-added record a new key, so no write can reinsert into a forgotten key"
	reasonDNA        = "does not apply: the export declares a tombstone-only store whose audit log is the sole source of truth, which the seed excludes from these rules"
)

// feLog builds a one-dimension log from compact events: "w K p" writes key K by principal p ("-"
// for none), "f K p1,p2" forgets K with that envelope ("f K" without one), "o K" reopens K
// unchecked.
func feLog(mode string, table []string, extra map[string]any, evs ...string) []byte {
	var events []any
	for i, e := range evs {
		f := strings.Fields(e)
		ev := map[string]any{"seq": i + 1, "key": map[string]any{"scope": map[string]any{"t": "A"}, "name": f[1]}}
		switch f[0] {
		case "w":
			ev["op"], ev["version"] = "write", i+1
			if f[2] != "-" {
				ev["principal"] = f[2]
			}
		case "f":
			ev["op"] = "forget"
			if len(f) > 2 {
				ev["envelope"] = strings.Split(f[2], ",")
			}
		case "o":
			ev["op"] = "reopen"
		}
		events = append(events, ev)
	}
	m := map[string]any{"format": "mutation-log", "forget_mode": mode, "scope_dimensions": []any{"t"}, "events": events}
	if table != nil {
		var ps []any
		for _, id := range table {
			ps = append(ps, map[string]any{"id": id, "grants": []any{map[string]any{"t": "A"}}})
		}
		m["principals"] = ps
	}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// auditJSON runs the audit under a criteria file and returns the report as generic JSON.
func auditJSON(t *testing.T, ms *rules.MutLogSet, body []byte) map[string]any {
	t.Helper()
	rep, ref, err := mutlog.Audit(ms, body, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	if err != nil || ref != nil {
		t.Fatalf("audit: %v %+v", err, ref)
	}
	b, _ := json.Marshal(rep)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func criteria100(t *testing.T) *rules.MutLogSet {
	t.Helper()
	src, err := os.ReadFile("../../rules/testdata/forget-envelope-1.0.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := rules.LoadMutationLog("forget-envelope-1.0.0.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func factor(m map[string]any, name string) map[string]any {
	return m["factors"].(map[string]any)[name].(map[string]any)
}

func notAssessable(reason string) map[string]any {
	return map[string]any{"status": "NOT ASSESSABLE", "reason": reason}
}

// TestRevision101Readings: each reading of 1.0.1, by rule id, against the revision's criteria, and
// what 1.0.0 printed for the same log (the defect the reading corrects).
func TestRevision101Readings(t *testing.T) {
	ms, _ := setup(t)
	old := criteria100(t)
	for _, tc := range []struct {
		name      string
		body      []byte
		factor    string
		want      map[string]any // members of the factor under 1.0.1
		verdict   string         // a fragment of the 1.0.1 verdict line
		oldFactor map[string]any // members of the factor under 1.0.0
	}{
		{"FE-R-35/outside-without-table", feLog("transitional", nil, nil, "w n p1", "f n p1", "w n p2"),
			"reinserts_outside_envelope",
			map[string]any{"status": "ASSESSABLE", "judged": 1.0, "unjudged": 0.0, "outside": 1.0, "outside_seqs": []any{3.0}, "silent": notAssessable(reasonNoTable)},
			"outside envelope: 1 ·", notAssessable(reasonNoTable)},
		{"FE-R-35/silent-with-table", feLog("transitional", []string{"p1", "p2"}, nil, "w n p1", "f n p1", "w n p2"),
			"reinserts_outside_envelope",
			map[string]any{"outside": 1.0, "silent": 1.0, "silent_seqs": []any{3.0}},
			"outside envelope: 1 ·", map[string]any{"outside": 1.0, "silent": 1.0}},
		{"FE-R-36/terminal-retired-write-judged", feLog("terminal", nil, nil, "w n p1", "f n p1", "w n p2"),
			"reinserts_outside_envelope",
			map[string]any{"status": "ASSESSABLE", "reinserts": 1.0, "outside": 1.0, "outside_seqs": []any{3.0}},
			"outside envelope: 1 ·", notAssessable("terminal-forget store: a forgotten key is retired and comes back only through reopen (factor reopens)")},
		{"FE-R-36/terminal-reason", feLog("terminal", nil, nil, "w n p1", "f n p1", "w n p2"),
			"reinserts_after_forget", notAssessable(reasonTerminal), "retired-key writes: 1 ·",
			notAssessable("terminal-forget store: a forgotten key is retired and comes back only through reopen (factor reopens)")},
		{"FE-R-36/terminal-reopen-then-write-is-no-reinsert", feLog("terminal", nil, nil, "w n p1", "f n p1", "o n", "w n p2"),
			"reinserts_outside_envelope",
			map[string]any{"reinserts": 0.0, "judged": 0.0, "outside": 0.0, "outside_seqs": []any{}},
			"outside envelope: 0 ·", notAssessable("terminal-forget store: a forgotten key is retired and comes back only through reopen (factor reopens)")},
		{"FE-R-37/none-judged-no-envelope", feLog("transitional", []string{"p1", "p2"}, nil, "w a p1", "f a", "f b p1", "w a p2"),
			"reinserts_outside_envelope",
			map[string]any{"reinserts": 1.0, "no_envelope": 1.0, "judged": 0.0, "unjudged": 1.0, "outside": notAssessable(reasonNoneJudged), "silent": notAssessable(reasonNoneJudged)},
			"outside envelope: NOT ASSESSABLE ·", map[string]any{"outside": 0.0}},
		{"FE-R-37/none-judged-unattributed", feLog("transitional", []string{"p1"}, nil, "w a p1", "f a p1", "w a -"),
			"reinserts_outside_envelope",
			map[string]any{"unattributed": 1.0, "judged": 0.0, "outside": notAssessable(reasonNoneJudged)},
			"outside envelope: NOT ASSESSABLE ·", map[string]any{"outside": 0.0}},
		{"FE-R-37/partly-judged-prints-the-count", feLog("transitional", []string{"p1", "p9"}, nil, "w a p1", "f a p1", "w a p1", "f b", "w b p9"),
			"reinserts_outside_envelope",
			map[string]any{"reinserts": 2.0, "judged": 1.0, "unjudged": 1.0, "outside": 0.0, "outside_seqs": []any{}},
			"outside envelope: 0 ·", map[string]any{"outside": 0.0}},
		{"FE-R-38/tombstone-only-does-not-apply", feLog("transitional", nil, map[string]any{"forget_semantics": "tombstone_only"}, "w n p1", "f n p1", "w n p2"),
			"forget_envelopes", notAssessable(reasonDNA), "forgets: 1 · " + reasonDNA + " — ",
			map[string]any{"status": "ASSESSABLE"}},
		{"FE-R-38/other-value-declares-nothing", feLog("transitional", nil, map[string]any{"forget_semantics": "TOMBSTONE_ONLY"}, "w n p1", "f n p1", "w n p2"),
			"forget_envelopes", map[string]any{"status": "ASSESSABLE"}, "with envelope: 100.0% ·",
			map[string]any{"status": "ASSESSABLE"}},
		{"FE-R-39/new-key-trivially-satisfied", feLog("transitional", nil, map[string]any{"reinsert_identity": "new_key"}, "w n p1", "f n p1"),
			"alias_reinserts", notAssessable(reasonNewKey), "alias reinserts: NOT ASSESSABLE ·",
			notAssessable("reinserts not observable: the export declares that the store gives a re-added record a new key")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			every(t, tc.body) // schema-valid answers
			got := auditJSON(t, ms, tc.body)
			f := factor(got, tc.factor)
			for k, v := range tc.want {
				if b1, b2 := jsonText(f[k]), jsonText(v); b1 != b2 {
					t.Errorf("1.0.1 %s.%s = %s, want %s", tc.factor, k, b1, b2)
				}
			}
			if _, has := f["outside_seqs"]; has && tc.want["outside"] != nil && jsonText(tc.want["outside"])[0] == '{' {
				t.Errorf("a NOT ASSESSABLE outside keeps its seqs")
			}
			if !strings.Contains(got["verdict_line"].(string), tc.verdict) {
				t.Errorf("verdict %q lacks %q", got["verdict_line"], tc.verdict)
			}
			before := factor(auditJSON(t, old, tc.body), tc.factor)
			for k, v := range tc.oldFactor {
				if b1, b2 := jsonText(before[k]), jsonText(v); b1 != b2 {
					t.Errorf("1.0.0 %s.%s = %s, the test expects %s", tc.factor, k, b1, b2)
				}
			}
		})
	}
}

// TestDoesNotApplyEverywhere: every factor of a tombstone-only log, audit and pre-check, says the
// rules do not apply, and the verdict line carries no figure but the two counts.
func TestDoesNotApplyEverywhere(t *testing.T) {
	ms, _ := setup(t)
	body := feLog("terminal", []string{"p1"}, map[string]any{"forget_semantics": "tombstone_only"}, "w n p1", "f n p1", "w n p1")
	got := auditJSON(t, ms, body)
	pre, _, err := mutlog.Precheck(ms, body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rules.MutLogFactors {
		if b := jsonText(factor(got, f)); b != jsonText(notAssessable(reasonDNA)) {
			t.Errorf("audit %s = %s", f, b)
		}
		if pre.Factors[f].Reason != reasonDNA {
			t.Errorf("pre-check %s = %+v", f, pre.Factors[f])
		}
	}
	want := "FORGET ENVELOPE — events: 3 · forgets: 1 · " + reasonDNA + " — 2026-12-01T09:00:00Z"
	if got["verdict_line"] != want {
		t.Errorf("verdict %q, want %q", got["verdict_line"], want)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
