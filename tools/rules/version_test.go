package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// TestVersion: -version names the tool, the module and the embedded criteria's id, revision
// and digest.
func TestVersion(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-version"}, &out, &errb); code != 0 {
		t.Fatalf("-version: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"tool               rules\n", ps.ID(), ps.Revision(), ps.Digest(), "vcs revision"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-version lacks %q:\n%s", want, out.String())
		}
	}
}
