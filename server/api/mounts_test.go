package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/engine"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

var (
	feOnce sync.Once
	feVal  *rules.MutLogSet
	feErr  error
)

func forgetEnvelope(t *testing.T) *rules.MutLogSet {
	feOnce.Do(func() {
		src, err := os.ReadFile("../../criteria/forget-envelope.yaml")
		if err != nil {
			feErr = err
			return
		}
		feVal, feErr = rules.LoadMutationLog("forget-envelope.yaml", src)
	})
	if feErr != nil {
		t.Fatalf("forget-envelope criteria: %v", feErr)
	}
	return feVal
}

// withForgetEnvelope serves memory-forget-envelope/v1 beside v1, as `serve` does.
func withForgetEnvelope(t *testing.T) func(*api.Config) {
	ms := forgetEnvelope(t)
	doc, err := ms.Document()
	if err != nil {
		t.Fatal(err)
	}
	return func(c *api.Config) {
		c.Mounts = append(c.Mounts, api.Mount{Prefix: "/v1/forget-envelope", Criteria: ms, Document: doc,
			Engine: engine.MutLog{MS: ms}, PriceStatus: ms.Criteria().Price.Status})
	}
}

const (
	feCanaryKey       = "CANARYkey8d21"
	feCanaryScope     = "CANARYfescope4e"
	feCanaryPrincipal = "CANARYprincipal7c"
	feCanaryValue     = "CANARYvalue19a"
)

// feExport is a mutation log with a canary in every key name, scope value, principal id,
// envelope entry and an unknown value member; broken makes the last event malformed.
func feExport(broken bool) []byte {
	key := func(name string) map[string]any {
		return map[string]any{"scope": map[string]any{"tenant": feCanaryScope + "-t", "session": feCanaryScope + "-s"}, "name": name}
	}
	owner, other := feCanaryPrincipal+"-owner", feCanaryPrincipal+"-other"
	events := []any{
		map[string]any{"seq": 1, "op": "write", "key": key(feCanaryKey), "principal": owner, "version": 1, "value": feCanaryValue},
		map[string]any{"seq": 2, "op": "forget", "key": key(feCanaryKey), "principal": owner, "envelope": []any{owner}},
		map[string]any{"seq": 3, "op": "reassign", "session": map[string]any{"session": feCanaryScope + "-s"}, "principal": other, "to": other},
		map[string]any{"seq": 4, "op": "write", "key": key(" " + strings.ToUpper(feCanaryKey)), "principal": other, "version": 2, "value": feCanaryValue},
	}
	if broken {
		events = append(events, map[string]any{"seq": 5, "op": "write", "key": key(feCanaryKey), "principal": feCanaryPrincipal + "-ghost", "version": 3})
	}
	b, _ := json.Marshal(map[string]any{"format": "mutation-log", "forget_mode": "transitional",
		"scope_dimensions": []any{"tenant", "session"},
		"principals": []any{
			map[string]any{"id": owner, "grants": []any{map[string]any{"tenant": feCanaryScope + "-t"}}},
			map[string]any{"id": other, "grants": []any{map[string]any{"tenant": feCanaryScope + "-t"}}},
		},
		"events":   events,
		"snapshot": []any{map[string]any{"key": key(feCanaryKey), "version": 1}}})
	return b
}

// TestCriteriaServedSideBySide: GET /criteria keeps v1's document byte for byte, /criteria/index
// lists both criteria with their own document routes, and each document route answers.
func TestCriteriaServedSideBySide(t *testing.T) {
	plain := newHarness(t, sqliteStore(t))
	h := newHarness(t, sqliteStore(t), withForgetEnvelope(t))
	a, b := plain.do(http.MethodGet, "/criteria", nil, nil), h.do(http.MethodGet, "/criteria", nil, nil)
	if a.Status != 200 || !bytes.Equal(a.Body, b.Body) || a.Header.Get("ETag") != b.Header.Get("ETag") {
		t.Fatalf("GET /criteria changed when a second criteria is served")
	}
	r := h.do(http.MethodGet, "/criteria/index", nil, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("index: %d", r.Status)
	}
	var idx struct {
		Criteria []api.CriteriaIndexEntry `json:"criteria"`
	}
	if err := json.Unmarshal(r.Body, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Criteria) != 2 || idx.Criteria[0].CriteriaID != "memory-scope-hygiene/v1" || idx.Criteria[1].CriteriaID != "memory-forget-envelope/v1" {
		t.Fatalf("index lists %+v", idx.Criteria)
	}
	if e := idx.Criteria[1]; e.Precheck != "/v1/forget-envelope/precheck" || e.Audit != "/v1/forget-envelope/audit" || e.Price.USDCUnits != 0 || e.Price.Status != "UNPRICED" {
		t.Fatalf("forget-envelope entry %+v", e)
	}
	for _, e := range idx.Criteria {
		d := h.do(http.MethodGet, e.Document, nil, nil)
		if d.Status != http.StatusOK {
			t.Fatalf("%s: %d", e.Document, d.Status)
		}
		var doc map[string]any
		if err := json.Unmarshal(d.Body, &doc); err != nil || doc["criteria_id"] != e.CriteriaID || doc["criteria_digest"] != e.CriteriaDigest {
			t.Fatalf("%s names %v", e.Document, doc["criteria_id"])
		}
	}
	if d := h.do(http.MethodGet, "/criteria/memory-scope-hygiene/v1", nil, nil); !bytes.Equal(d.Body, a.Body) {
		t.Fatal("v1's own document route differs from GET /criteria")
	}
	if r := h.do(http.MethodPost, "/v1/forget-envelope/other", []byte(`{}`), nil); r.Status != http.StatusNotFound || string(r.Body) != api.NotCovered {
		t.Fatalf("an unpublished POST under the prefix: %d %s", r.Status, r.Body)
	}
}

