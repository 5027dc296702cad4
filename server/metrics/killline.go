package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scopehygiene/scope-hygiene/server/metrics/tripwire"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// KillLineSource is where Day-0 and the per-day counts come from (a store.Store).
type KillLineSource interface {
	Day0(ctx context.Context) (store.Day0, bool, error)
	TripwireDays(ctx context.Context, fromDay, toDay string) ([]store.DayCounts, error)
}

// Wire names, the label values of the tripwire gauges (kill line tripwires 1 and 2).
const (
	WireRefunds = "refunds_over_5pct_of_paid"
	WireFree    = "free_over_10x_paid"
)

// ReadKillLine reads Day-0 and the counts since it from src and evaluates both wires as of now.
func ReadKillLine(ctx context.Context, src KillLineSource, now time.Time, limits tripwire.Limits) (tripwire.Report, error) {
	d0, ok, err := src.Day0(ctx)
	if err != nil {
		return tripwire.Report{}, fmt.Errorf("kill line: %w", err)
	}
	if !ok {
		return tripwire.Evaluate(nil, nil, now, limits), nil
	}
	days, err := src.TripwireDays(ctx, store.Day(d0.At), store.Day(now))
	if err != nil {
		return tripwire.Report{}, fmt.Errorf("kill line: %w", err)
	}
	return tripwire.Evaluate(&d0, days, now, limits), nil
}

// RegisterKillLine adds the kill line's gauges since Day-0, read from src at scrape time, and
// logs each wire once per process, as a structured event, the first time a scrape finds it
// tripped.
func (m *Metrics) RegisterKillLine(src KillLineSource, limits tripwire.Limits, timeout time.Duration, now func() time.Time, log *slog.Logger) {
	m.reg.MustRegister(&killLine{src: src, limits: limits, timeout: timeout, now: now, log: log, logged: map[string]bool{}})
}

type killLine struct {
	src     KillLineSource
	limits  tripwire.Limits
	timeout time.Duration
	now     func() time.Time
	log     *slog.Logger
	mu      sync.Mutex
	logged  map[string]bool
}

var (
	descDay0       = prometheus.NewDesc(ns+"_day0_timestamp_seconds", "Day-0, the first outside paid settle (house audits and test-network settles never count), as Unix time; absent before Day-0.", nil, nil)
	descBeforeDay0 = prometheus.NewDesc(ns+"_tripwire_before_day0", "1 while no outside paid settle exists (every tripwire figure is before Day-0).", nil, nil)
	descSinceDay0  = prometheus.NewDesc(ns+"_tripwire_tripped_since_day0", "1 when any window since Day-0 tripped the kill-line tripwire (stop and review); absent before Day-0.", []string{"tripwire"}, nil)
	descFirstTrip  = prometheus.NewDesc(ns+"_tripwire_first_tripped_window_start_seconds", "Start of the first window since Day-0 that tripped the tripwire, as Unix time; absent when none did.", []string{"tripwire"}, nil)
	descWorstShare = prometheus.NewDesc(ns+"_tripwire_worst_refund_share", "Highest refund share of paid calls over every window since Day-0; absent before Day-0.", nil, nil)
	descFreeSince  = prometheus.NewDesc(ns+"_tripwire_free_per_paid_since_day0", "Free calls per paid call since Day-0; absent before Day-0.", nil, nil)
	descKillLineUp = prometheus.NewDesc(ns+"_tripwire_since_day0_up", "1 when Day-0 and the counts since it could be read from the store.", nil, nil)
)

func (k *killLine) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDay0, descBeforeDay0, descSinceDay0, descFirstTrip, descWorstShare, descFreeSince, descKillLineUp} {
		ch <- d
	}
}

func (k *killLine) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), k.timeout)
	defer cancel()
	g := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	r, err := ReadKillLine(ctx, k.src, k.now(), k.limits)
	if err != nil {
		g(descKillLineUp, 0)
		return
	}
	g(descKillLineUp, 1)
	g(descBeforeDay0, b2f(r.BeforeDay0))
	if r.BeforeDay0 {
		return
	}
	g(descDay0, float64(r.Day0.At.UnixMilli())/1000)
	for _, w := range []struct {
		name string
		wire *tripwire.Wire
	}{{WireRefunds, r.Refunds}, {WireFree, r.FreeUse}} {
		g(descSinceDay0, b2f(w.wire.Tripped), w.name)
		if w.wire.FirstTripped != nil {
			g(descFirstTrip, dayStart(w.wire.FirstTripped.Start), w.name)
			k.logTrip(w.name, r, w.wire.FirstTripped)
		}
	}
	if w := r.Refunds.Worst; w != nil && w.RefundShare != nil {
		g(descWorstShare, *w.RefundShare)
	}
	if s := r.FreeUse.SinceDay0; s != nil && s.FreePerPaid != nil {
		g(descFreeSince, *s.FreePerPaid)
	}
}

// logTrip logs a wire's first tripped window, once per process.
func (k *killLine) logTrip(wire string, r tripwire.Report, w *tripwire.Window) {
	k.mu.Lock()
	seen := k.logged[wire]
	k.logged[wire] = true
	k.mu.Unlock()
	if seen || k.log == nil {
		return
	}
	k.log.Error("kill-line tripwire tripped: stop and review", "tripwire", wire, "day0", r.Day0.At.UTC().Format(time.RFC3339),
		"window_start", w.Start, "window_end", w.End, "paid_calls", w.PaidCalls, "refunds", w.Refunds, "free_calls", w.FreeCalls)
}

// dayStart is the Unix time of a UTC day's first instant.
func dayStart(day string) float64 {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return 0
	}
	return float64(t.Unix())
}
