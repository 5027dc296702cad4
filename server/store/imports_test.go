package store_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestStorageDoesNotDependOnPayments: the store backends (and everything they import from this
// module) never import the payment layer; settlement records live in server/settlement.
func TestStorageDoesNotDependOnPayments(t *testing.T) {
	const module = "github.com/scopehygiene/scope-hygiene/"
	seen := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] || !strings.HasPrefix(path, module) {
			return
		}
		seen[path] = true
		if strings.HasPrefix(path, module+"server/x402") {
			t.Errorf("storage imports the payment layer: %s", path)
			return
		}
		p, err := build.Default.Import(path, ".", 0)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		for _, imp := range p.Imports {
			walk(imp)
		}
	}
	for _, p := range []string{"server/store", "server/store/sqlite", "server/store/postgres", "server/settlement"} {
		walk(module + p)
	}
	if len(seen) < 4 {
		t.Fatalf("walked only %d packages", len(seen))
	}
}