// TestForgetEnvelopeRoutes: signed pre-check and free audit, refusals with numbers only, the body
// cap, the allowance counted per criteria (shared by this criteria's two routes), no ledger row,
// metrics by criteria id.
func TestForgetEnvelopeRoutes(t *testing.T) {
	h := newHarness(t, sqliteStore(t), withForgetEnvelope(t))
	pub := h.signer.Public()
	pre := h.do(http.MethodPost, "/v1/forget-envelope/precheck", feExport(false), nil)
	if pre.Status != http.StatusOK {
		t.Fatalf("precheck: %d %s", pre.Status, pre.Body)
	}
	if _, err := sign.Verify(pre.Body, pub); err != nil {
		t.Fatalf("precheck signature: %v", err)
	}
	// The same client within the minimum interval: refused on the audit route too (one allowance).
	if r := h.do(http.MethodPost, "/v1/forget-envelope/audit", feExport(false), nil); r.Status != http.StatusTooManyRequests {
		t.Fatalf("audit right after a precheck: %d, want 429", r.Status)
	}
	// v1's allowance is its own.
	if r := h.do(http.MethodPost, "/precheck", canaryExport("full_text", false), nil); r.Status != http.StatusOK {
		t.Fatalf("v1 precheck: %d", r.Status)
	}
	h.clock.Advance(6 * time.Second)
	rep := h.do(http.MethodPost, "/v1/forget-envelope/audit", feExport(false), nil)
	if rep.Status != http.StatusOK {
		t.Fatalf("audit: %d %s", rep.Status, rep.Body)
	}
	if _, err := sign.Verify(rep.Body, pub); err != nil {
		t.Fatalf("report signature: %v", err)
	}
	var got struct {
		VerdictLine string `json:"verdict_line"`
	}
	_ = json.Unmarshal(rep.Body, &got)
	want := "FORGET ENVELOPE — events: 4 · forgets: 1 · with envelope: 100.0% · reinserts: 1 · outside envelope: 1 · alias reinserts: 1 · unchecked reopens: NOT ASSESSABLE · retired-key writes: NOT ASSESSABLE · unchecked reassignments: 1 · replay mismatches: 1 — "
	if !strings.HasPrefix(got.VerdictLine, want) {
		t.Fatalf("verdict %q", got.VerdictLine)
	}
	rows, err := h.st.ListLedger(context.Background(), 0, 10)
	if err != nil || len(rows) != 0 {
		t.Fatalf("a free audit wrote %d ledger rows (%v)", len(rows), err)
	}
	h.clock.Advance(6 * time.Second)
	ref := h.do(http.MethodPost, "/v1/forget-envelope/audit", feExport(true), nil)
	if ref.Status != http.StatusBadRequest || strings.TrimSpace(string(ref.Body)) != `{"kind":"refusal","rule":"event_principal_invalid","index":4}` {
		t.Fatalf("refusal: %d %s", ref.Status, ref.Body)
	}
	big := append([]byte(`{"events":[`), bytes.Repeat([]byte(" "), 262145)...)
	if r := h.do(http.MethodPost, "/v1/forget-envelope/precheck", big, nil); r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("over the cap: %d", r.Status)
	}
	m := h.metricsText()
	for _, line := range []string{
		`scope_hygiene_criteria_results_total{criteria_id="memory-forget-envelope/v1",criteria_revision="1.0.1",op="audit",payer="free"} 1`,
		`scope_hygiene_criteria_results_total{criteria_id="memory-forget-envelope/v1",criteria_revision="1.0.1",op="precheck",payer="free"} 1`,
		`scope_hygiene_criteria_results_total{criteria_id="memory-scope-hygiene/v1",criteria_revision="1.0.2",op="precheck",payer="free"} 1`,
		`scope_hygiene_criteria_refusals_total{criteria_id="memory-forget-envelope/v1",rule="event_principal_invalid"} 1`,
		`scope_hygiene_criteria_refusals_total{criteria_id="memory-forget-envelope/v1",rule="body_bytes_cap"} 1`,
	} {
		if !strings.Contains(m, line) {
			t.Errorf("metrics lack %s", line)
		}
	}
	if strings.Contains(m, `scope_hygiene_results_total{criteria_revision="1.0.0"`) {
		t.Error("a second criteria's results are counted in v1's results_total by revision")
	}
}

// TestForgetEnvelopeRetention: no key name, scope value, principal id or value of the log appears
// on any surface: reports, pre-checks, refusals, logs, metrics.
func TestForgetEnvelopeRetention(t *testing.T) {
	h := newHarness(t, sqliteStore(t), withForgetEnvelope(t))
	var bodies [][]byte
	for _, path := range []string{"/v1/forget-envelope/precheck", "/v1/forget-envelope/audit"} {
		for _, broken := range []bool{false, true} {
			h.clock.Advance(6 * time.Second)
			r := h.do(http.MethodPost, path, feExport(broken), nil)
			if r.Status != http.StatusOK && r.Status != http.StatusBadRequest {
				t.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
			bodies = append(bodies, r.Body)
		}
	}
	bodies = append(bodies, []byte(h.logs.String()), []byte(h.metricsText()))
	for _, b := range bodies {
		for _, c := range []string{feCanaryKey, strings.ToUpper(feCanaryKey), feCanaryScope, feCanaryPrincipal, feCanaryValue} {
			if bytes.Contains(b, []byte(c)) {
				t.Errorf("canary %s leaked: %.300s", c, b)
			}
		}
	}
}
