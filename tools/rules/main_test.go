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
	if code != exitOK || !strings.Contains(out, " -> ") || strings.Contains(out, ": 0 of ") {
		t.Fatalf("diff of a revision with a renamed state: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "diff", "--corpus", corpusPath, criteriaPath, criteriaPath)
	if code != exitOK || !strings.HasPrefix(out, "\n1.0.1 -> 1.0.1: 0 of ") {
		t.Fatalf("diff of a file with itself must change nothing: exit %d\n%s", code, out)
	}
}

// criteria100 is the published 1.0.0 criteria file, kept to check what revision 1.0.1 changes.
const criteria100 = "../../rules/testdata/criteria-1.0.0.yaml"

// TestDiffRevision101 runs `rules diff` between criteria 1.0.0 and the serving 1.0.1 and asserts
// the exact list of corpus cases whose outcome changes (issue 11): the regression cases of the
// six corrections, the edge case that pinned the old M4 depth reading, and the generated Zep Cloud
// case with one live graph. Every other case keeps its outcome.
func TestDiffRevision101(t *testing.T) {
	code, out, errOut := runCLI(t, "diff", "--corpus", corpusPath, criteria100, criteriaPath)
	if code != exitOK {
		t.Fatalf("diff: exit %d\n%s%s", code, out, errOut)
	}
	want := []string{
		"L-4-templates-in-duplicates-and-size",
		"R-52-declared-content_text-refused-mem0",
		"R-52-declared-content_hash-refused-zep",
		"R-52-declared-content-field-refused-letta",
		"R-52-declared-other-form-content-field-refused-generic",
		"R-53-zep_cloud-one-live-graph-plus-global",
		"R-53-zep_cloud-one-live-graph-plus-deleted",
		"R-32-group_id-non-string-conflicts",
		"R-33-letta-m4-depth-excludes-templates",
		"scope_presence-gen-001",
	}
	_, summary, ok := strings.Cut(out, "\n1.0.0 -> 1.0.1: ")
	if !ok {
		t.Fatalf("no summary line:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(summary), "\n")
	if !strings.HasPrefix(lines[0], "10 of ") {
		t.Fatalf("summary %q, want 10 changed cases", lines[0])
	}
	var got []string
	for _, l := range lines[1:] {
		got = append(got, strings.TrimSpace(l))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changed cases:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// One line per changed field: `case  field  old -> new`.
	for _, l := range []string{
		"R-32-group_id-non-string-conflicts  audit.factors.scope_conflicts.conflicts  0 -> 1",
		"R-52-declared-content_text-refused-mem0  refusal  (absent) -> refused declared_scope_keys_invalid",
		"R-53-zep_cloud-one-live-graph-plus-global  audit.factors.cross_scope_clusters.status  ASSESSABLE -> NOT ASSESSABLE",
		"R-33-letta-m4-depth-excludes-templates  audit.factors.cross_scope_clusters.clusters[0].decided_by  B1 -> N2",
	} {
		if !strings.Contains(out, "\n"+l+"\n") && !strings.HasPrefix(out, l+"\n") {
			t.Errorf("diff lacks the line %q", l)
		}
	}
	// The marked share is a new coverage field, not an outcome: it never changes a case alone.
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "  audit.coverage.marked_share") && !strings.HasPrefix(l, "R-33-") && !strings.HasPrefix(l, "L-4-") {
			t.Errorf("coverage-only change: %s", l)
		}
	}
}

// goSyntax are fragments that only Go's fmt prints: maps, structs, typed values.
var goSyntax = []string{"map[", "]any{", "{Letta:", "float64(", "string(", "bool(", "%!", "&{", "<nil>"}

// TestOutputsSpeakWords: audit, precheck, explain and diff print words and tables, never Go syntax.
func TestOutputsSpeakWords(t *testing.T) {
	cases := filepath.Join(corpusPath, "cases")
	outputs := map[string]string{}
	for _, c := range []string{"R-33-letta-m4-depth-excludes-templates", "R-53-zep_cloud-one-live-graph-plus-global", "R-32-group_id-non-string-conflicts"} {
		for _, cmd := range []string{"audit", "precheck", "explain"} {
			_, out, errOut := runCLI(t, cmd, "--criteria", criteriaPath, filepath.Join(cases, c+".json"))
			outputs[cmd+" "+c] = out + errOut
		}
	}
	_, out, _ := runCLI(t, "diff", "--corpus", corpusPath, criteria100, criteriaPath)
	outputs["diff"] = out
	for name, out := range outputs {
		if out == "" {
			t.Fatalf("%s printed nothing", name)
		}
		for _, g := range goSyntax {
			if strings.Contains(out, g) {
				t.Errorf("%s prints Go syntax %q:\n%s", name, g, out)
			}
		}
	}
	if !strings.Contains(outputs["explain R-33-letta-m4-depth-excludes-templates"], "broken_pointers        1") {
		t.Errorf("explain must list cluster facts by their criteria names:\n%s", outputs["explain R-33-letta-m4-depth-excludes-templates"])
	}
	if !strings.Contains(outputs["audit R-53-zep_cloud-one-live-graph-plus-global"], "M3 declared but absent: global_scopes 0") {
		t.Errorf("audit coverage must be words:\n%s", outputs["audit R-53-zep_cloud-one-live-graph-plus-global"])
	}
}

// TestInputs: every command takes a file, - for standard input, or a corpus case file; `audit`
// compares a corpus case with its expected output (exit 4 when it differs).
func TestInputs(t *testing.T) {
	caseFile := filepath.Join(corpusPath, "cases", "R-32-group_id-non-string-conflicts.json")
	code, out, _ := runCLI(t, "audit", "--criteria", criteriaPath, caseFile)
	if code != exitOK || !strings.Contains(out, "corpus case R-32-group_id-non-string-conflicts: the engine gives the expected output") {
		t.Fatalf("audit of a corpus case: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "audit", "--criteria", criteria100, caseFile)
	if code != exitCorpus || !strings.Contains(out, "audit.factors.scope_conflicts.conflicts  expected 1  got 0") {
		t.Fatalf("a 1.0.1 case under 1.0.0 must differ: exit %d\n%s", code, out)
	}
	refused := filepath.Join(corpusPath, "cases", "R-52-declared-content-field-refused-letta.json")
	code, out, _ = runCLI(t, "audit", "--criteria", criteriaPath, refused)
	if code != exitOK || !strings.Contains(out, "REFUSED (free, no payment): declared_scope_keys_invalid") {
		t.Fatalf("a case expecting a refusal passes: exit %d\n%s", code, out)
	}
	defer func() { stdin = os.Stdin }()
	src, err := os.ReadFile(criteriaPath)
	if err != nil {
		t.Fatal(err)
	}
	stdin = strings.NewReader(strings.Replace(string(src), "when: record.replaced_by.set", "when: record.replaced_by.sett", 1))
	code, out, _ = runCLI(t, "check", "-")
	if code != exitCheck || !strings.HasPrefix(out, "stdin:") || !strings.Contains(out, "undefined field 'sett'") {
		t.Fatalf("check from stdin: exit %d\n%s", code, out)
	}
	stdin = strings.NewReader(`{"family":"generic","form":"full_text","records":[{"id":"a","content_text":"t"}]}`)
	code, out, _ = runCLI(t, "precheck", "--criteria", criteriaPath, "-")
	if code != exitOK || !strings.HasPrefix(out, "PRE-CHECK memory-scope-hygiene/v1") {
		t.Fatalf("precheck from stdin: exit %d\n%s", code, out)
	}
}

// TestExitCodeOnStderr: a non-zero exit says its code and meaning on stderr (go run maps every
// failure to 1).
func TestExitCodeOnStderr(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "--criteria", criteriaPath, "/no/such/export.json"}, "rules: exit 5: unreadable input or a refused export\n"},
		{[]string{"frobnicate"}, "rules: exit 2: usage error\n"},
		{[]string{"test", "--criteria", criteriaPath, "--corpus", corpusPath, "--run", "^no-such-case$"}, "rules: exit 4: the corpus failed\n"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code == exitOK || !strings.HasSuffix(errOut, tc.want) {
			t.Errorf("rules %v: exit %d, stderr %q; want it to end %q", tc.args, code, errOut, tc.want)
		}
	}
	if _, _, errOut := runCLI(t, "check", criteriaPath); strings.Contains(errOut, "exit") {
		t.Errorf("exit 0 prints nothing: %q", errOut)
	}
}
