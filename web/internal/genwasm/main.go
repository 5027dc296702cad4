// Command genwasm writes web/static/pack.wasm.gz and web/static/wasm_exec.js (run by
// `go generate ./web` from the web directory).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/scopehygiene/scope-hygiene/web/internal/wasmbuild"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genwasm:", err)
		os.Exit(1)
	}
}

func run() error {
	mod, err := wasmbuild.Build("..")
	if err != nil {
		return err
	}
	gz, err := wasmbuild.Gzip(mod)
	if err != nil {
		return err
	}
	glue, err := wasmbuild.WasmExec()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join("static", "pack.wasm.gz"), gz, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join("static", "wasm_exec.js"), glue, 0o644)
}
