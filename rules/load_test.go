package rules_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files under rules/testdata")

// criteriaSource is the serving criteria.yaml; every test works on a copy.
func criteriaSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../criteria.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type edit struct{ old, new string }

// apply makes each edit once, failing when its text is not in the source.
func apply(t *testing.T, src string, edits ...edit) string {
	t.Helper()
	for _, e := range edits {
		if !strings.Contains(src, e.old) {
			t.Fatalf("criteria.yaml no longer contains %q", e.old)
		}
		src = strings.Replace(src, e.old, e.new, 1)
	}
	return src
}

// lineOf is the 1-based line of the first occurrence of needle.
func lineOf(t *testing.T, src, needle string) int {
	t.Helper()
	i := strings.Index(src, needle)
	if i < 0 {
		t.Fatalf("%q not found", needle)
	}
	return strings.Count(src[:i], "\n") + 1
}

// colOf is the 1-based column of needle on its line.
func colOf(t *testing.T, src, needle string) int {
	t.Helper()
	i := strings.Index(src, needle)
	return i - strings.LastIndex(src[:i], "\n")
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./rules -run TestLoadProblems -update)", err)
	}
	if string(want) != string(got) {
		t.Fatalf("%s differs (criteria.yaml moved? run: go test ./rules -run TestLoadProblems -update)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func problems(t *testing.T, src string) rules.ProblemList {
	t.Helper()
	ps, err := rules.Load("criteria.yaml", []byte(src))
	if err == nil || ps != nil {
		t.Fatal("the broken criteria compiled")
	}
	if !errors.Is(err, rules.ErrCompile) {
		t.Fatalf("error %v does not wrap ErrCompile", err)
	}
	var pl rules.ProblemList
	if !errors.As(err, &pl) || len(pl) == 0 {
		t.Fatalf("error %T is not a ProblemList", err)
	}
	if !sort.SliceIsSorted(pl, func(i, j int) bool {
		return pl[i].Line < pl[j].Line || (pl[i].Line == pl[j].Line && pl[i].Column < pl[j].Column)
	}) {
		t.Fatalf("problems not sorted by position:\n%v", err)
	}
	for _, p := range pl {
		if p.File != "criteria.yaml" {
			t.Fatalf("problem file %q", p.File)
		}
	}
	return pl
}

// want is one expected problem: its line is that of the text `at` in the broken source, its
// column that of `col` (or anywhere from `at` to the end of its line when col is "").
type want struct {
	at, col string
	msg     string
}

func TestLoadProblems(t *testing.T) {
	base := criteriaSource(t)
	if _, err := rules.Load("criteria.yaml", []byte(base)); err != nil {
		t.Fatalf("the serving criteria do not compile: %v", err)
	}
	nested := "record.episode_group_ids.strs.exists(g, record.endpoint_group_ids.strs.exists(h, g == h))"
	rows := []struct {
		name  string
		edits []edit
		want  []want
	}{
		{"broken-expression", []edit{{"when: record.replaced_by.set", "when: record.replaced_by.sett"}},
			[]want{{"record.replaced_by.sett", ".sett", "undefined field 'sett'"}}},
		{"several-errors", []edit{
			{"when: submission.eligible == 0", "when: submission.eligibl == 0"},
			{"when: record.superseded_by.set", "when: record.superseded_by.set &&"},
			{"split_state: record.invalid_at.set != record.expired_at.set", "split_state: record.invalid_at.set != record.expired_at.sett"},
			{"when: record.replaced_by.set", "when: record.replaced_by.sett"},
		}, []want{
			{"record.replaced_by.sett", ".sett", "undefined field 'sett'"},
			{"record.superseded_by.set &&", "", "Syntax error"},
			{"record.expired_at.sett", ".sett", "undefined field 'sett'"},
			{"submission.eligibl ==", ".eligibl", "undefined field 'eligibl'"},
		}},
		{"unknown-yaml-key", []edit{{"caps:\n", "caps:\n  bogus_cap: 1\n"}},
			[]want{{"bogus_cap: 1", "bogus_cap", `unknown key "bogus_cap"`}}},
		// An unknown key is named by its YAML path, never a Go type, with the nearest known key.
		{"unknown-yaml-key-typo", []edit{{"      class: marked_shared\n", "      clas: marked_shared\n"}},
			[]want{{"clas: marked_shared", "clas", `unknown key "clas" (did you mean "class"?)`}}},
		// An entry indented one space less than its siblings is reported at its own line, not at
		// the start of the enclosing block.
		{"yaml-indentation", []edit{{"      reason: contradictory declaration\n", "     reason: contradictory declaration\n"}},
			[]want{{"     reason: contradictory declaration", "", "did not find expected '-' indicator"}}},
		{"unknown-yaml-key-nested", []edit{{"      reason: malformed marker\n", "      reason: malformed marker\n      weight: 2\n"}},
			[]want{{"weight: 2", "weight", `unknown key "weight"`}}},
		{"non-bool-predicate", []edit{{"split_state: record.invalid_at.set != record.expired_at.set", "split_state: record.invalid_at.str"}},
			[]want{{"split_state: record.invalid_at.str", "record.invalid_at.str", "expression must be bool, found string"}}},
		{"non-bool-gate", []edit{{"when: submission.eligible == 0", "when: submission.eligible"}},
			[]want{{"when: submission.eligible\n", "submission.eligible", "expression must be bool, found int"}}},
		{"over-budget", []edit{{"record.episode_group_ids.strs.exists(g, g != record.group_id.str)", "record.episode_group_ids.strs.exists(g, g.contains(record.group_id.str))"}},
			// A whole-expression problem is placed where the expression starts (the folded scalar's indicator).
			[]want{{"conflict: >-\n      (record.group_id.present && record.group_id.kind != \"string\") ||\n      record.episode_group_ids.items", ">-", "exceeds the budget 10000000000 (caps.rule_cost_estimate)"}}},
		{"nested-comprehension", []edit{{"record.episode_group_ids.strs.exists(g, g != record.group_id.str)", nested}},
			[]want{{nested, "", "comprehension exceeds nesting limit"}}},
		{"last-precedence-not-true", []edit{{"when: \"true\"", "when: cluster.copies > 0"}},
			[]want{{"when: cluster.copies > 0", "cluster.copies > 0", "the last precedence rule must hold unconditionally"}}},
		{"missing-predicate", []edit{{"    contested: family == \"generic\" && live && record.state.str == \"pending\"\n", ""}},
			[]want{{"    split_state:", "split_state", `predicate "contested" is missing`}}},
		{"unknown-predicate", []edit{{"    contested: family", "    contestd: family"}},
			[]want{{"    split_state:", "split_state", `predicate "contested" is missing`}, {"contestd:", "contestd", `unknown predicate "contestd"`}}},
		{"refusal-missing", []edit{{"  - variant_unknown\n", ""}},
			[]want{{"\nrefusals:", "", `refusal code "variant_unknown" is missing`}}},
		{"refusal-unknown", []edit{{"  - variant_unknown\n", "  - variant_unknown\n  - bogus_refusal\n"}},
			[]want{{"  - bogus_refusal", "bogus_refusal", `unknown refusal code "bogus_refusal"`}}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			src := apply(t, base, r.edits...)
			pl := problems(t, src)
			if len(pl) != len(r.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(pl), len(r.want), pl)
			}
			for i, w := range r.want {
				p := pl[i]
				line := lineOf(t, src, w.at)
				if strings.HasPrefix(w.at, "\n") {
					line++
				}
				if p.Line != line || !strings.Contains(p.Message, w.msg) {
					t.Fatalf("problem %d: %s:%d:%d %q; want line %d and %q", i, p.File, p.Line, p.Column, p.Message, line, w.msg)
				}
				lines := strings.Split(src, "\n")
				switch {
				case w.col != "":
					// The caret points into the token.
					start := colOf(t, src[strings.Index(src, w.at):], w.col) + colOf(t, src, w.at) - 1
					if p.Column < start || p.Column > start+len(w.col) {
						t.Fatalf("problem %d: column %d, want %d..%d (%q)", i, p.Column, start, start+len(w.col), w.col)
					}
				default:
					if p.Column < 1 || p.Column > len(lines[line-1])+1 {
						t.Fatalf("problem %d: column %d outside line %d", i, p.Column, line)
					}
				}
				if !strings.Contains(p.Snippet, strings.TrimRight(lines[line-1], "\r")) || !strings.HasSuffix(p.Snippet, "^") {
					t.Fatalf("snippet %q", p.Snippet)
				}
			}
			golden(t, r.name+".golden", []byte(pl.Error()+"\n"))
			if r.name == "several-errors" {
				golden(t, r.name+".json", append(pl.JSON(), '\n'))
			}
		})
	}
}

