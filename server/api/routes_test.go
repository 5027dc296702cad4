package api_test

import (
	"bytes"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scopehygiene/scope-hygiene/schema"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/apidoc"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
	"github.com/scopehygiene/scope-hygiene/web"
)

// TestEveryRouteDescribed walks the router of a fully configured server (page, /mcp, /metrics on
// the main listener): every route it serves is an operation of schema/openapi.json, and every
// operation the document describes is served (OPTIONS answered by the method fallback).
func TestEveryRouteDescribed(t *testing.T) {
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.Page = web.Handler(); c.MCP = mcp.New }, withForgetEnvelope(t))
	extra, missing, served := compareRoutes(t, h)
	for _, e := range extra {
		t.Errorf("route %s is not described in schema/openapi.json", e)
	}
	for _, m := range missing {
		t.Errorf("schema/openapi.json describes %s, which the server does not serve", m)
	}
	if served < 15 {
		t.Errorf("only %d routes seen: the walk is not reading the router", served)
	}
	// The walk finds an undescribed route.
	h.srv.Echo().GET("/undescribed", func(c echo.Context) error { return nil })
	if extra, _, _ := compareRoutes(t, h); len(extra) != 1 || extra[0] != "GET /undescribed" {
		t.Errorf("an added route: extra = %v", extra)
	}
}

// compareRoutes lists the routes the server serves that the document does not describe, and
// the operations it describes that the server does not serve.
func compareRoutes(t *testing.T, h *harness) (extra, missing []string, served int) {
	doc, err := apidoc.Load()
	if err != nil {
		t.Fatal(err)
	}
	described := map[apidoc.Operation]bool{}
	for _, op := range doc.Operations() {
		described[op] = true
	}
	seen := map[apidoc.Operation]bool{}
	for _, r := range h.srv.Echo().Routes() {
		if strings.HasSuffix(r.Name, ".fallback") || strings.HasSuffix(r.Name, ".fallback-fm") {
			continue // NOT COVERED and the static 404: the paths the document does not describe
		}
		op := apidoc.Operation{Method: r.Method, Path: template(r.Path)}
		seen[op] = true
		if !described[op] {
			extra = append(extra, r.Method+" "+r.Path)
		}
	}
	for op := range described {
		if seen[op] {
			continue
		}
		if op.Method == http.MethodOptions {
			path := strings.NewReplacer("{name}", "report.schema.json", "{path}", "app.js").Replace(op.Path)
			r := h.do(http.MethodOptions, path, nil, nil)
			if r.Status == http.StatusNoContent && r.Header.Get("Allow") != "" {
				continue
			}
		}
		missing = append(missing, op.Method+" "+op.Path)
	}
	sort.Strings(extra)
	sort.Strings(missing)
	return extra, missing, len(seen)
}

// template turns an echo route path into the OpenAPI path template.
func template(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		switch {
		case strings.HasPrefix(s, ":"):
			segs[i] = "{" + s[1:] + "}"
		case s == "*" && i == 2 && segs[1] == "assets":
			segs[i] = "{path}"
		}
	}
	return strings.Join(segs, "/")
}

// TestOpenAPIAndSchemasServed: GET /openapi.json is the embedded document (its $refs relative to
// its URL); every schema it
// refers to is served at /schema/<name> with its $id moved to this service, so $refs resolve.
func TestOpenAPIAndSchemasServed(t *testing.T) {
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.PublicBaseURL = "https://audit.example.com" })
	r := h.do(http.MethodGet, "/openapi.json", nil, nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"openapi": "3.1.0"`) {
		t.Fatalf("GET /openapi.json: %d", r.Status)
	}
	refs := map[string]bool{}
	// Relative to /openapi.json: schema/<name> is /schema/<name>.
	for _, part := range strings.Split(string(r.Body), `"$ref": "schema/`)[1:] {
		refs[strings.SplitN(strings.SplitN(part, `"`, 2)[0], "#", 2)[0]] = true
	}
	if len(refs) < 10 {
		t.Fatalf("only %d schemas referred to", len(refs))
	}
	served := map[string][]byte{}
	for name := range refs {
		s := h.do(http.MethodGet, "/schema/"+name, nil, nil)
		if s.Status != http.StatusOK || s.Header.Get("Content-Type") != "application/schema+json" {
			t.Errorf("GET /schema/%s: %d %s", name, s.Status, s.Header.Get("Content-Type"))
			continue
		}
		if want := `"$id": "https://audit.example.com/schema/` + name + `"`; !strings.Contains(string(s.Body), want) {
			t.Errorf("/schema/%s does not carry %s", name, want)
		}
		served[name] = s.Body
	}
	// Served as a caller gets them, the schemas compile together: their relative $refs resolve
	// against the service's own URLs.
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for name, b := range served {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("https://audit.example.com/schema/"+name, doc); err != nil {
			t.Fatal(err)
		}
	}
	for name := range served {
		if _, err := c.Compile("https://audit.example.com/schema/" + name); err != nil {
			t.Errorf("served /schema/%s does not compile: %v", name, err)
		}
	}
	if !bytes.Equal(r.Body, schema.ServedOpenAPI()) {
		t.Error("GET /openapi.json is not the embedded schema/openapi.json with its $refs relative to /openapi.json")
	}
	for _, bad := range []string{"/schema/nope.schema.json", "/schema/openapi.json", "/schema/..%2Fcriteria.yaml"} {
		if s := h.do(http.MethodGet, bad, nil, nil); s.Status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", bad, s.Status)
		}
	}
}

// TestEveryRouteLabelled: every operation of schema/openapi.json, the second rule set's routes,
// GET / and /criteria/index among them, is counted in /metrics under its route template, never
// as unmatched.
func TestEveryRouteLabelled(t *testing.T) {
	page := func(c *api.Config) {
		c.Page, c.MCP = web.Handler(), mcp.New
	}
	h := newHarness(t, sqliteStore(t), withForgetEnvelope(t), page)
	d, err := apidoc.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, op := range d.Operations() {
		p := strings.NewReplacer("{name}", "report.schema.json", "{path}", "app.js").Replace(op.Path)
		var body []byte
		if op.Method == http.MethodPost {
			body = []byte(`{}`)
		}
		h.do(op.Method, p, body, nil)
		want[strings.NewReplacer("{name}", ":name", "{path}", "*").Replace(op.Path)] = true
	}
	m := h.metricsText()
	if strings.Contains(m, `route="unmatched"`) {
		t.Errorf("a described route is counted as unmatched:\n%s", grepLines(m, `route="unmatched"`))
	}
	for r := range want {
		if !strings.Contains(m, `route="`+r+`"`) {
			t.Errorf("no requests counted under route %q", r)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
