package pack

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/scopehygiene/scope-hygiene/pack/internal/srcimports"
)

var update = flag.Bool("update", false, "rewrite the hash-only goldens")

// TestNoFileSystemNoCgo keeps pack buildable for the browser (H15 compiles it to WebAssembly):
// no file-system, process or network access and no cgo in its own files; tools/pack does the I/O.
func TestNoFileSystemNoCgo(t *testing.T) {
	srcimports.Check(t, ".", srcimports.Impure)
}

// TestBuildsForWasm builds pack with GOOS=js GOARCH=wasm.
func TestBuildsForWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(gobin, "build", "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go build: %v\n%s", err, out)
	}
}

// TestHashOnlyGolden pins the hash-only bytes of the claim form and a Letta .af (docs/pack.md):
// the web page must produce exactly these bytes from the same input.
func TestHashOnlyGolden(t *testing.T) {
	for _, c := range []struct {
		golden string
		in     Inputs
		opt    Options
	}{
		{"golden/hash-only-claims.json", Inputs{Records: files(t, td("claims/claims.jsonl"))}, Options{Source: ClaimsJSONL, HashOnly: true, Manifest: ManifestOptions{DeclaredSet: true, DeclaredScopeKeys: []string{"tenant"}}}},
		{"golden/hash-only-letta-af.json", Inputs{Records: files(t, td("letta-af/team.af"))}, Options{Source: LettaAF, HashOnly: true}},
		{"golden/hash-only-leak-letta-af.json", Inputs{Records: files(t, td("leak/letta.af"))}, Options{Source: LettaAF, HashOnly: true}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			_, _, _, body := packed(t, c.in, c.opt)
			path := td(c.golden)
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, body, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./pack -run Golden -update)", err)
			}
			if !bytes.Equal(body, want) {
				t.Fatalf("hash-only bytes changed:\n got %s\nwant %s", body, want)
			}
			// Byte-stable: a second pack gives the same bytes.
			_, _, _, again := packed(t, c.in, c.opt)
			if !bytes.Equal(body, again) {
				t.Fatal("two packs of one input differ")
			}
		})
	}
}
