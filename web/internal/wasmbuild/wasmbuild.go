// Package wasmbuild builds the page's WebAssembly converter (web/packwasm) the one way both
// `go generate ./web` and the staleness test use, so the committed artefact can be rebuilt from
// whatever pack/ and server/sign/ are.
package wasmbuild

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Package is the import path compiled to WebAssembly.
const Package = "github.com/scopehygiene/scope-hygiene/web/packwasm"

// Build compiles packwasm for GOOS=js GOARCH=wasm and returns the module bytes. The flags make
// the output a function of the sources and the toolchain only (no paths, no VCS stamp).
func Build(repoRoot string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "packwasm")
	if err != nil {
		return nil, fmt.Errorf("wasmbuild: %w", err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "pack.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", out, Package)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("wasmbuild: go build: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return os.ReadFile(out)
}

// Gzip compresses a module deterministically (no name, no time in the header).
func Gzip(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Gunzip reverses Gzip.
func Gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// WasmExec returns the toolchain's JavaScript glue for js/wasm modules, which must match the
// toolchain that built the module.
func WasmExec() ([]byte, error) {
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("wasmbuild: go env GOROOT: %w", err)
	}
	return os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", "wasm_exec.js"))
}
