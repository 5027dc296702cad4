// Package schematest validates the bodies the service sends against the published JSON Schemas
// in schema/ (tests only).
package schematest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// baseURL is the $id prefix of every published schema.
const baseURL = "https://scope-hygiene.invalid/schema/"

// root finds the repository root (the directory holding go.mod) from the working directory.
func root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("schematest: go.mod not found above the working directory")
		}
		dir = up
	}
}

// Compile compiles schema/<name>.schema.json, optionally at a JSON pointer ("" for the root).
func Compile(t testing.TB, name, pointer string) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "schema", name+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := baseURL + name + ".schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	// Every other published schema is available for $ref.
	all, _ := filepath.Glob(filepath.Join(root(t), "schema", "*.schema.json"))
	for _, f := range all {
		other := filepath.Base(f)
		if other == name+".schema.json" {
			continue
		}
		ob, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		od, err := jsonschema.UnmarshalJSON(bytes.NewReader(ob))
		if err != nil {
			t.Fatalf("schema %s: %v", other, err)
		}
		if err := c.AddResource(baseURL+other, od); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(url + "#" + pointer)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	return s
}

// Check validates one JSON body against schema/<name>.schema.json (at pointer) and fails t
// when it does not conform.
func Check(t testing.TB, name, pointer string, body []byte) {
	t.Helper()
	if err := Valid(t, name, pointer, body); err != nil {
		t.Errorf("body does not validate against %s.schema.json#%s: %v", name, pointer, err)
	}
}

// Valid returns the validation error of body against schema/<name>.schema.json (nil if valid).
func Valid(t testing.TB, name, pointer string, body []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return Compile(t, name, pointer).Validate(inst)
}
