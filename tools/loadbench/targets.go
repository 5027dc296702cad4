package main

import (
	"fmt"
	"io"
	"time"
)

// The three figures of issue 28, per store, each from one run (the c = 1 figure from the slices
// that interleave HTTP with the in-process engine, the other two from the highest level of
// /audit against that same in-process rate).
const (
	// overheadFloor and overheadShare: at concurrency 1, what HTTP adds beyond the in-process
	// engine and the ledger commit is at most 0.3 ms, or 10% of the engine where that is larger.
	overheadFloor = 300 * time.Microsecond
	overheadShare = 0.10
	// targetScale: audits a second at the highest level at least 1.5 times the in-process
	// single-thread rate.
	targetScale = 1.5
	// targetMemory: the peak resident set at the highest level at most 6 times the bodies in
	// flight.
	targetMemory = 6.0
)

// targets are one store's figures of issue 28.
type targets struct {
	engine   time.Duration // the in-process engine's mean audit, interleaved with HTTP at c = 1
	ledger   time.Duration // the server's mean ledger step at c = 1
	client   time.Duration // the client's mean request at c = 1
	overhead time.Duration // client - (engine + ledger)
	scale    float64       // audits/s at the highest level / the in-process rate
	memory   float64       // peak RSS at the highest level / the bodies in flight
	anon     float64       // its anonymous part (the Go runtime's memory) / the bodies in flight
	c        int           // the highest level
	// The CPU the scale target allows: at the highest level, what the server and this load
	// generator spend on an HTTP audit against what the in-process engine spends on one, on
	// cores cores. 1.5× the in-process rate needs the first at most cores/1.5 times the second.
	serverCPU, clientCPU, engineCPU time.Duration
	cores                           int
}

// figures computes a store's targets from its memory (the interleaved c = 1 slices) and its
// /audit result at the highest level; ok is false when the run has not measured them.
func figures(m memory, top result, inFlight int64) (targets, bool) {
	if m.inproc <= 0 || inFlight <= 0 {
		return targets{}, false
	}
	t := targets{engine: time.Duration(float64(time.Second) / m.inproc), c: top.c}
	for _, s := range m.steps {
		switch s.step {
		case "ledger":
			t.ledger = s.mean
		case "client_request":
			t.client = s.mean
		}
	}
	if t.client == 0 {
		return targets{}, false
	}
	t.overhead = t.client - t.engine - t.ledger
	t.scale = top.rate / m.inproc
	t.memory = float64(top.peakRSS) / float64(inFlight)
	t.anon = float64(top.peakAnon) / float64(inFlight)
	t.serverCPU, t.clientCPU = top.serverCPU, top.clientCPU
	return t, true
}

// overheadTarget is the c = 1 figure's target for an engine of this speed.
func (t targets) overheadTarget() time.Duration {
	return max(overheadFloor, time.Duration(overheadShare*float64(t.engine)))
}

// print writes the store's three figures, each with its target and whether it holds.
func (t targets) print(w io.Writer, store string) {
	fmt.Fprintf(w, "%s: c = 1: client %.3f ms - (in-process engine %.3f + ledger %.3f) = %.3f ms = %.0f%% of the engine; target <= %.3f ms: %s\n",
		store, ms(t.client), ms(t.engine), ms(t.ledger), ms(t.overhead), 100*float64(t.overhead)/float64(t.engine),
		ms(t.overheadTarget()), holds(t.overhead <= t.overheadTarget()))
	fmt.Fprintf(w, "%s: c = %d audits/s / in-process single-thread rate = %.2f; target >= %.1f: %s\n",
		store, t.c, t.scale, targetScale, holds(t.scale >= targetScale))
	if t.engineCPU > 0 && t.cores > 0 {
		cpu := float64(t.serverCPU+t.clientCPU) / float64(t.engineCPU)
		budget := float64(t.cores) / targetScale
		fmt.Fprintf(w, "%s: c = %d CPU an audit: server %.3f ms + loadbench %.3f ms = %.2fx the in-process engine's %.3f ms; "+
			"the rate target on %d cores needs <= %.2fx: %s\n", store, t.c, ms(t.serverCPU), ms(t.clientCPU), cpu, ms(t.engineCPU),
			t.cores, budget, holds(cpu <= budget))
	}
	fmt.Fprintf(w, "%s: c = %d peak RSS / bodies in flight = %.1f (the anonymous part %.1f, the binary's pages the rest); target <= %.0f: %s\n",
		store, t.c, t.memory, t.anon, targetMemory, holds(t.memory <= targetMemory))
}

func holds(ok bool) string {
	if ok {
		return "holds"
	}
	return "does not hold"
}
