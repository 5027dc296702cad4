package rules

import (
	"errors"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

func forgetEnvelopeSource(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile("../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestLoadAnyDispatchesOnKind: the kind in the file selects the mechanics, never the file's name.
func TestLoadAnyDispatchesOnKind(t *testing.T) {
	src := forgetEnvelopeSource(t)
	s, err := LoadAny("any-name.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind() != KindMutationLog || s.ID() != "memory-forget-envelope/v1" {
		t.Fatalf("loaded %s %s", s.Kind(), s.ID())
	}
	v1, err := LoadAnyFile("../criteria.yaml")
	if err != nil || v1.Kind() != KindMemoryExport {
		t.Fatalf("criteria.yaml: %v", err)
	}
	bad := strings.Replace(string(src), "\nkind: mutation-log\n", "\nkind: spreadsheet\n", 1)
	if _, err := LoadAny("x.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "no evaluator mechanics") {
		t.Fatalf("an unknown kind loaded: %v", err)
	}
}

// TestMutLogProblemsArePositioned: every problem of a broken mutation-log file is at its place.
func TestMutLogProblemsArePositioned(t *testing.T) {
	src := string(forgetEnvelopeSource(t))
	for name, e := range map[string][3]string{
		"typo in a decision":  {"silent: outside && event.grants_cover", "silent: outside && event.grants_cvr", "undefined field 'grants_cvr'"},
		"unknown refusal":     {"  - snapshot_count_cap\n", "  - snapshot_count_cap\n  - bogus_refusal\n", `unknown refusal "bogus_refusal"`},
		"missing refusal":     {"  - envelope_invalid\n", "", `refusal "envelope_invalid" is missing`},
		"unknown step":        {"canonicalization: [trim_ascii_space, ascii_lower]", "canonicalization: [trim_ascii_space, nfkc]", `unknown step "nfkc"`},
		"non-bool gate":       {"    - when: \"!log.snapshot\"", "    - when: \"log.events\"", "expression must be bool"},
		"unknown factor gate": {"  replay:\n    - when:", "  score:\n    - when: \"true\"\n      reason: x\n  replay:\n    - when:", `unknown factor "score"`},
		"unknown yaml key":    {"format: mutation-log", "format: mutation-log\nformatt: x", "formatt"},
		"verdict field":       {" · replay mismatches: {mismatches}", "", "{mismatches}"},
	} {
		if !strings.Contains(src, e[0]) {
			t.Fatalf("%s: the edit does not apply", name)
		}
		_, err := LoadMutationLog("fe.yaml", []byte(strings.Replace(src, e[0], e[1], 1)))
		var pl ProblemList
		if !errors.As(err, &pl) || !strings.Contains(err.Error(), e[2]) {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, p := range pl {
			if p.Line == 0 {
				t.Errorf("%s: a problem without a position: %s", name, p)
			}
		}
	}
}

// TestMutLogSchemaMatchesLoader: the mutation-log criteria schema names exactly the top-level keys
// the strict loader accepts.
func TestMutLogSchemaMatchesLoader(t *testing.T) {
	_, raw := schemaFile(t, "criteria-mutation-log.schema.json")
	var keys []string
	for k := range raw["properties"].(map[string]any) {
		keys = append(keys, k)
	}
	var tags []string
	ty := reflect.TypeOf(MutLogCriteria{})
	for i := 0; i < ty.NumField(); i++ {
		tags = append(tags, strings.Split(ty.Field(i).Tag.Get("yaml"), ",")[0])
	}
	sort.Strings(keys)
	sort.Strings(tags)
	if !reflect.DeepEqual(keys, tags) {
		t.Fatalf("schema keys %v, loader keys %v", keys, tags)
	}
}

// TestForgetEnvelopeReadingsMatchDoc keeps the criteria's interpretations identical to the list in
// docs/forget-envelope.md.
func TestForgetEnvelopeReadingsMatchDoc(t *testing.T) {
	ms, err := LoadMutationLog("fe.yaml", forgetEnvelopeSource(t))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/forget-envelope.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^- (FE-R-[0-9]+) (.*)$`)
	var got []Interpretation
	for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
		got = append(got, Interpretation{ID: m[1], Source: "docs/forget-envelope.md", Text: m[2]})
	}
	if !reflect.DeepEqual(got, ms.Criteria().Interpretations) {
		t.Fatalf("docs/forget-envelope.md lists %d readings that differ from the criteria's %d", len(got), len(ms.Criteria().Interpretations))
	}
}
