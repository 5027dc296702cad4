package repotest

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// goFile is one Go source file of the module, parsed.
type goFile struct {
	path  string // slash-separated, from the repository root
	test  bool   // a _test.go file
	lines int    // newlines, as wc -l counts
	fset  *token.FileSet
	file  *ast.File
}

// goPackage is the files of one directory of the module.
type goPackage struct {
	dir   string // slash-separated, "." for the root
	files []goFile
}

// sourceFiles lists the module's Go files that git tracks or would track (ignored scratch
// directories aside), parsed with their comments.
func sourceFiles(t *testing.T) []goFile {
	t.Helper()
	root := repoRoot(t)
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.go")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []goFile
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" || isFixture(p) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, parser.ParseComments)
		if err != nil {
			t.Fatalf("parse %s: %v", p, err)
		}
		files = append(files, goFile{path: p, test: strings.HasSuffix(p, "_test.go"),
			lines: bytes.Count(src, []byte("\n")), fset: fset, file: f})
	}
	if len(files) == 0 {
		t.Fatal("git ls-files listed no Go files")
	}
	return files
}

// packages groups the files by directory, in directory order.
func packages(files []goFile) []goPackage {
	byDir := map[string]*goPackage{}
	var dirs []string
	for _, f := range files {
		d := path.Dir(f.path)
		if byDir[d] == nil {
			byDir[d] = &goPackage{dir: d}
			dirs = append(dirs, d)
		}
		byDir[d].files = append(byDir[d].files, f)
	}
	sort.Strings(dirs)
	out := make([]goPackage, len(dirs))
	for i, d := range dirs {
		out[i] = *byDir[d]
	}
	return out
}

// imports lists the module packages (as directories from the root, "." for the root
// package) that the files import; test says which files count.
func (p goPackage) imports(module string, test bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range p.files {
		if f.test != test {
			continue
		}
		for _, imp := range f.file.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			if d, ok := moduleDir(module, ip); ok && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	sort.Strings(out)
	return out
}

// allImports lists every import path of the files, the module's and others'.
func (p goPackage) allImports(test bool) []string {
	var out []string
	for _, f := range p.files {
		if f.test != test {
			continue
		}
		for _, imp := range f.file.Imports {
			if ip, err := strconv.Unquote(imp.Path.Value); err == nil {
				out = append(out, ip)
			}
		}
	}
	return out
}

// moduleDir maps an import path inside the module to its directory from the root.
func moduleDir(module, importPath string) (string, bool) {
	if importPath == module {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(importPath, module+"/"); ok {
		return rest, true
	}
	return "", false
}

// modulePath reads the module line of go.mod.
func modulePath(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod has no module line")
	return ""
}

// under says whether dir is pkg or lies below it.
func under(dir, pkg string) bool {
	return dir == pkg || strings.HasPrefix(dir, pkg+"/")
}
