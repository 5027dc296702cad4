// Package apidoc checks the service against its OpenAPI document (schema/openapi.json): every
// real response a test sees is validated against the operation the document describes for it
// (status, headers, body schema), and the document's routes are listed so a test can compare
// them with the router's. It is used by tests only; the service serves the document as is.
package apidoc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/scopehygiene/scope-hygiene/schema"
)

// Doc is the loaded OpenAPI document with a router over it.
type Doc struct {
	T      *openapi3.T
	router routers.Router
}

var (
	once   sync.Once
	loaded *Doc
	errLd  error
)

// Load loads and validates schema/openapi.json as the repository holds it (at /schema/openapi.json,
// its relative $refs naming its siblings), resolving them from the embedded published schemas
// (once per process).
func Load() (*Doc, error) {
	once.Do(func() { loaded, errLd = load() })
	return loaded, errLd
}

func load() (*Doc, error) { return LoadAt(schema.OpenAPI(), schema.RepoPath) }

// LoadAt loads and validates an OpenAPI document b found at URL path at: its $refs must resolve,
// relative to at, to a published schema under /schema/.
func LoadAt(b []byte, at string) (*Doc, error) {
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = true
	l.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		name, ok := strings.CutPrefix(u.Path, "/schema/")
		if !ok {
			return nil, fmt.Errorf("apidoc: $ref outside /schema/: %s", u.Path)
		}
		b, ok := schema.Get(name)
		if !ok {
			return nil, fmt.Errorf("apidoc: no published schema %s", name)
		}
		return b, nil
	}
	t, err := l.LoadFromDataWithPath(b, &url.URL{Path: at})
	if err != nil {
		return nil, fmt.Errorf("apidoc: load openapi.json: %w", err)
	}
	if err := t.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("apidoc: openapi.json is not a valid OpenAPI document: %w", err)
	}
	r, err := legacy.NewRouter(t)
	if err != nil {
		return nil, fmt.Errorf("apidoc: router: %w", err)
	}
	return &Doc{T: t, router: r}, nil
}

// Operation is one described method of one path template ("/schema/{name}").
type Operation struct{ Method, Path string }

// Operations lists every described operation, sorted.
func (d *Doc) Operations() []Operation {
	var out []Operation
	for path, item := range d.T.Paths.Map() {
		for m := range item.Operations() {
			out = append(out, Operation{Method: m, Path: path})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// ErrNotDescribed is returned by Check for a request whose path the document does not describe
// (the service's NOT COVERED and static 404 answers): nothing to validate against.
var ErrNotDescribed = errors.New("apidoc: path not described")

// CheckT is Check for tests: a failure to load the document or an answer off the document is
// a test error; an undescribed path passes (the caller's own checks cover it).
func CheckT(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Check(req, status, header, body); err != nil && !errors.Is(err, ErrNotDescribed) {
		t.Errorf("answer not as schema/openapi.json describes it: %v\n%.300s", err, body)
	}
}

// protocolHeaders are the response headers a caller acts on: present on an answer, they must be
// described for its status.
var protocolHeaders = []string{"PAYMENT-REQUIRED", "PAYMENT-RESPONSE", "SIGN-IN-WITH-X-CHALLENGE", "Retry-After", "Allow"}

// Check validates one exchange against the document: the status must be described for the
// operation, every protocol header present must be described, and the headers and body must
// validate. A method the path does not describe must be answered 405 (or 204 to OPTIONS) with
// an Allow header naming exactly the described methods.
func (d *Doc) Check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := d.router.FindRoute(req)
	if err != nil {
		var re *routers.RouteError
		if errors.Is(err, routers.ErrMethodNotAllowed) || (errors.As(err, &re) && re.Reason == routers.ErrMethodNotAllowed.Error()) {
			return d.checkUndescribedMethod(req, status, header, body)
		}
		return ErrNotDescribed
	}
	resp := route.Operation.Responses.Status(status)
	if resp == nil {
		return fmt.Errorf("%s %s: status %d is not described", req.Method, route.Path, status)
	}
	for _, h := range protocolHeaders {
		if header.Get(h) != "" && resp.Value.Headers[h] == nil {
			return fmt.Errorf("%s %s %d: header %s is sent but not described", req.Method, route.Path, status, h)
		}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status, Header: header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s %d: %w", req.Method, route.Path, status, err)
	}
	return nil
}

func (d *Doc) checkUndescribedMethod(req *http.Request, status int, header http.Header, body []byte) error {
	var item *openapi3.PathItem
	for tmpl, it := range d.T.Paths.Map() {
		if matchTemplate(tmpl, req.URL.Path) {
			item = it
			break
		}
	}
	if item == nil {
		return ErrNotDescribed
	}
	if req.Method == http.MethodPost {
		// The service's rule: a POST to a path that takes no POST is NOT COVERED, not 405.
		if status != http.StatusNotFound || string(body) != "NOT COVERED" {
			return fmt.Errorf("POST %s (no POST described): answered %d %.40q, want 404 NOT COVERED", req.URL.Path, status, body)
		}
		return nil
	}
	var want []string
	for m := range item.Operations() {
		want = append(want, m)
	}
	got := strings.Split(strings.ReplaceAll(header.Get("Allow"), " ", ""), ",")
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("%s %s: Allow %q, the document describes %v", req.Method, req.URL.Path, header.Get("Allow"), want)
	}
	if status != http.StatusMethodNotAllowed {
		return fmt.Errorf("%s %s: an undescribed method answered %d, want 405", req.Method, req.URL.Path, status)
	}
	return nil
}

// matchTemplate reports whether path fits the path template tmpl ("{x}" is one segment).
func matchTemplate(tmpl, path string) bool {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if strings.HasPrefix(ts[i], "{") && strings.HasSuffix(ts[i], "}") {
			if ps[i] == "" {
				return false
			}
			continue
		}
		if ts[i] != ps[i] {
			return false
		}
	}
	return true
}
