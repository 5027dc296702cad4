// Package schema embeds the published JSON Schemas (*.schema.json) and the OpenAPI document of
// the service (openapi.json), so the binary serves exactly the files the tests validate against.
package schema

import (
	"embed"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"sync"
)

//go:embed *.json
var files embed.FS

// IDBase is the base of every published schema's $id; a served copy replaces it with the
// service's own /schema/ URL so that relative $refs resolve for callers.
const IDBase = "https://scope-hygiene.invalid/schema/"

// Suffix ends the name of every published JSON Schema.
const Suffix = ".schema.json"

// OpenAPI is the OpenAPI 3.1 document of the HTTP API (schema/openapi.json).
func OpenAPI() []byte {
	b, err := files.ReadFile("openapi.json")
	if err != nil {
		panic("schema: embedded openapi.json missing") // a build defect, not a runtime state
	}
	return b
}

// ServedPath is the URL path of the served OpenAPI document; RepoPath is where the repository
// keeps it, beside the schemas it refers to.
const (
	ServedPath = "/openapi.json"
	RepoPath   = "/schema/openapi.json"
)

// schemaRef is a $ref to a published schema relative to the repository's openapi.json.
var schemaRef = regexp.MustCompile(`("\$ref":\s*")([A-Za-z0-9_-]+\.schema\.json)`)

// ServedOpenAPI is the OpenAPI document as GET /openapi.json serves it. Its $refs are relative in
// both places: the repository's file names its sibling (report.schema.json), the served copy
// names the same file under /schema/ (schema/report.schema.json), where GET /schema/{name}
// serves it.
var ServedOpenAPI = sync.OnceValue(func() []byte {
	return schemaRef.ReplaceAll(OpenAPI(), []byte("${1}schema/${2}"))
})

// Names lists the published JSON Schemas by file name (e.g. "report.schema.json"), sorted.
func Names() []string {
	ents, err := fs.ReadDir(files, ".")
	if err != nil {
		panic("schema: embedded directory unreadable")
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), Suffix) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Get returns the published JSON Schema named name (a file name from Names), false when there
// is none.
func Get(name string) ([]byte, bool) {
	if !strings.HasSuffix(name, Suffix) || strings.ContainsAny(name, "/\\") {
		return nil, false
	}
	b, err := files.ReadFile(name)
	return b, err == nil
}
