package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/metrics"
)

// TestAuditStepsObserved: an answered house audit observes each of its steps once, under its
// criteria id, and a refused one only the steps it went through (issue 12: where an audit's time
// goes is read from /metrics, by tools/loadbench and by an operator).
func TestAuditStepsObserved(t *testing.T) {
	h := newHarness(t, sqliteStore(t))
	count := func(step string) string {
		prefix := fmt.Sprintf(`scope_hygiene_audit_step_duration_seconds_count{criteria_id=%q,step=%q} `, h.ps.Criteria().CriteriaID, step)
		for _, line := range strings.Split(h.metricsText(), "\n") {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				return rest
			}
		}
		return "0"
	}
	if r := h.do("POST", "/audit", []byte(`{"family":"mem0","form":"full_text","records":[]}`),
		map[string]string{"Authorization": "Bearer " + houseToken}); r.Status != 400 {
		t.Fatalf("refused audit: status %d", r.Status)
	}
	for step, want := range map[string]string{metrics.AuditStepRead: "1", metrics.AuditStepSlotWait: "1",
		metrics.AuditStepPrepare: "0", metrics.AuditStepLedger: "0"} {
		if got := count(step); got != want {
			t.Errorf("after a refused audit, step %s observed %s times, want %s", step, got, want)
		}
	}
	h.clock.Advance(time.Minute)
	if r := h.do("POST", "/audit", export(nil), map[string]string{"Authorization": "Bearer " + houseToken}); r.Status != 200 {
		t.Fatalf("house audit: status %d: %s", r.Status, r.Body)
	}
	for step, want := range map[string]string{metrics.AuditStepRead: "2", metrics.AuditStepSlotWait: "2",
		metrics.AuditStepPrepare: "1", metrics.AuditStepAudit: "1", metrics.AuditStepLedger: "1",
		metrics.AuditStepSign: "1", metrics.AuditStepSignWait: "1", metrics.AuditStepWrite: "1",
		metrics.AuditStepSettle: "0"} {
		if got := count(step); got != want {
			t.Errorf("after a house audit, step %s observed %s times, want %s", step, got, want)
		}
	}
}
