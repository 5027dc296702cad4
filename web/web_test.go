package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/web/internal/wasmbuild"
)

func get(t *testing.T, path string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	return rec.Result()
}

// TestPageHeaders: every answer carries the strict policy; the page and each file have their type.
func TestPageHeaders(t *testing.T) {
	for _, tc := range []struct{ path, ctype string }{
		{"/", "text/html; charset=utf-8"},
		{"/assets/app.js", "text/javascript; charset=utf-8"},
		{"/assets/app.css", "text/css; charset=utf-8"},
		{"/assets/wasm_exec.js", "text/javascript; charset=utf-8"},
		{"/assets/icon.svg", "image/svg+xml"},
		{"/assets/pack.wasm", "application/wasm"},
	} {
		r := get(t, tc.path, nil)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s: %d %q", tc.path, r.StatusCode, r.Header.Get("Content-Type"))
		}
		if r.Header.Get("Content-Security-Policy") != CSP || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", tc.path, r.Header)
		}
	}
	for _, p := range []string{"/assets/", "/assets/pack.wasm.gz", "/assets/index.html", "/assets/../web.go", "/assets/nope.js", "/other"} {
		if r := get(t, p, nil); r.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", p, r.StatusCode)
		}
	}
}

// TestCSPAllowsOnlySelfAndWasm: no source other than the page's own origin, and of the unsafe
// keywords exactly 'wasm-unsafe-eval'.
func TestCSPAllowsOnlySelfAndWasm(t *testing.T) {
	for _, d := range strings.Split(CSP, ";") {
		for _, tok := range strings.Fields(d)[1:] {
			switch tok {
			case "'self'", "'none'", "'wasm-unsafe-eval'":
			default:
				t.Errorf("directive %q allows %s", strings.TrimSpace(d), tok)
			}
		}
	}
	if !strings.Contains(CSP, "default-src 'none'") || !strings.Contains(CSP, "script-src 'self' 'wasm-unsafe-eval'") {
		t.Fatalf("CSP %q", CSP)
	}
}

// TestModuleEncoding: gzip as committed when accepted, inflated otherwise; both the same module.
func TestModuleEncoding(t *testing.T) {
	gz := get(t, "/assets/pack.wasm", map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
	if gz.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip not sent: %v", gz.Header)
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := io.ReadAll(zr)
	plain := get(t, "/assets/pack.wasm", map[string]string{"Accept-Encoding": "gzip;q=0"})
	b, _ := io.ReadAll(plain.Body)
	if plain.Header.Get("Content-Encoding") != "" || !bytes.Equal(a, b) || !bytes.HasPrefix(b, []byte("\x00asm")) {
		t.Fatalf("plain %q, %d vs %d bytes", plain.Header.Get("Content-Encoding"), len(a), len(b))
	}
}

// TestNoForbiddenWordsOrRemoteOrigins: the page's own files never use the words the criteria
// forbid and never name another origin (no CDN, no fonts).
func TestNoForbiddenWordsOrRemoteOrigins(t *testing.T) {
	words := regexp.MustCompile(`(?i)\b(score|scores|scoring|grade|grades|grading|rating|ratings|band|bands)\b`)
	remote := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|url\(`)
	for _, name := range []string{"index.html", "app.js", "app.css", "icon.svg"} {
		b, err := fs.ReadFile(Files(), name)
		if err != nil {
			t.Fatal(err)
		}
		if m := words.Find(b); m != nil {
			t.Errorf("%s uses the word %q", name, m)
		}
		if m := remote.Find(bytes.ReplaceAll(b, []byte("http://www.w3.org/2000/svg"), nil)); m != nil {
			t.Errorf("%s names another origin: %q", name, m)
		}
	}
}

// TestWasmNotStale rebuilds the converter from the current pack/ and server/sign/ and compares
// it with the committed module; run `go generate ./web` when it fails.
func TestWasmNotStale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the WebAssembly module")
	}
	fresh, err := wasmbuild.Build("..")
	if err != nil {
		t.Fatal(err)
	}
	gz, err := fs.ReadFile(Files(), "pack.wasm.gz")
	if err != nil {
		t.Fatal(err)
	}
	committed, err := wasmbuild.Gunzip(gz)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatalf("web/static/pack.wasm.gz is stale (%d bytes committed, %d built): run go generate ./web", len(committed), len(fresh))
	}
	glue, err := wasmbuild.WasmExec()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile("static/wasm_exec.js"); !bytes.Equal(b, glue) {
		t.Fatal("web/static/wasm_exec.js is not the toolchain's: run go generate ./web")
	}
}
