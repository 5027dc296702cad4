// Package web is the service's one page: a criteria explorer, a private pre-check that builds
// the hash-only submission in the browser with pack compiled to WebAssembly, and a viewer that
// verifies a signed result against the key /criteria publishes before it renders it.
//
// Every file is embedded; the page loads nothing from elsewhere (no CDN, no fonts) and runs
// under a Content-Security-Policy that allows its own origin and, for the WebAssembly module,
// exactly 'wasm-unsafe-eval'.
package web

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:generate go run ./internal/genwasm

//go:embed static
var static embed.FS

// CSP is the page's Content-Security-Policy: its own origin only, no inline script or style,
// and WebAssembly compilation for the converter.
const CSP = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// AssetPrefix is the path under which the page's files are served.
const AssetPrefix = "/assets/"

// Files is the embedded page (index.html, the scripts, the style, the WebAssembly module).
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic("web: embedded static directory missing") // a build defect, not a runtime state
	}
	return sub
}

var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".wasm": "application/wasm",
}

// Handler serves GET and HEAD of "/" (the page) and of AssetPrefix + file name.
func Handler() http.Handler {
	files := Files()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := "index.html"
		if r.URL.Path != "/" {
			name = strings.TrimPrefix(r.URL.Path, AssetPrefix)
			if name == r.URL.Path || name == "" || strings.Contains(name, "/") || name == "index.html" {
				http.NotFound(w, r)
				return
			}
		}
		if name == "pack.wasm" {
			serveModule(w, r, files)
			return
		}
		b, err := fs.ReadFile(files, name)
		ct, known := types[path.Ext(name)]
		if err != nil || !known || strings.HasSuffix(name, ".gz") {
			http.NotFound(w, r)
			return
		}
		h.Set("Content-Type", ct)
		http.ServeContent(w, r, "", zeroTime, bytes.NewReader(b))
	})
}

// serveModule sends the committed gzip form as is to a browser that accepts gzip (all do) and
// inflates it otherwise.
func serveModule(w http.ResponseWriter, r *http.Request, files fs.FS) {
	gz, err := fs.ReadFile(files, "pack.wasm.gz")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", types[".wasm"])
	h.Add("Vary", "Accept-Encoding")
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		http.ServeContent(w, r, "", zeroTime, bytes.NewReader(gz))
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		http.Error(w, "module unreadable", http.StatusInternalServerError)
		return
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		http.Error(w, "module unreadable", http.StatusInternalServerError)
		return
	}
	http.ServeContent(w, r, "", zeroTime, bytes.NewReader(raw))
}

func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := strings.TrimRight(strings.ReplaceAll(params, " ", ""), "0")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && q != "q=" && q != "q=0." {
			return true
		}
	}
	return false
}

// zeroTime makes http.ServeContent send no Last-Modified (embedded files have no time).
var zeroTime time.Time
