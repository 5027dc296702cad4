package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	schemaOnce sync.Once
	schemas    map[string]*jsonschema.Schema
	schemaErr  error
)

// packSchema returns the published schema schema/pack-<name>.schema.json.
func packSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		schemas = map[string]*jsonschema.Schema{}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		for _, n := range []string{"manifest", "signature", "records"} {
			b, err := os.ReadFile(filepath.Join("..", "..", "schema", "pack-"+n+".schema.json"))
			if err != nil {
				schemaErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				schemaErr = err
				return
			}
			url := "https://scope-hygiene.invalid/schema/pack-" + n + ".schema.json"
			if err := c.AddResource(url, doc); err != nil {
				schemaErr = err
				return
			}
			if schemas[n], err = c.Compile(url); err != nil {
				schemaErr = err
				return
			}
		}
	})
	if schemaErr != nil {
		t.Fatal(schemaErr)
	}
	return schemas[name]
}

func validate(t *testing.T, name string, b []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return packSchema(t, name).Validate(doc)
}

// validPackage checks a written package's manifest and signature file against the schemas.
func validPackage(t *testing.T, dir string) {
	t.Helper()
	for file, name := range map[string]string{"manifest.json": "manifest", "manifest.sig.json": "signature", "records.json": "records"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, name, b); err != nil {
			t.Fatalf("%s/%s does not validate against schema/pack-%s.schema.json: %v", dir, file, name, err)
		}
	}
}

// TestPackageSchemas: packages of every source validate; the schemas refuse what they must.
func TestPackageSchemas(t *testing.T) {
	dir := t.TempDir()
	opPriv, _, _ := keyPair(t, dir, "operator")
	l := "../../pack/testdata/leak/"
	for k, args := range [][]string{
		{"--from", "mem0-platform", l + "mem0-platform.json", "--history", l + "mem0-platform-history.json"},
		{"--from", "mem0-oss", "--hash-only", l + "mem0-oss.json", "--history", l + "mem0-oss-history.jsonl"},
		{"--from", "graphiti", l + "graphiti.json", "--episodes", l + "graphiti-episodes.json", "--nodes", l + "graphiti-nodes.json"},
		{"--from", "zep-cloud", "--hash-only", l + "zep-cloud.graph=kb-1.json"},
		{"--from", "letta-af", l + "letta.af", "--passages", l + "letta-passages.json", "--archives", l + "letta-archives.json"},
		{"--from", "letta-api", "--hash-only", l + "letta-api.json"},
		{"--from", "claims-jsonl", "--hash-only", l + "claims.jsonl"},
	} {
		pkg := filepath.Join(dir, "p"+strconv.Itoa(k))
		sig := []string{"--unsigned"}
		if k%2 == 0 {
			sig = []string{"--sign-key", opPriv}
		}
		if code, _, stderr := runCLI(t, append(append(args, "--package", pkg), sig...)...); code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
		validPackage(t, pkg)
		b, _ := os.ReadFile(filepath.Join(pkg, "manifest.json"))
		for _, bad := range []struct{ from, to string }{
			{`"kind":"declared_omission"`, `"blocking":true,"kind":"declared_omission"`},
			{`"package_kind":"`, `"package_kind":"x`},
			{`"revision":1`, `"revision":0`},
		} {
			if !strings.Contains(string(b), bad.from) {
				continue
			}
			mutated := strings.Replace(strings.Replace(string(b), `"blocking":false,"count"`, `"count"`, 1), bad.from, bad.to, 1)
			if bad.from != `"kind":"declared_omission"` {
				mutated = strings.Replace(string(b), bad.from, bad.to, 1)
			}
			if validate(t, "manifest", []byte(mutated)) == nil {
				t.Errorf("%v: the manifest schema accepts %s", args, bad.to)
			}
		}
	}
	if validate(t, "signature", []byte(`{"manifest":"manifest.json","manifest_sha256":"`+strings.Repeat("a", 64)+`","unsigned":true,"alg":"Ed25519"}`)) == nil {
		t.Error("the signature schema accepts unsigned with an alg")
	}
	if validate(t, "signature", []byte(`{"manifest":"manifest.json","manifest_sha256":"`+strings.Repeat("a", 64)+`"}`)) == nil {
		t.Error("the signature schema accepts neither signed nor unsigned")
	}
}
