package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
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
	if code != exitOK || !strings.HasPrefix(out, "\nmemory-scope-hygiene/v1 1.0.2 -> 1.0.2: 0 of ") {
		t.Fatalf("diff of a file with itself must change nothing: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "diff", criteriaPath, fePath); code != exitUsage || !strings.Contains(errOut, "two revisions of one kind") {
		t.Fatalf("diff across kinds: exit %d %s", code, errOut)
	}
}

// The published revisions kept to check what each later revision changes.
const (
	criteria100 = "../../rules/testdata/criteria-1.0.0.yaml"
	criteria101 = "../../rules/testdata/criteria-1.0.1.yaml"
	fe100       = "../../rules/testdata/forget-envelope-1.0.0.yaml"
)

// diffCases runs `rules diff OLD NEW` and returns the changed case names of its summary and the
// whole output.
func diffCases(t *testing.T, summary string, args ...string) ([]string, string) {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"diff"}, args...)...)
	if code != exitOK {
		t.Fatalf("diff: exit %d\n%s%s", code, out, errOut)
	}
	_, tail, ok := strings.Cut(out, "\n"+summary)
	if !ok {
		t.Fatalf("no summary line %q:\n%.2000s", summary, out)
	}
	lines := strings.Split(strings.TrimSpace(tail), "\n")
	var got []string
	for _, l := range lines[1:] {
		got = append(got, strings.TrimSpace(l))
	}
	if !strings.HasPrefix(lines[0], fmt.Sprintf("%d of ", len(got))) {
		t.Fatalf("summary %q lists %d cases", lines[0], len(got))
	}
	return got, out
}

// wantCases reads a list of case names, one a line (testdata/*.cases).
func wantCases(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func sameCases(t *testing.T, got, want []string) {
	t.Helper()
	g, w := append([]string(nil), got...), append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("changed cases (%d):\n%s\nwant (%d):\n%s", len(g), strings.Join(g, "\n"), len(w), strings.Join(w, "\n"))
	}
}

func hasLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, "\n"+l+"\n") && !strings.HasPrefix(out, l+"\n") {
			t.Errorf("diff lacks the line %q", l)
		}
	}
}

// TestDiffRevision101 runs `rules diff` between criteria 1.0.0 and 1.0.1 and asserts the exact
// list of corpus cases whose outcome changes (issue 11): the regression cases of the six
// corrections, the edge case that pinned the old M4 depth reading, the generated Zep Cloud case
// with one live graph, and 1.0.2's regression case with one live Zep Cloud graph. Every other case
// keeps its outcome.
func TestDiffRevision101(t *testing.T) {
	got, out := diffCases(t, "memory-scope-hygiene/v1 1.0.0 -> 1.0.1: ", "--corpus", corpusPath, criteria100, criteria101)
	sameCases(t, got, []string{
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
		// added by 1.0.2's corpus: one live Zep Cloud graph, which R-53 made NOT ASSESSABLE
		"R-54-zep_cloud-one-live-graph-coverage-has-no-marker-facts",
	})
	// One line per changed field, in words: `case  where: old -> new`.
	hasLines(t, out,
		"R-32-group_id-non-string-conflicts  audit, scope_conflicts, conflicts: 0 -> 1",
		"R-52-declared-content_text-refused-mem0  refusal: (absent) -> refused declared_scope_keys_invalid",
		"R-53-zep_cloud-one-live-graph-plus-global  audit, cross_scope_clusters, status: ASSESSABLE -> NOT ASSESSABLE",
		"R-33-letta-m4-depth-excludes-templates  audit, cross_scope_clusters, cluster 1, decided by: B1 -> N2",
	)
	// The marked share is a new coverage field, not an outcome: it never changes a case alone.
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "  audit, coverage, marked share") && !strings.HasPrefix(l, "R-33-") && !strings.HasPrefix(l, "L-4-") {
			t.Errorf("coverage-only change: %s", l)
		}
	}
}

