package main

import (
	"fmt"
	"math"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// stepMean is one audit step's mean duration over a load.
type stepMean struct {
	step string
	mean time.Duration
	n    uint64
}

// stepSum is a step's observation count and total seconds, as /metrics reports them.
type stepSum struct {
	n   uint64
	sum float64
}

// auditSteps reads the v1 audit steps' histograms from the server's /metrics.
func auditSteps(client *http.Client, base string) (map[string]stepSum, error) {
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	out := map[string]stepSum{}
	// The whole request as the server's middleware times it (routing, limits, the handler).
	for _, m := range families["scope_hygiene_http_request_duration_seconds"].GetMetric() {
		if l := labels(m); l["route"] == "/audit" && l["method"] == http.MethodPost {
			out[stepRequest] = stepSum{n: m.GetHistogram().GetSampleCount(), sum: m.GetHistogram().GetSampleSum()}
		}
	}
	fam := families["scope_hygiene_audit_step_duration_seconds"]
	if fam == nil {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		l := labels(m)
		criteria, step := l["criteria_id"], l["step"]
		if criteria == v1 {
			out[step] = stepSum{n: m.GetHistogram().GetSampleCount(), sum: m.GetHistogram().GetSampleSum()}
		}
	}
	return out, nil
}

// labels are a metric's label values by name.
func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// v1 is the criteria whose audits loadbench sends.
const v1 = "memory-scope-hygiene/v1"

// stepOrder is the order in which an audit's steps run (the server's metrics.AuditStep*), then the
// whole request as the server saw it.
var stepOrder = []string{"read", "slot_wait", "prepare", "audit", "ledger", "sign", "sign_wait", "write", stepRequest}

// stepRequest names the server's whole-request time among the steps.
const stepRequest = "server_request"

// stepMeans is each step's mean between two readings.
func stepMeans(before, after map[string]stepSum) []stepMean {
	var out []stepMean
	for _, step := range stepOrder {
		a, b := after[step], before[step]
		if n := a.n - b.n; n > 0 {
			out = append(out, stepMean{step: step, n: n, mean: time.Duration(math.Round((a.sum - b.sum) / float64(n) * float64(time.Second)))})
		}
	}
	return out
}

// runtimeCounters are the server's Go runtime totals from its /metrics: bytes allocated and
// garbage collections completed since it started. Their change over a load, per request, does not
// move with the machine's load as times do.
type runtimeCounters struct {
	alloc float64
	gcs   uint64
}

// readRuntime reads the server's runtime counters (zero when /metrics cannot be read).
func readRuntime(client *http.Client, base string) runtimeCounters {
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		return runtimeCounters{}
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return runtimeCounters{}
	}
	var rc runtimeCounters
	for _, m := range families["go_memstats_alloc_bytes_total"].GetMetric() {
		rc.alloc = m.GetCounter().GetValue()
	}
	for _, m := range families["go_gc_duration_seconds"].GetMetric() {
		rc.gcs = m.GetSummary().GetSampleCount()
	}
	return rc
}
