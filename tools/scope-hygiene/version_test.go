package main

import (
	"bytes"
	"testing"

	"github.com/scopehygiene/scope-hygiene/internal/buildinfo/buildinfotest"
)

// TestVersion: -version names the tool, the module and the embedded criteria's id, revision
// and digest.
func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"-version"}, &out, &errb); code != 0 {
		t.Fatalf("-version: exit %d: %s", code, errb.String())
	}
	buildinfotest.CheckOutput(t, "scope-hygiene", out.String())
}