// TestDiffRevision102 runs `rules diff` between v1 1.0.1 and 1.0.2 (issue 25) and asserts exactly
// the cases the independent oracle's two revisions disagree on: every case whose
// cross_scope_clusters is NOT ASSESSABLE loses the marker-convention figures from its coverage
// block, and the regression cases.
func TestDiffRevision102(t *testing.T) {
	got, out := diffCases(t, "memory-scope-hygiene/v1 1.0.1 -> 1.0.2: ", "--corpus", corpusPath, criteria101, criteriaPath)
	sameCases(t, got, wantCases(t, "diff-v1-1.0.1-1.0.2.cases"))
	hasLines(t, out,
		"R-34-marked-share-in-coverage-when-clusters-not-assessable  audit, coverage, B5 not run: 0 -> (absent)",
		"R-34-marked-share-in-coverage-when-clusters-not-assessable  audit, coverage, marked share of live records, value: 0.0% -> (absent)",
		"R-55-declared-memory-refused-mem0  audit report: (present) -> (absent)",
		"R-55-declared-memory-refused-mem0  refusal: (absent) -> refused declared_scope_keys_invalid",
		"R-55-free-text-65-bytes-with-space-refused  refusal: (absent) -> refused declared_scope_keys_invalid at record index 1",
	)
	// R-54 changes the coverage block only: no factor and no verdict line moves.
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "  audit, ") && !strings.Contains(l, "  audit, coverage, ") && !strings.HasPrefix(l, "R-55-") {
			t.Errorf("a 1.0.2 change outside the coverage block: %s", l)
		}
	}
}

// TestDiffForgetEnvelope101 runs `rules diff` between memory-forget-envelope/v1 1.0.0 and 1.0.1
// (issue 25) over that rule set's own corpus and asserts exactly the cases its independent
// oracle's two revisions disagree on.
func TestDiffForgetEnvelope101(t *testing.T) {
	got, out := diffCases(t, "memory-forget-envelope/v1 1.0.0 -> 1.0.1: ", "--corpus", feCorpus, fe100, fePath)
	sameCases(t, got, wantCases(t, "diff-forget-envelope-1.0.0-1.0.1.cases"))
	hasLines(t, out,
		"oracle-regression-FE-R-35-no-table-outside-counted  audit, reinserts_outside_envelope, status: NOT ASSESSABLE -> ASSESSABLE",
		"oracle-regression-FE-R-37-none-judged-no-envelope  audit, reinserts_outside_envelope, outside: 0 -> (absent)",
		"oracle-regression-FE-R-37-none-judged-no-envelope  audit, reinserts_outside_envelope, outside, status: (absent) -> NOT ASSESSABLE",
		"FE-R-15-terminal-forget-after-reopen  audit, reinserts_outside_envelope, outside seqs: (absent) -> 5",
	)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "FE-") && strings.Contains(l, "  refusal: ") {
			t.Errorf("a refusal changed: %s", l)
		}
	}
}

// goSyntax are fragments that only Go's fmt prints: maps, structs, typed values.
var goSyntax = []string{"map[", "]any{", "{Letta:", "float64(", "string(", "bool(", "%!", "&{", "<nil>"}

