package repotest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// importRule forbids a part of the tree to depend on others. from and the module
// entries of forbid are directories from the root, each covering the packages below it
// ("." is the root package alone); the other entries of forbid are import path prefixes
// of other modules.
type importRule struct {
	name   string
	from   string
	forbid []string
	// tests: the rule holds for the packages' tests too, not only for what they build.
	tests bool
}

// importRules are the house's named import rules (README, docs/architecture.md). A rule
// holds for everything the packages depend on inside the module, not only what they
// import directly.
var importRules = []importRule{
	{name: "gen never imports the engine or CEL", from: "gen",
		forbid: []string{"rules", "evaluator", ".", "cel.dev/", "github.com/google/cel-go"}, tests: true},
	{name: "evaluator never imports server", from: "evaluator", forbid: []string{"server"}},
	{name: "rules never imports evaluator", from: "rules", forbid: []string{"evaluator"}},
	{name: "pack never imports server", from: "pack", forbid: []string{"server"}},
	{name: "the store never imports payments", from: "server/store",
		forbid: []string{"server/x402", "github.com/gagliardetto/"}},
}

func TestImportRules(t *testing.T) {
	module := modulePath(t)
	pkgs := packages(sourceFiles(t))
	byDir := map[string]goPackage{}
	for _, p := range pkgs {
		byDir[p.dir] = p
	}
	for _, r := range importRules {
		t.Run(r.name, func(t *testing.T) {
			covered := 0
			for _, p := range pkgs {
				if !under(p.dir, r.from) {
					continue
				}
				covered++
				for _, problem := range r.violations(module, byDir, p) {
					t.Error(problem)
				}
			}
			if covered == 0 {
				t.Errorf("no package under %s: the rule checks nothing", r.from)
			}
		})
	}
}

// violations names each forbidden dependency of p.
func (r importRule) violations(module string, byDir map[string]goPackage, p goPackage) []string {
	var out []string
	for _, dep := range dependencies(module, byDir, p, r.tests) {
		if forbidden(dep, r.forbid) {
			out = append(out, fmt.Sprintf("%s depends on %s", p.dir, dep))
		}
	}
	return out
}

// dependencies lists what p depends on: module packages by directory and other
// modules' packages by import path, transitively through the module's packages (their
// non-test files). With tests, p's own test files count too.
func dependencies(module string, byDir map[string]goPackage, p goPackage, tests bool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(dep string) {
		if !seen[dep] {
			seen[dep] = true
			out = append(out, dep)
		}
	}
	queue := []goPackage{p}
	visited := map[string]bool{p.dir: true}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		var paths []string
		paths = append(paths, q.allImports(false)...)
		if tests && q.dir == p.dir {
			paths = append(paths, q.allImports(true)...)
		}
		for _, ip := range paths {
			dir, inModule := moduleDir(module, ip)
			if !inModule {
				add(ip)
				continue
			}
			add(dir)
			if next, ok := byDir[dir]; ok && !visited[dir] {
				visited[dir] = true
				queue = append(queue, next)
			}
		}
	}
	sort.Strings(out)
	return out
}

func forbidden(dep string, forbid []string) bool {
	for _, f := range forbid {
		if strings.Contains(f, ".") && f != "." { // another module's import path prefix
			if strings.HasPrefix(dep, f) {
				return true
			}
			continue
		}
		if under(dep, f) {
			return true
		}
	}
	return false
}

// levels place every package of the module; a package imports only packages of lower
// levels (its tests aside). The longest matching directory decides. Level 0 is data and
// leaf helpers; 1 the rule compiler, the oracle and the leaves of the caller side and of
// the service; 2 the engine and what builds on one leaf; 3 the corpus, the package lifecycle
// and the metrics; 4 the API; 5 what mounts the API and the client; 6 the page and the
// commands' programs; 7 the commands.
var levels = map[string]int{
	".":                  0, // criteria.yaml, embedded
	"schema":             0,
	"faults":             0,
	"internal/repotest":  0,
	"gen/internal":       0,
	"evaluator/internal": 0,
	// the engines' two JSON readers share the string decoder of evaluator/internal/jsonstr (0)
	"evaluator/internal/jsontree": 1,
	"evaluator/internal/jsonlex":  1,
	"pack/internal":               0,
	"server/internal":             0,
	"web/internal":                0,
	"rules":                       1,
	"gen":                         1,
	"pack":                        1,
	"server/sign":                 1,
	"server/settlement":           1,
	"server/limit":                1,
	"server/siwx":                 1,
	"server/store":                1,
	"evaluator":                   2,
	"internal/buildinfo":          2,
	"pack/bagit":                  2,
	"pack/mem0history":            2,
	"pack/mpp":                    2,
	"pack/portability":            3,
	"pack/roundtrip":              2,
	"server/store/":               2, // the backends and their shared suite (not server/store itself)
	"server/x402":                 2,
	"server/freetier":             2,
	"server/metrics":              3,
	"corpus":                      3,
	"server/api":                  4,
	"server/apidoc":               4,
	"server/x402/x402test":        3,
	"server/engine":               5,
	"server/mcp":                  5,
	"server/x402/gate":            5,
	"client":                      5,
	"client/session":              6,
	"web":                         6,
	"web/internal/genwasm":        6,
	"gen/cmd":                     6,
	"gen/forget/cmd":              6,
	"server/mcp/hosttest":         6,
	"server/x402/e2e":             6,
	"tools":                       7,
	"server/metrics/tripwire":     2,
	"tools/rules/internal":        6,
}

// levelOf finds a directory's level by the longest entry of levels that covers it.
func levelOf(dir string) (int, bool) {
	best, level := -1, 0
	for prefix, l := range levels {
		covers := under(dir, prefix)
		if strings.HasSuffix(prefix, "/") {
			covers = strings.HasPrefix(dir, prefix)
		}
		if prefix == "." {
			covers = dir == "."
		}
		if covers && len(prefix) > best {
			best, level = len(prefix), l
		}
	}
	return level, best >= 0
}

// TestImportsPointDown holds the levels: every package has one, and imports only
// packages of lower levels.
func TestImportsPointDown(t *testing.T) {
	module := modulePath(t)
	for _, p := range packages(sourceFiles(t)) {
		for _, problem := range levelViolations(module, p) {
			t.Error(problem)
		}
	}
}

// levelViolations names p's imports of packages at its level or above, or p itself
// when it has no level.
func levelViolations(module string, p goPackage) []string {
	from, ok := levelOf(p.dir)
	if !ok {
		return []string{p.dir + " has no level: add it to levels and to docs/architecture.md"}
	}
	var out []string
	for _, dep := range p.imports(module, false) {
		if to, ok := levelOf(dep); ok && to >= from {
			out = append(out, fmt.Sprintf("%s (level %d) imports %s (level %d): imports point down", p.dir, from, dep, to))
		}
	}
	return out
}

// TestPackageDocs: each package has a doc comment naming its job, on its non-test files
// (on its test files for a package of tests only).
func TestPackageDocs(t *testing.T) {
	for _, p := range packages(sourceFiles(t)) {
		test := true
		for _, f := range p.files {
			if !f.test {
				test = false
				break
			}
		}
		documented := false
		for _, f := range p.files {
			if f.test == test && f.file.Doc != nil && strings.TrimSpace(f.file.Doc.Text()) != "" {
				documented = true
				break
			}
		}
		if !documented {
			t.Errorf("%s: no package doc comment", p.dir)
		}
	}
}
