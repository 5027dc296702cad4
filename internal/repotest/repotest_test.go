package repotest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// maxTracked is the largest file the repository keeps outside testdata/ and fixtures.
const maxTracked = 1 << 20

// exceptions are tracked files allowed past the size limit, each with its reason.
var exceptions = map[string]string{
	// The page's pack converter, compiled to WebAssembly; a test in web/web_test.go keeps it fresh.
	"web/static/pack.wasm.gz": "the committed WebAssembly module",
}

// objectMagic are the first bytes of compiled programs and object files.
var objectMagic = [][]byte{
	[]byte("\x7fELF"),        // Linux and most Unix
	{0xfe, 0xed, 0xfa, 0xce}, // Mach-O 32-bit
	{0xfe, 0xed, 0xfa, 0xcf}, // Mach-O 64-bit
	{0xce, 0xfa, 0xed, 0xfe}, // Mach-O 32-bit, little-endian
	{0xcf, 0xfa, 0xed, 0xfe}, // Mach-O 64-bit, little-endian
	{0xca, 0xfe, 0xba, 0xbe}, // Mach-O universal
	[]byte("MZ"),             // Windows PE
	[]byte("\x00asm"),        // WebAssembly, uncompressed
	[]byte("!<arch>\n"),      // ar archives (.a, Go's build cache objects)
}

// tracked is one row of `git ls-files -s`.
type tracked struct {
	mode, path string
}

// problem names what is wrong with one tracked file, or "" if nothing is.
func problem(f tracked, size int64, head []byte) string {
	switch {
	case size == 0:
		return "empty file"
	case isObject(head):
		return "compiled program or object file"
	case f.mode == "100755" && !bytes.HasPrefix(head, []byte("#!")):
		return "executable without a #! line"
	case size > maxTracked && !isFixture(f.path) && exceptions[f.path] == "":
		return fmt.Sprintf("%d bytes, over %d outside testdata/ and fixtures", size, maxTracked)
	}
	return ""
}

func isObject(head []byte) bool {
	for _, m := range objectMagic {
		if bytes.HasPrefix(head, m) {
			return true
		}
	}
	return false
}

// isFixture says whether p lies under a testdata or fixtures directory.
func isFixture(p string) bool {
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if dir == "testdata" || dir == "fixtures" {
			return true
		}
	}
	return false
}

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing to check", err)
	}
	return strings.TrimSpace(string(out))
}

func TestNothingBuiltIsCommitted(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("git", "ls-files", "-s", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	n := 0
	for _, row := range bytes.Split(out, []byte{0}) {
		if len(row) == 0 {
			continue
		}
		meta, p, ok := strings.Cut(string(row), "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			t.Fatalf("git ls-files row %q", row)
		}
		f := tracked{mode: fields[0], path: p}
		if f.mode == "160000" || f.mode == "120000" { // submodules and symbolic links hold no bytes here
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		st, err := os.Stat(full)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 8)
		if fh, err := os.Open(full); err == nil {
			k, _ := fh.Read(head)
			head = head[:k]
			fh.Close()
		}
		if why := problem(f, st.Size(), head); why != "" {
			t.Errorf("%s: %s (remove it with git rm; .gitignore what writes it)", p, why)
		}
		n++
	}
	if n == 0 {
		t.Fatal("git ls-files listed no files")
	}
}

// TestProblem checks the rule on the files this issue found, so the repository test cannot pass
// by accident.
func TestProblem(t *testing.T) {
	elf := []byte("\x7fELF\x02\x01\x01\x00")
	for _, c := range []struct {
		name string
		f    tracked
		size int64
		head []byte
		bad  bool
	}{
		{"loadbench binary", tracked{"100755", "loadbench"}, 26852579, elf, true},
		{"binary without exec bit", tracked{"100644", "tools/x/x"}, 2000, elf, true},
		{"empty json", tracked{"100644", "aud.json"}, 0, nil, true},
		{"exec bit, no #!", tracked{"100755", "notes.txt"}, 10, []byte("hello"), true},
		{"large file", tracked{"100644", "docs/big.png"}, maxTracked + 1, []byte("\x89PNG"), true},
		{"shell script", tracked{"100755", "scripts/test.sh"}, 900, []byte("#!/usr/bin/env"), false},
		{"large testdata", tracked{"100644", "pack/testdata/big.json"}, 5 << 20, []byte("{"), false},
		{"large fixture", tracked{"100644", "server/fixtures/big.json"}, 5 << 20, []byte("{"), false},
		{"the wasm module", tracked{"100644", "web/static/pack.wasm.gz"}, 1634983, []byte{0x1f, 0x8b}, false},
		{"a wasm module elsewhere", tracked{"100644", "web/static/other.wasm"}, 100, []byte("\x00asm\x01"), true},
		{"at the limit", tracked{"100644", "docs/a.png"}, maxTracked, []byte("\x89PNG"), false},
	} {
		if got := problem(c.f, c.size, c.head); (got != "") != c.bad {
			t.Errorf("%s: problem %q, want bad=%v", c.name, got, c.bad)
		}
	}
}
