package repotest

import (
	"fmt"
	"go/ast"
	"testing"
)

// The house's shape limits (issue 29), for hand-written non-test Go files.
const (
	maxFileLines = 600
	maxFuncLines = 120
)

// TestShape holds every hand-written non-test Go file to maxFileLines lines and every
// function in it to maxFuncLines lines, counted from the func keyword to the closing
// brace. Generated files (ast.IsGenerated) and _test.go files are exempt.
func TestShape(t *testing.T) {
	for _, f := range sourceFiles(t) {
		if f.test || ast.IsGenerated(f.file) {
			continue
		}
		for _, problem := range shapeProblems(f) {
			t.Error(problem)
		}
	}
}

// shapeProblems names what is over a limit in one file: the file with its length,
// each function with its own.
func shapeProblems(f goFile) []string {
	var out []string
	if f.lines > maxFileLines {
		out = append(out, fmt.Sprintf("%s: %d lines, over %d", f.path, f.lines, maxFileLines))
	}
	for _, d := range f.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start, end := f.fset.Position(fn.Pos()).Line, f.fset.Position(fn.End()).Line
		if n := end - start + 1; n > maxFuncLines {
			out = append(out, fmt.Sprintf("%s:%d: func %s: %d lines, over %d",
				f.path, start, funcName(fn), n, maxFuncLines))
		}
	}
	return out
}

// funcName is a function's name, a method's with its receiver type: (*T).m or T.m.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv, star := fn.Recv.List[0].Type, false
	if s, ok := recv.(*ast.StarExpr); ok {
		recv, star = s.X, true
	}
	switch r := recv.(type) { // a generic receiver T[K] is named T
	case *ast.IndexExpr:
		recv = r.X
	case *ast.IndexListExpr:
		recv = r.X
	}
	name := "?"
	if id, ok := recv.(*ast.Ident); ok {
		name = id.Name
	}
	if star {
		return "(*" + name + ")." + fn.Name.Name
	}
	return name + "." + fn.Name.Name
}
