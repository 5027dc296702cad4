package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	wholeLogParts = "testdata/whole-log"
	forgetCrit    = "../../criteria/forget-envelope.yaml"
)

// TestWholeLogGoldens: a log whose forget is in part 1 and whose reinsert is in part 2, in words
// and as JSON: the first and last lines state the mode in the criteria's own words, and the
// reinsert is found (testdata/*.golden; run with -update to rewrite). Each part alone finds none.
func TestWholeLogGoldens(t *testing.T) {
	code, out, errOut := runCLI(t, "audit", "--whole", "--criteria", forgetCrit, wholeLogParts)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "audit-whole-log.golden", checkEnd.ReplaceAllString(out, "<check-end>"))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	first, last := lines[0], lines[len(lines)-1]
	want := "local whole-log check beyond the published caps — not a signed memory-forget-envelope/v1 audit. It is never a certification of the store"
	if first != last || !strings.HasPrefix(first, want) {
		t.Fatalf("first and last lines must state the mode:\n%s\n%s", first, last)
	}
	code, out, _ = runCLI(t, "audit", "--whole", "--json", "--criteria", forgetCrit, wholeLogParts)
	if code != exitOK {
		t.Fatalf("--json: exit %d", code)
	}
	golden(t, "audit-whole-log-json.golden", checkEnd.ReplaceAllString(out, "<check-end>"))
	var w struct {
		Mode    string `json:"mode"`
		Closing string `json:"closing"`
		Parts   []wholeLogPart
		Report  struct {
			Factors struct {
				Reinserts struct {
					Reinserts int     `json:"reinserts"`
					Seqs      []int64 `json:"seqs"`
				} `json:"reinserts_after_forget"`
			} `json:"factors"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatal(err)
	}
	if w.Report.Factors.Reinserts.Reinserts != 1 || len(w.Parts) != 2 || !strings.HasPrefix(w.Closing, w.Mode) {
		t.Fatalf("the parts as one log: %+v", w)
	}
	for _, p := range []string{"log.part1.json", "log.part2.json"} {
		_, out, _ := runCLI(t, "audit", "--criteria", forgetCrit, filepath.Join(wholeLogParts, p))
		if !strings.Contains(out, "reinserts: NOT ASSESSABLE") && !strings.Contains(out, "reinserts: 0 ") {
			t.Fatalf("%s alone must find no reinsert:\n%s", p, out)
		}
	}
}

// TestWholeLogRefusal: a refusal of the mode's own is said in words, with its part, between the
// two statements, and exits as a refused input.
func TestWholeLogRefusal(t *testing.T) {
	dir := t.TempDir()
	one, err := os.ReadFile(filepath.Join(wholeLogParts, "log.part1.json"))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.NewReplacer("transitional", "terminal", `"seq":1,`, `"seq":11,`, `"seq":2,`, `"seq":12,`).Replace(string(one))
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := os.WriteFile(a, one, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "audit", "--whole", "--criteria", forgetCrit, a, b)
	if code != exitInput {
		t.Fatalf("exit %d, want %d:\n%s", code, exitInput, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != lines[len(lines)-1] || !strings.Contains(out, "REFUSED (free): whole_header_differs, in part 2 ("+b+")") ||
		!strings.Contains(out, "a rule of the whole-log mode, not of the criteria") {
		t.Fatalf("refusal in words:\n%s", out)
	}
	code, out, _ = runCLI(t, "audit", "--whole", "--json", "--criteria", forgetCrit, a, b)
	var w wholeLogJSON
	if code != exitInput || json.Unmarshal([]byte(out), &w) != nil || w.Refused == nil || w.Refused.Part != 2 || w.Report != nil {
		t.Fatalf("--json refusal: exit %d\n%s", code, out)
	}
}
