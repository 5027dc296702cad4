package api_test

import (
	"bytes"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

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

// trackingEngine is the real engine; it keeps weak pointers to every export it decodes and every
// report it makes, so that a test can ask whether the server still holds them.
type trackingEngine struct {
	engine.Engine
	mu      *sync.Mutex
	exports *[]weak.Pointer[trackedPrepared]
	reports *[]weak.Pointer[api.AuditResult]
}

type trackedPrepared struct {
	api.Prepared
	e trackingEngine
}

func (e trackingEngine) Prepare(body []byte) (api.Prepared, *api.Refusal, error) {
	p, ref, err := e.Engine.Prepare(body)
	if p == nil {
		return p, ref, err
	}
	tp := &trackedPrepared{Prepared: p, e: e}
	e.mu.Lock()
	*e.exports = append(*e.exports, weak.Make(tp))
	e.mu.Unlock()
	return tp, ref, err
}

func (p *trackedPrepared) Audit(clock func() time.Time) (*api.AuditResult, error) {
	res, err := p.Prepared.Audit(clock)
	if res != nil {
		p.e.mu.Lock()
		*p.e.reports = append(*p.e.reports, weak.Make(res))
		p.e.mu.Unlock()
	}
	return res, err
}

func (p *trackedPrepared) Release() { release(p.Prepared) }

func release(p api.Prepared) {
	if r, ok := p.(interface{ Release() }); ok {
		r.Release()
	}
}

// blockedWriter is a client that does not read: the answer's body write waits until the test lets
// it through.
type blockedWriter struct {
	*httptest.ResponseRecorder
	writing chan struct{}
	resume  chan struct{}
}

func (w *blockedWriter) Write(b []byte) (int, error) {
	close(w.writing)
	<-w.resume
	return w.ResponseRecorder.Write(b)
}

// TestAuditDropsExportBeforeWriting: while an audit's answer waits on a client that does not read,
// the server holds neither the decoded export nor the report, only the signed bytes (issue 12,
// goal 4: 32 slow readers must not hold 32 decoded exports).
func TestAuditDropsExportBeforeWriting(t *testing.T) {
	var mu sync.Mutex
	var exports []weak.Pointer[trackedPrepared]
	var reports []weak.Pointer[api.AuditResult]
	h := newHarness(t, sqliteStore(t), func(c *api.Config) {
		c.Engine = trackingEngine{Engine: c.Engine.(engine.Engine), mu: &mu, exports: &exports, reports: &reports}
	})
	req := httptest.NewRequest("POST", "/audit", bytes.NewReader(export(nil)))
	req.Header.Set("Authorization", "Bearer "+houseToken)
	w := &blockedWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), resume: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.srv.Handler().ServeHTTP(w, req)
	}()
	<-w.writing
	runtime.GC()
	runtime.GC()
	mu.Lock()
	if len(exports) != 1 || len(reports) != 1 {
		t.Fatalf("%d exports and %d reports made, want one each", len(exports), len(reports))
	}
	heldExport, heldReport := exports[0].Value() != nil, reports[0].Value() != nil
	mu.Unlock()
	close(w.resume)
	<-done
	if heldExport || heldReport {
		t.Fatalf("while the answer was written the server held the decoded export: %v, the report: %v", heldExport, heldReport)
	}
	if w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
}
