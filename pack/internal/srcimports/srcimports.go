// Package srcimports lists what a package's own (non-test) Go files import, for the tests that
// keep pack, pack/mpp and pack/portability free of file-system, process and network access.
package srcimports

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
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

// Offending lists, as "file imports path", every import of dir's own files that banned names;
// n is how many files were read.
func Offending(dir string, banned func(path string) bool) (offences []string, n int, err error) {
	files, err := Files(dir)
	if err != nil {
		return nil, 0, err
	}
	for _, f := range files {
		for _, p := range f.Imports {
			if banned(p) {
				offences = append(offences, f.Name+" imports "+p)
			}
		}
	}
	return offences, len(files), nil
}

// impure are the imports a pure package does without: file system, process, network, cgo.
var impure = map[string]bool{"os": true, "os/exec": true, "io/fs": true, "io/ioutil": true, "C": true, "net": true, "net/http": true, "syscall": true, "unsafe": true}

// Impure says whether path gives a package file-system, process or network access or cgo.
func Impure(path string) bool { return impure[path] }
