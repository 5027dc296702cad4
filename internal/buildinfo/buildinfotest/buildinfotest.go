// Package buildinfotest holds the one check every tool's -version test makes: the output names
// the tool, the module's VCS line and the embedded criteria's id, revision and digest.
package buildinfotest

import (
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// CheckOutput fails t when out, the -version output of tool, lacks any of those lines.
func CheckOutput(t testing.TB, tool, out string) {
	t.Helper()
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tool               " + tool + "\n", ps.ID(), ps.Revision(), ps.Digest(), "vcs revision"} {
		if !strings.Contains(out, want) {
			t.Errorf("-version lacks %q:\n%s", want, out)
		}
	}
}
