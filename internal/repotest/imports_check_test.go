package repotest

import (
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"
	"testing"
)

const testModule = "example.com/m"

// synthetic builds a package of one file that imports the given paths ("m" stands for
// the module's path).
func synthetic(t *testing.T, dir string, test bool, imports ...string) goPackage {
	t.Helper()
	var b strings.Builder
	b.WriteString("// Package x is synthetic.\npackage x\n")
	for _, ip := range imports {
		if ip == "m" || strings.HasPrefix(ip, "m/") {
			ip = testModule + ip[1:]
		}
		b.WriteString("import _ " + strconv.Quote(ip) + "\n")
	}
	name := path.Join(dir, "x.go")
	if test {
		name = path.Join(dir, "x_test.go")
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, b.String(), parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return goPackage{dir: dir, files: []goFile{{path: name, test: test, fset: fset, file: f}}}
}

func ruleNamed(t *testing.T, name string) importRule {
	t.Helper()
	for _, r := range importRules {
		if r.name == name {
			return r
		}
	}
	t.Fatalf("no import rule %q", name)
	return importRule{}
}

// TestImportChecksCatch: the import rules and the levels catch what they exist for, so
// the repository's checks cannot pass by accident.
func TestImportChecksCatch(t *testing.T) {
	helper := synthetic(t, "gen/internal/h", false, "cel.dev/cel-go/cel")
	byDir := map[string]goPackage{helper.dir: helper}
	for _, c := range []struct {
		name, rule string
		p          goPackage
		bad        bool
	}{
		{"gen through its own helper", "gen never imports the engine or CEL", synthetic(t, "gen", false, "m/gen/internal/h"), true},
		{"gen's tests", "gen never imports the engine or CEL", synthetic(t, "gen/forget", true, "m/evaluator"), true},
		{"gen and the root package", "gen never imports the engine or CEL", synthetic(t, "gen", false, "m"), true},
		{"gen and its standard library", "gen never imports the engine or CEL", synthetic(t, "gen", false, "encoding/json"), false},
		{"pack's new package", "pack never imports server", synthetic(t, "pack/mpp", false, "m/server/sign"), true},
		{"a store backend", "the store never imports payments", synthetic(t, "server/store/postgres", false, "m/server/x402/gate"), true},
		{"a store backend and settlement", "the store never imports payments", synthetic(t, "server/store/postgres", false, "m/server/settlement"), false},
		{"the evaluator's tests", "evaluator never imports server", synthetic(t, "evaluator", true, "m/server/api"), false},
	} {
		got := ruleNamed(t, c.rule).violations(testModule, byDir, c.p)
		if (len(got) > 0) != c.bad {
			t.Errorf("%s: violations %q, want bad=%v", c.name, got, c.bad)
		}
	}

	for _, c := range []struct {
		p   goPackage
		bad bool
	}{
		{synthetic(t, "server/store", false, "m/server/store/sqlite"), true},
		{synthetic(t, "server/store/sqlite", false, "m/server/store"), false},
		{synthetic(t, "server/api", false, "m/server/engine"), true},
		{synthetic(t, "gen/forget/cmd/gencorpus", false, "m/gen/forget"), false},
		// A new package takes its parent's level until levels places it.
		{synthetic(t, "rules", false, "m/rules/internal/x"), true},
		{synthetic(t, "newtop", false), true},
	} {
		got := levelViolations(testModule, c.p)
		if (len(got) > 0) != c.bad {
			t.Errorf("%s: level violations %q, want bad=%v", c.p.dir, got, c.bad)
		}
	}
}
