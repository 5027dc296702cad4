// Package srcimports lists what a package's own (non-test) Go files import, for the tests that
// keep pack, pack/mpp and pack/portability free of file-system, process and network access.
package srcimports

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// File is one non-test Go file and the import paths it names, in source order.
type File struct {
	Name    string
	Imports []string
}

// Files parses the imports of each non-test .go file in dir, in file-name order.
func Files(dir string) ([]File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), n, nil, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		file := File{Name: filepath.Base(n)}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			file.Imports = append(file.Imports, p)
		}
		out = append(out, file)
	}
	return out, nil
}

// Check fails t for every import of dir's own files that banned names, and when dir holds
// fewer than five of them (a check that read nothing proves nothing).
func Check(t testing.TB, dir string, banned func(path string) bool) {
	t.Helper()
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for _, p := range f.Imports {
			if banned(p) {
				t.Errorf("%s imports %s", f.Name, p)
			}
		}
	}
	if len(files) < 5 {
		t.Fatalf("only %d files checked", len(files))
	}
}

// impure are the imports a pure package does without: file system, process, network, cgo.
var impure = map[string]bool{"os": true, "os/exec": true, "io/fs": true, "io/ioutil": true, "C": true, "net": true, "net/http": true, "syscall": true, "unsafe": true}

// Impure says whether path gives a package file-system, process or network access or cgo.
func Impure(path string) bool { return impure[path] }

// ImpureOrService says whether path is impure or part of the service (server/), which the
// packages of pack never import.
func ImpureOrService(path string) bool {
	return impure[path] || strings.Contains(path, "scope-hygiene/server")
}
