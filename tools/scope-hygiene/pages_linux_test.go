//go:build linux

package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile is this process's resident file-backed memory in kB.
func rssFile(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("RssFile: %q", rest)
			}
			return n
		}
	}
	t.Skip("no RssFile line")
	return 0
}

// TestDropStartPages: the binary's read pages leave the resident set, and the code and read-only
// data the process uses afterwards fault back in (it keeps running and reading them); the read-only
// data is marked for random access, so a later fault reads back its own page, not its neighbours.
func TestDropStartPages(t *testing.T) {
	before := rssFile(t)
	if err := dropStartPages(); err != nil {
		t.Fatal(err)
	}
	after := rssFile(t)
	if after >= before {
		t.Fatalf("resident file pages %d kB before, %d kB after", before, after)
	}
	if got := strings.Repeat(timeoutBody, 2); got != timeoutBody+timeoutBody {
		t.Fatal("read-only data changed after the pages were dropped")
	}
	if n := randomReadMappings(t); n == 0 {
		t.Fatal("no read-only mapping of the binary is marked for random access (MADV_RANDOM)")
	}
}

// randomReadMappings counts the binary's read-only data mappings whose VmFlags carry "rr" (the
// kernel reads no pages around a fault there).
func randomReadMappings(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skip("no /proc/self/exe")
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps")
	}
	n, ours := 0, false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			ours = len(f) == 6 && f[5] == exe && f[1] == "r--p"
		case ours && len(f) > 0 && f[0] == "VmFlags:":
			for _, fl := range f[1:] {
				if fl == "rr" {
					n++
				}
			}
		}
	}
	return n
}
