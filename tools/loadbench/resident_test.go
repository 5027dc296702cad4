package main

import (
	"os"
	"testing"
)

// TestResidentMatchesStatus: the sampler's one-line reading gives the resident set and its
// anonymous part that /proc/<pid>/status reports (VmRSS, RssAnon), within what this process
// allocates between the two reads.
func TestResidentMatchesStatus(t *testing.T) {
	pid := os.Getpid()
	r, anon := resident(pid)
	wantR, wantAnon := rss(pid, "VmRSS:"), rss(pid, "RssAnon:")
	if r <= 0 || anon <= 0 || anon > r {
		t.Fatalf("resident %d, anonymous %d", r, anon)
	}
	const slack = 4 << 20
	if d := r - wantR; d < -slack || d > slack {
		t.Errorf("resident %d, VmRSS %d", r, wantR)
	}
	if d := anon - wantAnon; d < -slack || d > slack {
		t.Errorf("anonymous %d, RssAnon %d", anon, wantAnon)
	}
}
