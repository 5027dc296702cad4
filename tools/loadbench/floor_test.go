package main

import (
	"strings"
	"testing"
	"time"
)

// TestFloorCeiling: what lies outside the engine bounds the c = 32 rate on n cores at
// n / (1 + outside/engine); below 1.5 the printed line says no server reaches the target here.
func TestFloorCeiling(t *testing.T) {
	f := floor{engine: time.Millisecond, sign: 300 * time.Microsecond, transfer: 40 * time.Microsecond,
		ledger: 60 * time.Microsecond, report: 100_000}
	if got := f.outside(); got < 0.3999 || got > 0.4001 {
		t.Fatalf("outside %v, want 0.4", got)
	}
	if got := f.ceiling(2); got < 1.4285 || got > 1.4286 {
		t.Fatalf("ceiling on 2 cores %v, want 2/1.4", got)
	}
	for _, c := range []struct {
		cores int
		want  string
	}{
		{2, "the most any server reaches is 1.43x the in-process rate (target 1.5): not reachable on this machine by any server"},
		{4, "the most any server reaches is 2.86x the in-process rate (target 1.5): reachable on this machine only if"},
	} {
		var b strings.Builder
		f.print(&b, c.cores)
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%d cores: missing %q in\n%s", c.cores, c.want, b.String())
		}
	}
}

// TestLoopbackExchange: each exchange moves the whole body to the peer and the whole answer back,
// answers of any size in turn over one connection.
func TestLoopbackExchange(t *testing.T) {
	l, err := newLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	body := make([]byte, 300_000)
	for i, answer := range []int{1, 120_000, 70_000, 500_000} {
		if err := l.exchange(body, answer); err != nil {
			t.Fatalf("answer of %d bytes: %v", answer, err)
		}
		if got, want := l.received.Load(), int64((i+1)*len(body)); got != want {
			t.Fatalf("the peer read %d bytes after %d exchanges, want %d", got, i+1, want)
		}
	}
}
