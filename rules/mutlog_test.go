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
		"typo in a decision":        {"silent: outside && event.grants_cover", "silent: outside && event.grants_cvr", "undefined field 'grants_cvr'"},
		"unknown refusal":           {"  - snapshot_count_cap\n", "  - snapshot_count_cap\n  - bogus_refusal\n", `unknown refusal "bogus_refusal"`},
		"missing refusal":           {"  - envelope_invalid\n", "", `refusal "envelope_invalid" is missing`},
		"unknown step":              {"canonicalization: [trim_ascii_space, ascii_lower]", "canonicalization: [trim_ascii_space, nfkc]", `unknown step "nfkc"`},
		"non-bool gate":             {"    - when: \"!log.snapshot\"", "    - when: \"log.events\"", "expression must be bool"},
		"unknown factor gate":       {"  replay:\n    - when:", "  score:\n    - when: \"true\"\n      reason: x\n  replay:\n    - when:", `unknown factor "score"`},
		"unknown yaml key":          {"format: mutation-log", "format: mutation-log\nformatt: x", "formatt"},
		"verdict field":             {" · replay mismatches: {mismatches}", "", "{mismatches}"},
		"unknown declared fact":     {"  new_keys:\n    member:", "  fresh_keys:\n    member:", `unknown fact "fresh_keys"`},
		"declaration without value": {"    value: new_key\n", "", "a declaration needs its member and its value"},
		"gate on an undeclared fact": {"  tombstone_only:\n    member: forget_semantics\n    value: tombstone_only\n", "",
			"reads log.tombstone_only, which no declaration sets"},
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
	tags := yamlKeys(reflect.TypeOf(MutLogCriteria{}))
	sort.Strings(keys)
	sort.Strings(tags)
	if !reflect.DeepEqual(keys, tags) {
		t.Fatalf("schema keys %v, loader keys %v", keys, tags)
	}
	var facts []string
	for _, f := range raw["properties"].(map[string]any)["declarations"].(map[string]any)["propertyNames"].(map[string]any)["enum"].([]any) {
		facts = append(facts, f.(string))
	}
	if !reflect.DeepEqual(facts, MutLogDeclaredFacts) {
		t.Fatalf("schema declarable facts %v, loader %v", facts, MutLogDeclaredFacts)
	}
	var decl []string
	ty := reflect.TypeOf(Declaration{})
	for i := 0; i < ty.NumField(); i++ {
		decl = append(decl, ty.Field(i).Tag.Get("yaml"))
	}
	var declSchema []string
	for k := range raw["properties"].(map[string]any)["declarations"].(map[string]any)["additionalProperties"].(map[string]any)["properties"].(map[string]any) {
		declSchema = append(declSchema, k)
	}
	sort.Strings(decl)
	sort.Strings(declSchema)
	if !reflect.DeepEqual(decl, declSchema) {
		t.Fatalf("schema declaration keys %v, loader %v", declSchema, decl)
	}
}

// TestDeclaredFactsSetTheirFields: each declarable fact names a boolean of LogFacts, and a
// compiled declaration sets exactly that one.
func TestDeclaredFactsSetTheirFields(t *testing.T) {
	ms, err := LoadMutationLog("fe.yaml", forgetEnvelopeSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms.Declared()) != len(MutLogDeclaredFacts) {
		t.Fatalf("the criteria declare %d facts, the mechanics know %d", len(ms.Declared()), len(MutLogDeclaredFacts))
	}
	for _, d := range ms.Declared() {
		var f LogFacts
		d.Set(&f)
		n := 0
		for name, v := range f.Named() {
			if v == true {
				n++
				if name != d.Fact {
					t.Errorf("declaration %s set %s", d.Fact, name)
				}
			}
		}
		if n != 1 {
			t.Errorf("declaration %s set %d facts", d.Fact, n)
		}
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
