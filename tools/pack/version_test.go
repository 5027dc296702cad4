package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/internal/buildinfo/buildinfotest"
)

// TestVersion: -version names the tool, the module and the embedded criteria's id, revision
// and digest.
func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-version"}, &out, &errb); code != 0 {
		t.Fatalf("-version: exit %d: %s", code, errb.String())
	}
	buildinfotest.CheckOutput(t, "pack", out.String())
}

// TestVersionOfABuiltBinary: a binary built in the repository states the commit it was built
// from (the toolchain's VCS stamp, asked for explicitly: GOFLAGS may turn it off).
func TestVersionOfABuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not in a git checkout: ", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Skip("a git worktree (.git is a file): the Go toolchain stamps no VCS facts there")
	}
	bin := filepath.Join(t.TempDir(), "pack")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "vcs revision       " + strings.TrimSpace(string(head)); !strings.Contains(string(out), want) {
		t.Errorf("-version of the built binary lacks %q:\n%s", want, out)
	}
}
