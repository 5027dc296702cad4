package api_test

import (
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
