// Package metrics holds the service's Prometheus metrics. Labels carry route templates, methods,
// status codes, rule ids, criteria revisions and ops only: never a raw path or any export data.
package metrics

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/scopehygiene/scope-hygiene/server/metrics/tripwire"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

const ns = "scope_hygiene"

// Metrics is the service's registry and instruments.
type Metrics struct {
	reg *prometheus.Registry
	// Requests counts HTTP requests by route template, method and status code.
	Requests *prometheus.CounterVec
	// Latency observes request duration by route template and method.
	Latency *prometheus.HistogramVec
	// Refusals counts refusals by rule id.
	Refusals *prometheus.CounterVec
	// Results counts signed results by criteria revision, op (precheck, audit) and payer kind
	// (free, paid, house).
	Results *prometheus.CounterVec
	// FreeTier counts free-tier refusals by status (402 daily exhaustion, 429 too soon).
	FreeTier *prometheus.CounterVec
	// CriteriaResults counts signed results by criteria id, revision, op and payer kind, for
	// every criteria served.
	CriteriaResults *prometheus.CounterVec
	// CriteriaRefusals counts refusals by criteria id and rule id, for every criteria served.
	CriteriaRefusals *prometheus.CounterVec
	// AuditSteps observes how long each step of an audit took, by criteria id and step
	// (AuditStep*), so that an operator sees where an audit's time goes (a slow disk shows in
	// "ledger", a crowded machine in "slot_wait").
	AuditSteps *prometheus.HistogramVec
}

// The steps of an audit that AuditSteps observes, in the order they run. The signature is
// computed beside the ledger row, so "sign" overlaps "ledger" and "settle"; "sign_wait" is what
// the answer waited for it after the row.
const (
	AuditStepRead     = "read"      // the request body
	AuditStepSlotWait = "slot_wait" // an evaluation slot
	AuditStepPrepare  = "prepare"   // decode, validate, evaluate the records and gates
	AuditStepAudit    = "audit"     // the factors, the report and its verdict line
	AuditStepLedger   = "ledger"    // a house audit's ledger row, committed
	AuditStepSettle   = "settle"    // a paid audit's settlement and ledger row
	AuditStepSign     = "sign"      // the report's canonical form and its signature
	AuditStepSignWait = "sign_wait" // the signature, after the row
	AuditStepWrite    = "write"     // the signed answer, to the client
)

