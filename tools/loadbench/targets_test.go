package main

import (
	"strings"
	"testing"
	"time"
)

// TestFigures: the three figures of issue 28 from one store's run: the client's time at c = 1
// less the in-process engine's and the ledger's, the highest level's rate over the in-process
// rate, and its peak resident set over the bodies in flight, each against its target; and the CPU
// an HTTP audit costs (server and load generator) against the budget the rate target leaves.
func TestFigures(t *testing.T) {
	m := memory{inproc: 500, steps: []stepMean{{step: "ledger", mean: 600 * time.Microsecond},
		{step: "client_request", mean: 3 * time.Millisecond}}}
	top := result{route: "/audit", c: 32, rate: 800, peakRSS: 60_000_000, peakAnon: 35_000_000}
	f, ok := figures(m, top, 10_000_000)
	if !ok {
		t.Fatal("figures not measured")
	}
	if f.engine != 2*time.Millisecond || f.overhead != 400*time.Microsecond || f.scale != 1.6 || f.memory != 6 {
		t.Fatalf("figures %+v", f)
	}
	// 10% of a 2 ms engine is under the 0.3 ms floor: the floor is the target.
	if f.overheadTarget() != overheadFloor {
		t.Fatalf("target %v", f.overheadTarget())
	}
	f.serverCPU, f.clientCPU, f.engineCPU, f.cores = 2400*time.Microsecond, 300*time.Microsecond, 2*time.Millisecond, 2
	var b strings.Builder
	f.print(&b, "sqlite")
	for _, want := range []string{"= 0.400 ms = 20% of the engine; target <= 0.300 ms: does not hold",
		"c = 32 audits/s / in-process single-thread rate = 1.60; target >= 1.5: holds",
		"c = 32 CPU an audit: server 2.400 ms + loadbench 0.300 ms = 1.35x the in-process engine's 2.000 ms; the rate target on 2 cores needs <= 1.33x: does not hold",
		"peak RSS / bodies in flight = 6.0 (the anonymous part 3.5, the binary's pages the rest); target <= 6: holds"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	if _, ok := figures(memory{}, top, 1); ok {
		t.Error("figures without the interleaved run")
	}
}
