package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// repo paths, relative to this package.
const (
	criteriaPath = "../../criteria.yaml"
	corpusPath   = "../../corpus"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run with -update)", name, err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// brokenCopy writes a copy of criteria.yaml with edits applied and returns its path.
func brokenCopy(t *testing.T, edits ...[2]string) string {
	t.Helper()
	src, err := os.ReadFile(criteriaPath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for _, e := range edits {
		if !strings.Contains(s, e[0]) {
			t.Fatalf("criteria.yaml no longer contains %q", e[0])
		}
		s = strings.Replace(s, e[0], e[1], 1)
	}
	path := filepath.Join(t.TempDir(), "criteria.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var breakages = [][2]string{
	{"when: record.superseded_by.set", "when: recrod.superseded_by.set"},
	{"when: cluster.malformed > 0", "when: cluster.malformd > 0"},
	{"eligible: \"!template && !source_passage\"", "eligible: \"!template && source_pasage\""},
}

func TestCheckGolden(t *testing.T) {
	code, out, _ := runCLI(t, "check", criteriaPath)
	if code != exitOK || !strings.Contains(out, "compiles") {
		t.Fatalf("check on the shipped criteria: exit %d, %s", code, out)
	}
	code, out, _ = runCLI(t, "check", brokenCopy(t, breakages...))
	if code != exitCheck {
		t.Fatalf("check on a broken copy: exit %d, want %d", code, exitCheck)
	}
	golden(t, "check-broken.txt", out)
	code, out, _ = runCLI(t, "check", "--json", brokenCopy(t, breakages...))
	if code != exitCheck {
		t.Fatalf("check --json: exit %d", code)
	}
	var problems []map[string]any
	if err := json.Unmarshal([]byte(out), &problems); err != nil || len(problems) != 3 {
		t.Fatalf("check --json: %v, %d problems:\n%s", err, len(problems), out)
	}
	for _, p := range problems {
		if p["line"].(float64) < 1 || p["column"].(float64) < 1 || p["path"] == "" {
			t.Errorf("problem without a position: %v", p)
		}
	}
}

// TestExitCodes: no false green. Compile failure and corpus failure are different exit codes, an
// empty run fails, a failing case fails.
func TestExitCodes(t *testing.T) {
	renamed := brokenCopy(t, [2]string{`"superseded", "deleted", "expired"] || record.state.str`, `"superseded", "deleted", "lapsed"] || record.state.str`})
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"usage/no-command", nil, exitUsage},
		{"usage/unknown-command", []string{"frobnicate"}, exitUsage},
		{"test/compile-failure", []string{"test", "--criteria", brokenCopy(t, breakages...), "--corpus", corpusPath}, exitCompile},
		{"test/empty-run", []string{"test", "--criteria", criteriaPath, "--corpus", corpusPath, "--run", "^no-such-case$"}, exitCorpus},
		{"test/failing-revision", []string{"test", "--criteria", renamed, "--corpus", corpusPath, "--run", "liveness|R-15"}, exitCorpus},
		{"test/missing-corpus", []string{"test", "--criteria", criteriaPath, "--corpus", t.TempDir()}, exitCorpus},
		{"audit/missing-file", []string{"audit", "--criteria", criteriaPath, "/no/such/export.json"}, exitInput},
		{"pin/ok", []string{"pin", "--criteria", criteriaPath, "--corpus", corpusPath}, exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != tc.want {
				t.Fatalf("rules %v: exit %d, want %d\nstdout: %s\nstderr: %s", tc.args, code, tc.want, out, errOut)
			}
		})
	}
}

func TestTestCommandReportsFieldDiffs(t *testing.T) {
	renamed := brokenCopy(t, [2]string{`"superseded", "deleted", "expired"] || record.state.str`, `"superseded", "deleted", "lapsed"] || record.state.str`})
	_, out, _ := runCLI(t, "test", "--criteria", renamed, "--corpus", corpusPath)
	if !strings.Contains(out, "FAIL ") || !strings.Contains(out, "expected:") || !strings.Contains(out, "got:") {
		t.Fatalf("a failing run must name cases and field-level diffs:\n%s", out)
	}
	last := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasSuffix(last[len(last)-1], "failed") || strings.Contains(last[len(last)-1], " 0 failed") {
		t.Fatalf("last line %q, want `N passed, M failed` with M > 0", last[len(last)-1])
	}
}

func TestAuditAndExplainLocally(t *testing.T) {
	export := filepath.Join(t.TempDir(), "export.json")
	body := `{"family":"mem0","form":"full_text","records":[
	 {"id":"a","content_text":"t","user_id":"u1"},{"id":"b","content_text":"t","user_id":"u2"}]}`
	if err := os.WriteFile(export, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "audit", "--criteria", criteriaPath, export)
	if code != exitOK || !strings.HasPrefix(out, "MEMORY SCOPE-HYGIENE — records: 2 · live: 2 · unscoped: 0.0% · undeclared cross-scope clusters: 1 · conflicts: NOT ASSESSABLE · live duplicates: 0 — ") {
		t.Fatalf("audit: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "explain", "--criteria", criteriaPath, export)
	if code != exitOK || !strings.Contains(out, "→ B2") {
		t.Fatalf("explain must show the deciding precedence rule: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "precheck", "--json", "--criteria", criteriaPath, export)
	if code != exitOK || !strings.Contains(out, `"kind": "precheck_result"`) {
		t.Fatalf("precheck --json: exit %d\n%s", code, out)
	}
}

func TestDiffNamesChangedCases(t *testing.T) {
	renamed := brokenCopy(t, [2]string{`"superseded", "deleted", "expired"] || record.state.str`, `"superseded", "deleted", "lapsed"] || record.state.str`})
	code, out, errOut := runCLI(t, "diff", "--corpus", corpusPath, criteriaPath, renamed)
	if code != exitOK || !strings.Contains(out, "CHANGED ") || strings.Contains(out, "\n0 of ") {
		t.Fatalf("diff of a revision with a renamed state: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "diff", "--corpus", corpusPath, criteriaPath, criteriaPath)
	if code != exitOK || !strings.Contains(out, "0 of ") || strings.Contains(out, "CHANGED") {
		t.Fatalf("diff of a file with itself must change nothing: exit %d\n%s", code, out)
	}
}