// New builds the instruments on a fresh registry (with Go and process collectors).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "http_requests_total",
			Help: "HTTP requests by route template, method and status code."}, []string{"route", "method", "status"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "http_request_duration_seconds",
			Help:    "HTTP request latency by route template and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"route", "method"}),
		Refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "refusals_total",
			Help: "Refusals by rule id."}, []string{"rule"}),
		Results: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "results_total",
			Help: "Signed results by criteria revision, op and payer kind (free, paid, house)."}, []string{"criteria_revision", "op", "payer"}),
		FreeTier: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "free_tier_refusals_total",
			Help: "Free pre-check refusals by HTTP status: 402 daily allowance exhausted, 429 minimum interval."}, []string{"status"}),
	}
	m.CriteriaResults = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "criteria_results_total",
		Help: "Signed results by criteria id, criteria revision, op and payer kind (free, paid, house)."}, []string{"criteria_id", "criteria_revision", "op", "payer"})
	m.CriteriaRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "criteria_refusals_total",
		Help: "Refusals by criteria id and rule id."}, []string{"criteria_id", "rule"})
	m.AuditSteps = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "audit_step_duration_seconds",
		Help:    "Time each step of an audit took, by criteria id and step (read, slot_wait, prepare, audit, ledger or settle, sign, sign_wait, write).",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"criteria_id", "step"})
	m.reg.MustRegister(m.CriteriaResults, m.CriteriaRefusals, m.AuditSteps)
	m.reg.MustRegister(m.Requests, m.Latency, m.Refusals, m.Results, m.FreeTier,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry is the underlying registry (for tests and extra collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// TripwireSource is where the kill-line figures come from (a store.Store).
type TripwireSource interface {
	Tripwires(ctx context.Context, now time.Time, window time.Duration) (store.Tripwires, error)
}

// RegisterTripwires adds gauges computed from src at scrape time over the trailing window. The
// window's length and the limits that trip each wire are the criteria's kill line (limits), not
// numbers of this package: a revision of the kill line is a data change.
func (m *Metrics) RegisterTripwires(src TripwireSource, limits tripwire.Limits, timeout time.Duration, now func() time.Time) {
	window := time.Duration(limits.WindowDays) * 24 * time.Hour
	m.reg.MustRegister(&tripwires{src: src, limits: limits, window: window, timeout: timeout, now: now})
}

type tripwires struct {
	src     TripwireSource
	limits  tripwire.Limits
	window  time.Duration
	timeout time.Duration
	now     func() time.Time
}

var (
	descPaid    = prometheus.NewDesc(ns+"_tripwire_paid_calls", "Paid audits (house audits excluded) in the trailing 30-day window.", nil, nil)
	descRefunds = prometheus.NewDesc(ns+"_tripwire_refunds", "Refunded paid audits in the trailing 30-day window.", nil, nil)
	descShare   = prometheus.NewDesc(ns+"_tripwire_refund_share", "Refunds as a share of paid calls in the trailing 30-day window (0 without paid calls).", nil, nil)
	descFree    = prometheus.NewDesc(ns+"_tripwire_free_calls", "Free pre-check calls allowed in the trailing 30-day window.", nil, nil)
	descHouse   = prometheus.NewDesc(ns+"_tripwire_house_calls", "House audits in the trailing 30-day window (never counted as paid).", nil, nil)
	descRatio   = prometheus.NewDesc(ns+"_tripwire_free_per_paid", "Free calls per paid call in the trailing 30-day window (+Inf with free calls and no paid call).", nil, nil)
	descTripped = prometheus.NewDesc(ns+"_tripwire_tripped", "1 when a kill-line tripwire holds (stop and review).", []string{"tripwire"}, nil)
	descUp      = prometheus.NewDesc(ns+"_tripwire_up", "1 when the tripwire figures could be read from the store.", nil, nil)
)

func (t *tripwires) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPaid, descRefunds, descShare, descFree, descHouse, descRatio, descTripped, descUp} {
		ch <- d
	}
}

func (t *tripwires) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), t.timeout)
	defer cancel()
	tw, err := t.src.Tripwires(ctx, t.now(), t.window)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)
		return
	}
	g := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	g(descUp, 1)
	g(descPaid, float64(tw.PaidCalls))
	g(descRefunds, float64(tw.Refunds))
	g(descShare, tw.RefundShare())
	g(descFree, float64(tw.FreeCalls))
	g(descHouse, float64(tw.HouseCalls))
	ratio := FreePerPaid(tw)
	g(descRatio, ratio)
	w := tripwire.Window{PaidCalls: tw.PaidCalls, Refunds: tw.Refunds, FreeCalls: tw.FreeCalls}
	// Without a paid call there is no share to exceed (the gauge above reads 0), so the refund
	// wire holds only over paid calls; free use with none paid trips the free wire (+Inf).
	g(descTripped, b2f(tw.PaidCalls > 0 && t.limits.RefundsTrip(w)), WireRefunds)
	g(descTripped, b2f(t.limits.FreeTrips(w)), WireFree)
}

// FreePerPaid is free calls per paid call: 0 with neither, +Inf with free calls only.
func FreePerPaid(tw store.Tripwires) float64 {
	switch {
	case tw.PaidCalls > 0:
		return float64(tw.FreeCalls) / float64(tw.PaidCalls)
	case tw.FreeCalls > 0:
		return math.Inf(1)
	}
	return 0
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