// TestOutputsSpeakWords: audit, precheck, explain and diff print words and tables, never Go syntax.
func TestOutputsSpeakWords(t *testing.T) {
	cases := filepath.Join(corpusPath, "cases")
	outputs := map[string]string{}
	for _, c := range []string{"R-33-letta-m4-depth-excludes-templates", "R-53-zep_cloud-one-live-graph-plus-global", "R-32-group_id-non-string-conflicts", "B5-disagreement-uncovered-b2"} {
		for _, cmd := range []string{"audit", "precheck", "explain"} {
			_, out, errOut := runCLI(t, cmd, "--criteria", criteriaPath, filepath.Join(cases, c+".json"))
			outputs[cmd+" "+c] = out + errOut
		}
	}
	for _, c := range []string{"FE-R-24-alias-by-case-and-space", "oracle-regression-FE-R-37-none-judged-no-envelope"} {
		for _, cmd := range []string{"audit", "precheck", "explain"} {
			_, out, errOut := runCLI(t, cmd, "--criteria", fePath, filepath.Join(feCorpus, "cases", c+".json"))
			outputs[cmd+" "+c] = out + errOut
		}
	}
	_, out, _ := runCLI(t, "diff", "--corpus", corpusPath, criteria101, criteriaPath)
	outputs["diff"] = out
	_, out, _ = runCLI(t, "diff", "--corpus", feCorpus, fe100, fePath)
	outputs["diff forget-envelope"] = out
	dotted := regexp.MustCompile(`\b[a-z_]+\.[a-z_]+\.[a-z_]+`)
	for name, out := range outputs {
		if out == "" {
			t.Fatalf("%s printed nothing", name)
		}
		for _, g := range goSyntax {
			if strings.Contains(out, g) {
				t.Errorf("%s prints Go syntax %q:\n%s", name, g, out)
			}
		}
		if strings.HasPrefix(name, "diff") {
			// Words, not dotted JSON paths (audit.factors.x.y).
			for _, l := range strings.Split(out, "\n") {
				if field, _, ok := strings.Cut(l, ": "); ok && dotted.MatchString(field) {
					t.Errorf("%s prints a dotted path: %s", name, l)
					break
				}
			}
		}
	}
	ex := outputs["explain R-33-letta-m4-depth-excludes-templates"]
	for _, want := range []string{
		"1     copies whose M4 pointer does not resolve (N2) (cluster.broken_pointers)",       // a fact by its meaning
		"→ N2 broken pointer            holds      cluster.broken_pointers > 0",               // a precedence step by id and name
		"  mark       covered              record.scoped && (m1 || m3 || record.m4_resolves)", // a predicate by name and text
	} {
		if !strings.Contains(ex, want) {
			t.Errorf("explain lacks %q:\n%s", want, ex)
		}
	}
	if !strings.Contains(outputs["audit R-53-zep_cloud-one-live-graph-plus-global"], "marked share, B5 not run, template lineage, M3 declared but absent: NOT ASSESSABLE") {
		t.Errorf("audit coverage must not print marker figures beside a NOT ASSESSABLE factor:\n%s", outputs["audit R-53-zep_cloud-one-live-graph-plus-global"])
	}
	if !strings.Contains(outputs["audit B5-disagreement-uncovered-b2"], "distinct sources") {
		t.Errorf("audit must print B2's distinct source count:\n%s", outputs["audit B5-disagreement-uncovered-b2"])
	}
	if !strings.Contains(outputs["explain FE-R-24-alias-by-case-and-space"], "    alias          event.raw_key != forget.raw_key") {
		t.Errorf("explain of a mutation log must print each decision by name and text:\n%s", outputs["explain FE-R-24-alias-by-case-and-space"])
	}
}

// checkEnd is a check-end time in a verdict line; goldens hold a placeholder.
var checkEnd = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z`)

// TestAuthorToolGoldens: audit, explain and diff of both kinds of criteria, in words
// (testdata/*.golden; run with -update to rewrite).
func TestAuthorToolGoldens(t *testing.T) {
	cases := filepath.Join(corpusPath, "cases")
	for _, g := range []struct {
		golden string
		args   []string
	}{
		{"audit-v1-clusters-not-assessable.golden", []string{"audit", "--criteria", criteriaPath, filepath.Join(cases, "R-54-generic-no-keys-coverage-has-no-marker-facts.json")}},
		{"audit-v1-distinct-sources.golden", []string{"audit", "--criteria", criteriaPath, filepath.Join(cases, "B5-disagreement-uncovered-b2.json")}},
		{"explain-v1.golden", []string{"explain", "--criteria", criteriaPath, filepath.Join(cases, "R-33-letta-m4-depth-excludes-templates.json")}},
		{"audit-forget-envelope.golden", []string{"audit", "--criteria", fePath, filepath.Join(feCorpus, "cases", "oracle-regression-FE-R-37-none-judged-no-envelope.json")}},
		{"explain-forget-envelope.golden", []string{"explain", "--criteria", fePath, filepath.Join(feCorpus, "cases", "oracle-regression-FE-R-36-terminal-retired-writes-judged.json")}},
		{"diff-v1-1.0.1-1.0.2.golden", []string{"diff", "--corpus", corpusPath, criteria101, criteriaPath}},
	} {
		_, out, errOut := runCLI(t, g.args...)
		golden(t, g.golden, checkEnd.ReplaceAllString(out+errOut, "<check-end>"))
	}
	// The forget-envelope diff, restricted to its regression cases (the whole is 2,000 lines).
	_, out, _ := runCLI(t, "diff", "--corpus", feCorpus, fe100, fePath)
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "oracle-regression-") || strings.HasPrefix(l, "memory-forget-envelope/v1 ") {
			keep = append(keep, l)
		}
	}
	golden(t, "diff-forget-envelope-1.0.0-1.0.1-regressions.golden", strings.Join(keep, "\n")+"\n")
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
