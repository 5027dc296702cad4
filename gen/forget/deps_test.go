package forget

import (
	"os/exec"
	"strings"
	"testing"
)

// TestIndependence fails if the oracle (or its tests) depends on the engine, on the
// service, or on CEL: it is the second implementation.
func TestIndependence(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "github.com/scopehygiene/scope-hygiene/gen/forget/...").Output()
	if err != nil {
		t.Fatalf("go list failed: %v", err)
	}
	const mod = "github.com/scopehygiene/scope-hygiene"
	for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		for _, bad := range []string{mod + "/rules", mod + "/evaluator", mod + "/server", mod + "/corpus", "cel.dev"} {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("forbidden dependency %q", p)
			}
		}
		if p == mod {
			t.Errorf("the oracle must not import the root package (it embeds the engine's criteria)")
		}
	}
}
