package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/web"
)

// TestPageMount: the page answers GET at / and /assets/ with its policy; a POST there is still
// NOT COVERED, and without a page / is the static 404.
func TestPageMount(t *testing.T) {
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.Page = web.Handler() })
	for _, p := range []string{"/", "/assets/app.js", "/assets/pack.wasm"} {
		r := h.do(http.MethodGet, p, nil, nil)
		if r.Status != 200 || r.Header.Get("Content-Security-Policy") != web.CSP {
			t.Errorf("GET %s: %d, CSP %q", p, r.Status, r.Header.Get("Content-Security-Policy"))
		}
	}
	if r := h.do(http.MethodGet, "/", nil, nil); !strings.Contains(string(r.Body), `<script src="/assets/app.js"`) {
		t.Error("GET / is not the page")
	}
	for _, p := range []string{"/", "/assets/app.js"} {
		if r := h.do(http.MethodPost, p, nil, nil); r.Status != 404 || string(r.Body) != api.NotCovered {
			t.Errorf("POST %s: %d %q", p, r.Status, r.Body)
		}
	}
	if r := h.do(http.MethodGet, "/assets/missing.js", nil, nil); r.Status != 404 {
		t.Errorf("GET a missing asset: %d", r.Status)
	}
	bare := newHarness(t, sqliteStore(t))
	if r := bare.do(http.MethodGet, "/", nil, nil); r.Status != 404 {
		t.Errorf("GET / without a page: %d", r.Status)
	}
}
