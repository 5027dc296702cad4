package api_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/engine"
)

// countingEngine is the real engine, counting how often each entry point decodes a body.
type countingEngine struct {
	engine.Engine
	prepares, prechecks, audits *atomic.Int32
}

func (c countingEngine) Prepare(body []byte) (api.Prepared, *api.Refusal, error) {
	c.prepares.Add(1)
	return c.Engine.Prepare(body)
}

func (c countingEngine) Precheck(body []byte, now time.Time) (any, *api.Refusal, error) {
	c.prechecks.Add(1)
	return c.Engine.Precheck(body, now)
}

func (c countingEngine) Audit(body []byte, clock func() time.Time) (*api.AuditResult, *api.Refusal, error) {
	c.audits.Add(1)
	return c.Engine.Audit(body, clock)
}

// TestBodyDecodedOnce: a house audit, a pre-check with a caller, and a refused body each decode
// the export exactly once on the whole request path (issue 12).
func TestBodyDecodedOnce(t *testing.T) {
	var prepares, prechecks, audits atomic.Int32
	h := newHarness(t, sqliteStore(t), func(c *api.Config) {
		c.Engine = countingEngine{Engine: c.Engine.(engine.Engine), prepares: &prepares, prechecks: &prechecks, audits: &audits}
	})
	for _, tc := range []struct {
		name, path string
		body       []byte
		hdr        map[string]string
		status     int
	}{
		{"house audit", "/audit", export(nil), map[string]string{"Authorization": "Bearer " + houseToken}, 200},
		{"precheck", "/precheck", export(nil), nil, 200},
		{"precheck invalid caller", "/precheck", export(map[string]any{"caller": 7}), nil, 400},
		{"refused audit", "/audit", []byte(`{"family":"mem0","form":"full_text","records":[]}`), nil, 400},
	} {
		prepares.Store(0)
		prechecks.Store(0)
		audits.Store(0)
		h.clock.Advance(time.Minute)
		r := h.do("POST", tc.path, tc.body, tc.hdr)
		if r.Status != tc.status {
			t.Fatalf("%s: status %d, want %d: %s", tc.name, r.Status, tc.status, r.Body)
		}
		if prepares.Load() != 1 || prechecks.Load() != 0 || audits.Load() != 0 {
			t.Errorf("%s: %d prepares, %d prechecks, %d audits; want one prepare and nothing else",
				tc.name, prepares.Load(), prechecks.Load(), audits.Load())
		}
	}
}

// slowEngine is the real engine; every Prepare records how many run at once.
type slowEngine struct {
	engine.Engine
	active, peak *atomic.Int32
}

func (e slowEngine) Prepare(body []byte) (api.Prepared, *api.Refusal, error) {
	n := e.active.Add(1)
	defer e.active.Add(-1)
	for p := e.peak.Load(); n > p && !e.peak.CompareAndSwap(p, n); p = e.peak.Load() {
	}
	time.Sleep(20 * time.Millisecond)
	return e.Engine.Prepare(body)
}

// TestEvaluationSlots: however many requests arrive at once, at most GOMAXPROCS exports are
// decoded and evaluated at a time (a waiting request holds its body only), and every request
// is answered.
func TestEvaluationSlots(t *testing.T) {
	var active, peak atomic.Int32
	h := newHarness(t, sqliteStore(t), func(c *api.Config) {
		c.Engine = slowEngine{Engine: c.Engine.(engine.Engine), active: &active, peak: &peak}
	})
	n := 4 * runtime.GOMAXPROCS(0)
	statuses := make(chan int, n)
	for i := 0; i < n; i++ {
		go func() {
			statuses <- h.do("POST", "/audit", export(nil), map[string]string{"Authorization": "Bearer " + houseToken}).Status
		}()
	}
	for i := 0; i < n; i++ {
		if s := <-statuses; s != 200 {
			t.Errorf("status %d", s)
		}
	}
	if p := int(peak.Load()); p > runtime.GOMAXPROCS(0) || p < 1 {
		t.Fatalf("%d exports evaluated at once, want 1 to %d", p, runtime.GOMAXPROCS(0))
	}
}
