package mpp

import (
	"testing"

	"github.com/scopehygiene/scope-hygiene/pack/internal/srcimports"
)

// TestImports keeps the package system pure and buildable for the browser: nothing from the
// service, no file system, process or network access and no cgo (the pack command does the I/O).
func TestImports(t *testing.T) {
	srcimports.Check(t, ".", srcimports.ImpureOrService)
}
