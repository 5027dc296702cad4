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
// data the process uses afterwards fault back in (it keeps running and reading them).
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
}
