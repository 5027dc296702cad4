package portability

import (
	"testing"

	"github.com/scopehygiene/scope-hygiene/pack/internal/srcimports"
)

// TestImports keeps the library pure: nothing from the service, no file system, process or
// network access (the pack command does the I/O).
func TestImports(t *testing.T) {
	srcimports.Check(t, ".", srcimports.ImpureOrService)
}
