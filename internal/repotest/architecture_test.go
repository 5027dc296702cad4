package repotest

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeSpan is a backticked span of Markdown.
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// repoPathShape is what a repository path looks like: slash-separated names, no spaces,
// no placeholder (<name>), not a URL route (those start with a slash).
var repoPathShape = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.*-]+)*/?$`)

// fileExtensions mark a span without a slash as a file name (criteria.yaml) rather than a Go
// identifier (rules.LoadAny).
var fileExtensions = []string{".go", ".md", ".yaml", ".yml", ".json", ".sh", ".mod", ".sql"}

// docPaths lists, once each, the spans of a Markdown text that name repository paths.
func docPaths(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		s := m[1]
		if seen[s] || !repoPathShape.MatchString(s) || strings.Contains(s, "..") {
			continue
		}
		if strings.Contains(s, "/") || hasFileExtension(s) {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func hasFileExtension(s string) bool {
	for _, ext := range fileExtensions {
		if path.Ext(s) == ext {
			return true
		}
	}
	return false
}

// TestArchitecturePaths: every repository path docs/architecture.md names in backticks
// exists, so the page stays true as the tree changes.
func TestArchitecturePaths(t *testing.T) {
	root := repoRoot(t)
	text, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths := docPaths(string(text))
	if len(paths) < 20 {
		t.Fatalf("docs/architecture.md names %d repository paths; the reading is broken", len(paths))
	}
	for _, p := range paths {
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(p, "/"))))
		if err != nil || len(matches) == 0 {
			t.Errorf("docs/architecture.md names %s, which does not exist", p)
		}
	}
}

func TestDocPaths(t *testing.T) {
	got := docPaths("`server/api/audit.go` and `criteria.yaml`, `rules.LoadAny`, `POST /audit`, " +
		"`/v1/<name>/audit`, `criteria/<name>.yaml`, `-store`, `gen/`, `New`, `../shared`, `criteria.yaml`")
	want := []string{"server/api/audit.go", "criteria.yaml", "gen/"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("docPaths = %q, want %q", got, want)
	}
}
