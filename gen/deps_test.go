package gen

import (
	"os/exec"
	"strings"
	"testing"
)

// TestIndependence fails if gen (or its tests) depends on the engine or on CEL.
func TestIndependence(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "github.com/scopehygiene/scope-hygiene/gen/...").Output()
	if err != nil {
		t.Fatalf("go list failed: %v", err)
	}
	for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		for _, bad := range []string{"github.com/scopehygiene/scope-hygiene/rules", "github.com/scopehygiene/scope-hygiene/evaluator", "cel.dev"} {
			if strings.Contains(p, bad) {
				t.Errorf("forbidden dependency %q", p)
			}
		}
		if p == "github.com/scopehygiene/scope-hygiene" {
			t.Errorf("gen must not import the root package (it embeds the engine's criteria.yaml)")
		}
	}
}
