package rules_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/rules"
)

var updateInterpretations = flag.Bool("update-interpretations", false, "rewrite criteria.yaml's interpretations from READINGS.md and docs/contract.md")

var readingLine = regexp.MustCompile(`^- (R-\d+) (.*)$`)

// readings parses the "- R-n text" bullets of a Markdown file, joining continuation lines.
func readings(t *testing.T, path, source string) []rules.Interpretation {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("skipped: needs ../shared (the shared specs and fixtures beside the repository; CI has it): %s is absent", path)
	}
	defer f.Close()
	var out []rules.Interpretation
	var cur *rules.Interpretation
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := readingLine.FindStringSubmatch(line); m != nil {
			out = append(out, rules.Interpretation{ID: m[1], Source: source, Text: m[2]})
			cur = &out[len(out)-1]
			continue
		}
		if cur != nil && strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "" {
			cur.Text += " " + strings.TrimSpace(line)
			continue
		}
		cur = nil
	}
	return out
}

// TestInterpretationsMatchReadings keeps criteria.yaml's interpretations identical to the readings
// the project relies on: R-1..R-31 (READINGS.md) and the project's own (docs/contract.md).
func TestInterpretationsMatchReadings(t *testing.T) {
	want := append(readings(t, "../../shared/spec/READINGS.md", "READINGS.md"), readings(t, "../docs/contract.md", "docs/contract.md")...)
	src, err := os.ReadFile("../criteria.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if *updateInterpretations {
		var b bytes.Buffer
		for _, r := range want {
			text, _ := json.Marshal(r.Text)
			fmt.Fprintf(&b, "  - id: %s\n    source: %s\n    text: %s\n", r.ID, r.Source, strings.ReplaceAll(string(text), `\u0026`, "&"))
		}
		re := regexp.MustCompile(`(?s)(\ninterpretations:\n)(.*?)(\n\S)`)
		src = re.ReplaceAll(src, []byte("${1}"+strings.ReplaceAll(b.String(), "$", "$$")+"${3}"))
		if err := os.WriteFile("../criteria.yaml", src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := rules.Load("criteria.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	got := ps.Criteria().Interpretations
	if len(got) != len(want) {
		t.Fatalf("criteria.yaml has %d interpretations, the readings are %d (run: go test ./rules -run TestInterpretations -update-interpretations)", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("interpretation %d: criteria.yaml has %+v, want %+v", i, got[i], want[i])
		}
	}
}
