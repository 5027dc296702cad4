package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/metrics/tripwire"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// trailing is a store's figures for the trailing window, whatever window is asked.
type trailing struct {
	tw     store.Tripwires
	window time.Duration
}

func (s *trailing) Tripwires(_ context.Context, _ time.Time, window time.Duration) (store.Tripwires, error) {
	s.window = window
	return s.tw, nil
}

// TestTrailingTripwiresFollowTheKillLine holds the trailing gauges to the limits they are given:
// the same figures trip under one kill line and not under another, so no number of Go decides.
func TestTrailingTripwiresFollowTheKillLine(t *testing.T) {
	published := tripwire.Limits{WindowDays: 30, RefundsOverPercentOfPaid: 5, FreeOverTimesPaid: 10}
	lenient := tripwire.Limits{WindowDays: 7, RefundsOverPercentOfPaid: 10, FreeOverTimesPaid: 20}
	for _, tc := range []struct {
		name          string
		limits        tripwire.Limits
		tw            store.Tripwires
		refunds, free int
	}{
		{"kill_line/refunds_at_the_limit", published, store.Tripwires{PaidCalls: 100, Refunds: 5}, 0, 0},
		{"kill_line/refunds_over_the_limit", published, store.Tripwires{PaidCalls: 100, Refunds: 6}, 1, 0},
		{"kill_line/refunds_over_under_a_lenient_line", lenient, store.Tripwires{PaidCalls: 100, Refunds: 6}, 0, 0},
		{"kill_line/refunds_without_paid_calls", published, store.Tripwires{Refunds: 1}, 0, 0},
		{"kill_line/free_at_the_limit", published, store.Tripwires{PaidCalls: 10, FreeCalls: 100}, 0, 0},
		{"kill_line/free_over_the_limit", published, store.Tripwires{PaidCalls: 10, FreeCalls: 101}, 0, 1},
		{"kill_line/free_over_under_a_lenient_line", lenient, store.Tripwires{PaidCalls: 10, FreeCalls: 101}, 0, 0},
		{"kill_line/free_without_paid_calls", published, store.Tripwires{FreeCalls: 1}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &trailing{tw: tc.tw}
			m := metrics.New()
			m.RegisterTripwires(src, tc.limits, time.Second, time.Now)
			got := tripped(t, m)
			if got[metrics.WireRefunds] != tc.refunds || got[metrics.WireFree] != tc.free {
				t.Fatalf("tripped %v, want %s %d and %s %d", got, metrics.WireRefunds, tc.refunds, metrics.WireFree, tc.free)
			}
			if wantWindow := time.Duration(tc.limits.WindowDays) * 24 * time.Hour; src.window != wantWindow {
				t.Fatalf("trailing window %s, want the kill line's %s", src.window, wantWindow)
			}
		})
	}
}

// tripped reads the scope_hygiene_tripwire_tripped gauges of m by their tripwire label.
func tripped(t *testing.T, m *metrics.Metrics) map[string]int {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, f := range families {
		if f.GetName() != "scope_hygiene_tripwire_tripped" {
			continue
		}
		for _, g := range f.GetMetric() {
			for _, l := range g.GetLabel() {
				if l.GetName() == "tripwire" {
					got[l.GetValue()] = int(g.GetGauge().GetValue())
				}
			}
		}
	}
	if len(got) != 2 {
		t.Fatalf("tripped gauges %v, want one for each wire", got)
	}
	return got
}
