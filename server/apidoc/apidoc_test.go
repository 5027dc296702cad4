package apidoc

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/schema"
)

func TestDocumentLoadsAndValidates(t *testing.T) {
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Operations()) < 20 {
		t.Errorf("only %d operations described", len(d.Operations()))
	}
}

// TestCheckFailsWhatItMust: the validator is not a rubber stamp.
func TestCheckFailsWhatItMust(t *testing.T) {
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	js := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		want               string
	}{
		{"undescribed status", "GET", "/healthz", 418, js, `{}`, "not described"},
		{"body off schema", "GET", "/healthz", 200, js, `{"status":"ok","score":1}`, "healthz"},
		{"composite score in a report", "POST", "/audit", 200, js, `{"kind":"audit_report","score":97}`, "report"},
		{"undescribed protocol header", "GET", "/livez", 200, http.Header{"Content-Type": {"application/json"}, "Payment-Required": {"x"}}, `{"status":"live"}`, "PAYMENT-REQUIRED"},
		{"wrong Allow", "PUT", "/criteria", 405, http.Header{"Allow": {"GET, OPTIONS"}}, ``, "Allow"},
		{"undescribed method not 405", "PUT", "/criteria", 200, http.Header{"Allow": {"GET, HEAD, OPTIONS"}}, ``, "want 405"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			err := d.Check(req, tc.status, tc.header, []byte(tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v, want an error naming %q", err, tc.want)
			}
		})
	}
	if err := d.Check(httptest.NewRequest("GET", "/livez", nil), 200, js, []byte(`{"status":"live"}`)); err != nil {
		t.Errorf("a valid /livez answer: %v", err)
	}
	if err := d.Check(httptest.NewRequest("POST", "/report", nil), 404, nil, []byte(`NOT COVERED`)); err != ErrNotDescribed {
		t.Errorf("an undescribed path: %v, want ErrNotDescribed", err)
	}
}

// TestRefsResolveFromBothPlaces: the repository's schema/openapi.json resolves every $ref from
// where it lies (beside the schemas), and the served copy from /openapi.json (the schemas under
// /schema/); neither holds a root-relative $ref, which a file on disk cannot resolve.
func TestRefsResolveFromBothPlaces(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  []byte
		at   string
	}{
		{"repository file", schema.OpenAPI(), schema.RepoPath},
		{"served copy", schema.ServedOpenAPI(), schema.ServedPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LoadAt(tc.doc, tc.at); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(tc.doc, []byte(`"$ref": "/`)) {
				t.Error("a root-relative $ref")
			}
		})
	}
	// The repository's form does not resolve from the served URL, nor the reverse: the test
	// tells the two apart.
	if _, err := LoadAt(schema.OpenAPI(), schema.ServedPath); err == nil {
		t.Error("the repository's file resolved from /openapi.json: the check cannot fail")
	}
}

// docPath is a path a docs/api.md heading names after its method ("## GET /criteria (free)").
var docPath = regexp.MustCompile(`\b(?:GET|HEAD|POST|OPTIONS) (/[^\s,()]*)`)

// TestDocsCoverEveryPath: the headings of docs/api.md name exactly the paths of the OpenAPI
// document, each after its method: a path added to one and not the other fails.
func TestDocsCoverEveryPath(t *testing.T) {
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(string(md), "\n") {
		if !strings.HasPrefix(line, "## ") && !strings.HasPrefix(line, "### ") {
			continue
		}
		for _, m := range docPath.FindAllStringSubmatch(line, -1) {
			documented[m[1]] = true
		}
	}
	described := map[string]bool{}
	for p := range d.T.Paths.Map() {
		described[p] = true
		if !documented[p] {
			t.Errorf("docs/api.md has no heading for %s, a path of schema/openapi.json", p)
		}
	}
	for p := range documented {
		if !described[p] {
			t.Errorf("docs/api.md has a heading for %s, which schema/openapi.json does not describe", p)
		}
	}
}
