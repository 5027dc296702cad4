package portability

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the library pure: nothing from the service, no file system, process or
// network access (the pack command does the I/O).
func TestImports(t *testing.T) {
	banned := map[string]bool{"os": true, "os/exec": true, "io/fs": true, "net": true, "net/http": true, "syscall": true, "unsafe": true}
	names, _ := filepath.Glob("*.go")
	checked := 0
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), n, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if banned[p] || strings.Contains(p, "scope-hygiene/server") {
				t.Errorf("%s imports %s", n, p)
			}
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("checked %d files", checked)
	}
}
