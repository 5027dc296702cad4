package portability

import (
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/pack/internal/srcimports"
)

// TestImports keeps the library pure: nothing from the service, no file system, process or
// network access (the pack command does the I/O).
func TestImports(t *testing.T) {
	banned := map[string]bool{"os": true, "os/exec": true, "io/fs": true, "net": true, "net/http": true, "syscall": true, "unsafe": true}
	files, err := srcimports.Files(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for _, p := range f.Imports {
			if banned[p] || strings.Contains(p, "scope-hygiene/server") {
				t.Errorf("%s imports %s", f.Name, p)
			}
		}
	}
	if len(files) < 5 {
		t.Fatalf("checked %d files", len(files))
	}
}
