package mpp

import (
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/pack/internal/srcimports"
)

// TestImports keeps the package system pure and buildable for the browser: nothing from the
// service, no file system, process or network access and no cgo (the pack command does the I/O).
func TestImports(t *testing.T) {
	offences, n, err := srcimports.Offending(".", func(p string) bool {
		return srcimports.Impure(p) || strings.Contains(p, "scope-hygiene/server")
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offences {
		t.Error(o)
	}
	if n < 5 {
		t.Fatalf("checked %d files", n)
	}
}
