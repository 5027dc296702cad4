package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/evaluator"
)

const wholeParts = "testdata/whole-parts"

// TestListPartsNaturalOrder: a directory is its *.json files with their numbers compared as
// numbers (part2 before part10); files are taken in the order given.
func TestListPartsNaturalOrder(t *testing.T) {
	ps, err := listParts([]string{wholeParts})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, filepath.Base(p.name))
	}
	if got := strings.Join(names, " "); got != "store.part1.json store.part2.json store.part10.json" {
		t.Fatalf("directory order: %s", got)
	}
	two := filepath.Join(wholeParts, "store.part2.json")
	one := filepath.Join(wholeParts, "store.part1.json")
	if ps, err = listParts([]string{two, one}); err != nil || ps[0].name != two || ps[1].name != one {
		t.Fatalf("files in the order given: %v %v", ps, err)
	}
	for _, bad := range [][]string{nil, {"testdata/no-such-file.json"}, {t.TempDir()}, {"-", "-"}} {
		if _, err := listParts(bad); err == nil {
			t.Errorf("listParts(%q) must fail", bad)
		}
	}
	less := [][2]string{{"a2", "a10"}, {"x.part9.json", "x.part10.json"}, {"a", "b"}, {"a1b", "a1c"}, {"a01", "a1"}, {"a", "a1"}}
	for _, l := range less {
		if !naturalLess(l[0], l[1]) || naturalLess(l[1], l[0]) {
			t.Errorf("naturalLess(%s, %s)", l[0], l[1])
		}
	}
}

// TestWholeGoldens: the whole-store check in words and as JSON opens and closes with the
// statement of what it is not, and finds the cluster whose copies sit in two parts
// (testdata/*.golden; run with -update to rewrite).
func TestWholeGoldens(t *testing.T) {
	code, out, errOut := runCLI(t, "audit", "--whole", "--criteria", criteriaPath, wholeParts)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "audit-whole.golden", checkEnd.ReplaceAllString(out, "<check-end>"))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	first, last := lines[0], lines[len(lines)-1]
	want := "local whole-store check beyond the published caps — not a signed memory-scope-hygiene/v1 audit. It is never a whole-store certification"
	if first != last || !strings.HasPrefix(first, want) {
		t.Fatalf("first and last lines must state the mode:\n%s\n%s", first, last)
	}
	code, out, _ = runCLI(t, "audit", "--criteria", criteriaPath, "--json", "--whole", wholeParts)
	if code != exitOK {
		t.Fatalf("--json: exit %d", code)
	}
	golden(t, "audit-whole-json.golden", checkEnd.ReplaceAllString(out, "<check-end>"))
	var w evaluator.WholeReport
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatal(err)
	}
	if u := w.Report.Factors.CrossScopeClusters.Undeclared; u == nil || *u != 1 || w.Report.Records != 5 {
		t.Fatalf("the parts as one: %+v", w.Report.Factors.CrossScopeClusters)
	}
	// Each part alone: no cluster.
	for _, p := range []string{"store.part1.json", "store.part2.json"} {
		_, out, _ := runCLI(t, "audit", "--criteria", criteriaPath, "--json", filepath.Join(wholeParts, p))
		var rep evaluator.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil || *rep.Factors.CrossScopeClusters.Undeclared != 0 {
			t.Fatalf("%s alone: %v %s", p, err, out)
		}
	}
}

// TestWholeInputs: standard input is read twice through a spool; a refusal names its part under
// the mode's statement; parts whose headers disagree are an input error.
func TestWholeInputs(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(wholeParts, "store.part1.json"))
	if err != nil {
		t.Fatal(err)
	}
	stdin = strings.NewReader(string(body))
	defer func() { stdin = os.Stdin }()
	code, out, _ := runCLI(t, "audit", "--whole", "--criteria", criteriaPath, filepath.Join(wholeParts, "store.part2.json"), "-")
	if code != exitOK || !strings.Contains(out, "2 part(s) analysed as one export, 4 records") {
		t.Fatalf("stdin as a part: exit %d\n%s", code, out)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"family":"mem0","form":"full_text","records":[{"id":"x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "audit", "--whole", "--criteria", criteriaPath, bad)
	if code != exitInput || !strings.Contains(out, "part "+bad+": REFUSED (free, no payment): content_text_required at record index 0") ||
		!strings.HasPrefix(out, "local whole-store check") || !strings.HasSuffix(strings.TrimSpace(out), "runtime.") {
		t.Fatalf("refusal: exit %d\n%s", code, out)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"family":"generic","form":"full_text","records":[{"id":"y","content_text":"t"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "audit", "--whole", "--criteria", criteriaPath, filepath.Join(wholeParts, "store.part1.json"), other)
	if code != exitInput || !strings.Contains(errOut, "part "+other+": member family differs from the first part's") {
		t.Fatalf("disagreeing headers: exit %d\n%s", code, errOut)
	}
	if code, _, _ := runCLI(t, "audit", "--whole", "--criteria", criteriaPath); code != exitUsage {
		t.Fatalf("no input: exit %d", code)
	}
}
