package rules

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

func criteriaSchema(t *testing.T) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	return schemaFile(t, "criteria.schema.json")
}

// schemaFile compiles one criteria-file schema under schema/.
func schemaFile(t *testing.T, name string) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	url := "https://scope-hygiene.invalid/schema/" + name
	b, err := os.ReadFile("../schema/" + name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	return s, raw
}

// validateCriteriaYAML checks YAML criteria source against the schema, as the YAML language server
// does in an author's editor.
func validateCriteriaYAML(s *jsonschema.Schema, src []byte) error {
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// TestEveryCriteriaFileValidates: every criteria file in the repository (any YAML document with a
// criteria_id) validates against schema/criteria.schema.json, and criteria.yaml names the schema
// for the YAML language server on its first line.
func TestEveryCriteriaFileValidates(t *testing.T) {
	s, _ := criteriaSchema(t)
	// A criteria file's kind names its schema (a file without kind is memory-export).
	ml, _ := schemaFile(t, "criteria-mutation-log.schema.json")
	var found []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var probe map[string]any
		if yaml.Unmarshal(src, &probe) != nil || probe["criteria_id"] == nil {
			return nil
		}
		found = append(found, path)
		if probe["kind"] == KindMutationLog {
			if err := validateCriteriaYAML(ml, src); err != nil {
				t.Errorf("%s does not validate against schema/criteria-mutation-log.schema.json: %v", path, err)
			}
			return nil
		}
		if err := validateCriteriaYAML(s, src); err != nil {
			t.Errorf("%s does not validate against schema/criteria.schema.json: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(found)
	if len(found) < 3 || !contains(found, "../criteria.yaml") || !contains(found, "../rules/testdata/criteria-1.0.0.yaml") || !contains(found, "../criteria/forget-envelope.yaml") {
		t.Fatalf("criteria files found: %v", found)
	}
	src, _ := os.ReadFile("../criteria.yaml")
	if first, _, _ := strings.Cut(string(src), "\n"); first != "# yaml-language-server: $schema=./schema/criteria.schema.json" {
		t.Fatalf("criteria.yaml's first line is %q", first)
	}
}

// TestCriteriaSchemaRejects: the schema is not a rubber stamp.
func TestCriteriaSchemaRejects(t *testing.T) {
	s, _ := criteriaSchema(t)
	base, err := os.ReadFile("../criteria.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string][2]string{
		"unknown-key":      {"caps:\n", "caps:\n  bogus_cap: 1\n"},
		"precedence-class": {"      class: marked_shared\n", "      class: shared\n"},
		"m4-depth":         {"  m4_depth: members\n", "  m4_depth: everything\n"},
		"unknown-refusal":  {"  - variant_unknown\n", "  - variant_unknown\n  - bogus_refusal\n"},
		"price-zero":       {"usdc_units_per_call: 50000", "usdc_units_per_call: 0"},
		"gate-factor":      {"  duplicates: []", "  duplicates: []\n  score: []"},
	} {
		if !strings.Contains(string(base), e[0]) {
			t.Fatalf("%s: criteria.yaml no longer contains %q", name, e[0])
		}
		src := strings.Replace(string(base), e[0], e[1], 1)
		if validateCriteriaYAML(s, []byte(src)) == nil {
			t.Errorf("%s: a broken criteria file validates", name)
		}
	}
}

// TestCriteriaSchemaMatchesLoader: each object of the schema names exactly the keys the strict
// loader accepts, so an editor completes what rules/ loads and nothing else.
func TestCriteriaSchemaMatchesLoader(t *testing.T) {
	_, raw := criteriaSchema(t)
	at := func(path ...string) map[string]any {
		var n any = raw
		for _, p := range path {
			n = n.(map[string]any)[p]
		}
		return n.(map[string]any)
	}
	props := func(o map[string]any) []string {
		var out []string
		for k := range o["properties"].(map[string]any) {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		v    any
		node map[string]any
	}{
		{Criteria{}, raw},
		{Price{}, at("properties", "price")},
		{FreeTier{}, at("properties", "free_tier")},
		{Caps{}, at("properties", "caps")},
		{CorpusPin{}, at("properties", "corpus")},
		{Words{}, at("properties", "words")},
		{Texts{}, at("properties", "texts")},
		{Interpretation{}, at("properties", "interpretations", "items")},
		{FamilySpec{}, at("properties", "families", "additionalProperties")},
		{FormSpec{}, at("properties", "forms", "additionalProperties")},
		{RecordRules{}, at("properties", "record")},
		{LivenessRule{}, at("properties", "record", "properties", "liveness", "items")},
		{ConflictRule{}, at("properties", "conflicts", "items")},
		{ClusterRules{}, at("properties", "clusters")},
		{ClassSpec{}, at("properties", "clusters", "properties", "classes", "additionalProperties")},
		{PrecedenceRule{}, at("properties", "clusters", "properties", "precedence", "items")},
		{Gate{}, at("properties", "gates", "additionalProperties", "items")},
		{MatrixRow{}, at("properties", "matrix", "additionalProperties", "additionalProperties", "additionalProperties")},
	} {
		want := yamlKeys(reflect.TypeOf(tc.v))
		sort.Strings(want)
		if got := props(tc.node); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%T: schema keys %v, loader keys %v", tc.v, got, want)
		}
		if tc.node["additionalProperties"] != false {
			t.Errorf("%T: the schema must refuse unknown keys, as the loader does", tc.v)
		}
	}
}
