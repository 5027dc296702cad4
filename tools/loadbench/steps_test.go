package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStepMeans: the step histograms of v1 are read from the Prometheus text and each step's mean
// between two readings is in the order the server runs them; another criteria's steps, and steps
// not seen between the readings, are left out.
func TestStepMeans(t *testing.T) {
	text := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(text))
	}))
	defer srv.Close()
	const head = "# HELP scope_hygiene_audit_step_duration_seconds x\n# TYPE scope_hygiene_audit_step_duration_seconds histogram\n"
	row := func(criteria, step, n, sum string) string {
		l := `{criteria_id="` + criteria + `",step="` + step + `"`
		return "scope_hygiene_audit_step_duration_seconds_bucket" + l + `,le="+Inf"} ` + n + "\n" +
			"scope_hygiene_audit_step_duration_seconds_sum" + l + "} " + sum + "\n" +
			"scope_hygiene_audit_step_duration_seconds_count" + l + "} " + n + "\n"
	}
	text = head + row(v1, "prepare", "2", "0.004") + row(v1, "ledger", "2", "0.001") + row("other/v1", "prepare", "5", "9")
	before, err := auditSteps(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	request := func(route, n, sum string) string {
		l := `{method="POST",route="` + route + `"`
		return "# TYPE scope_hygiene_http_request_duration_seconds histogram\n" +
			"scope_hygiene_http_request_duration_seconds_bucket" + l + `,le="+Inf"} ` + n + "\n" +
			"scope_hygiene_http_request_duration_seconds_sum" + l + "} " + sum + "\n" +
			"scope_hygiene_http_request_duration_seconds_count" + l + "} " + n + "\n"
	}
	text = head + row(v1, "prepare", "6", "0.010") + row(v1, "ledger", "2", "0.001") + row(v1, "read", "4", "0.0004") +
		row("other/v1", "prepare", "9", "20") + request("/audit", "4", "0.012")
	after, err := auditSteps(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := []stepMean{{step: "read", n: 4, mean: 100 * time.Microsecond}, {step: "prepare", n: 4, mean: 1500 * time.Microsecond},
		{step: stepRequest, n: 4, mean: 3 * time.Millisecond}}
	if d := cmp.Diff(want, stepMeans(before, after), cmp.AllowUnexported(stepMean{})); d != "" {
		t.Fatalf("step means (-want +got):\n%s", d)
	}
}