// The JSON rendering carries every field of every problem.
func TestProblemsJSON(t *testing.T) {
	src := apply(t, criteriaSource(t), edit{"when: record.replaced_by.set", "when: record.replaced_by.sett"})
	pl := problems(t, src)
	var got []map[string]any
	if err := json.Unmarshal(pl.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	line := lineOf(t, src, "record.replaced_by.sett")
	if len(got) != 1 {
		t.Fatalf("%s", pl.JSON())
	}
	p := got[0]
	if p["file"] != "criteria.yaml" || p["line"] != float64(line) || p["column"] != float64(pl[0].Column) ||
		p["path"] != "record.liveness[1].when" || p["message"] != "undefined field 'sett'" || !strings.Contains(p["snippet"].(string), "^") {
		t.Fatalf("%s", pl.JSON())
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "column,file,line,message,path,snippet" {
		t.Fatalf("keys %v", keys)
	}
}

// Revising the criteria is a data change: renaming a liveness state in a copy of criteria.yaml
// compiles and changes the audit of an export that uses the old name.
func TestRevisionAsData(t *testing.T) {
	base := criteriaSource(t)
	old := `record.lifecycle_state.str in ["superseded", "deleted", "expired"] || record.state.str in ["superseded", "deleted", "expired"]`
	revised := apply(t, base, edit{old, strings.ReplaceAll(old, `"expired"`, `"lapsed"`)})
	shippedPS, err := rules.Load("criteria.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	revPS, err := rules.Load("criteria.yaml", []byte(revised))
	if err != nil {
		t.Fatalf("the revised criteria do not compile: %v", err)
	}
	if revPS.Digest() == shippedPS.Digest() {
		t.Fatal("a revision must change the criteria digest")
	}
	body, _ := json.Marshal(map[string]any{"family": "mem0", "form": "full_text", "records": []any{
		map[string]any{"id": "a", "content_text": "x", "user_id": "u", "state": "expired"},
		map[string]any{"id": "b", "content_text": "x", "user_id": "u", "lifecycle_state": "expired"},
		map[string]any{"id": "c", "content_text": "y", "user_id": "u", "state": "lapsed"},
	}})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	before, ref, err := evaluator.Audit(shippedPS, body, now)
	if err != nil || ref != nil {
		t.Fatal(ref, err)
	}
	after, ref, err := evaluator.Audit(revPS, body, now)
	if err != nil || ref != nil {
		t.Fatal(ref, err)
	}
	// Shipped: a and b are expired (not live), c is live. Revised: "expired" means nothing, "lapsed"
	// closes c; a and b are live duplicates in scope u.
	if before.Live != 1 || *before.Factors.Duplicates.Excess != 0 {
		t.Fatalf("shipped: live %d %s", before.Live, before.VerdictLine)
	}
	if after.Live != 2 || *after.Factors.Duplicates.Excess != 1 || after.CriteriaDigest != revPS.Digest() {
		t.Fatalf("revised: live %d %s", after.Live, after.VerdictLine)
	}
	wantBefore := "MEMORY SCOPE-HYGIENE — records: 3 · live: 1 · unscoped: 0.0% · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 0 — 2026-11-30T12:00:00Z"
	wantAfter := "MEMORY SCOPE-HYGIENE — records: 3 · live: 2 · unscoped: 0.0% · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 1 — 2026-11-30T12:00:00Z"
	if before.VerdictLine != wantBefore || after.VerdictLine != wantAfter {
		t.Fatalf("verdicts\n%s\n%s", before.VerdictLine, after.VerdictLine)
	}
}
