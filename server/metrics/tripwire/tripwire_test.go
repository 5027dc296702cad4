package tripwire

import (
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

var limits = Limits{WindowDays: 30, RefundsOverPercentOfPaid: 5, FreeOverTimesPaid: 10}

var day0 = time.Date(2026, 10, 1, 15, 4, 5, 0, time.UTC)

// on is the counts of the day n days after Day-0's.
func on(n int, paid, refunds, free int64) store.DayCounts {
	return store.DayCounts{Day: store.Day(day0.AddDate(0, 0, n)), PaidCalls: paid, Refunds: refunds, FreeCalls: free}
}

func span(w *Window) string {
	if w == nil {
		return "none"
	}
	return w.Start + ".." + w.End
}

func d(n int) string { return store.Day(day0.AddDate(0, 0, n)) }

// TestEvaluate holds each rule of the kill line's windows to a case.
func TestEvaluate(t *testing.T) {
	first := &store.Day0{At: day0, PaymentTx: "tx", LedgerID: 1}
	tests := []struct {
		name                        string
		day0                        *store.Day0
		days                        []store.DayCounts
		today                       int
		refundTripped, freeTripped  bool
		firstRefund, worstRefund    string
		firstFree, worstFree        string
		trailingStart, trailingEnd  string
		trailingPaid, sinceDay0Free int64
	}{
		{name: "before Day-0 there is no figure", day0: nil, days: []store.DayCounts{on(0, 0, 0, 500)}, today: 3},
		{name: "a refund spike in an old window is reported after newer clean windows", day0: first,
			days: append([]store.DayCounts{on(0, 20, 0, 0), on(3, 20, 4, 0)}, manyDays(10, 39, 10)...), today: 39,
			refundTripped: true, firstRefund: d(0) + ".." + d(3), worstRefund: d(0) + ".." + d(3),
			firstFree: "none", worstFree: d(0) + ".." + d(0),
			trailingStart: d(10), trailingEnd: d(39), trailingPaid: 300},
		{name: "exactly the limit does not trip (over 5%, over 10x)", day0: first,
			days: []store.DayCounts{on(0, 100, 5, 1000)}, today: 0,
			firstRefund: "none", worstRefund: d(0) + ".." + d(0), firstFree: "none", worstFree: d(0) + ".." + d(0),
			trailingStart: d(0), trailingEnd: d(0), trailingPaid: 100, sinceDay0Free: 1000},
		{name: "free use in a window without paid calls trips (over 10x of nothing)", day0: first,
			days: []store.DayCounts{on(0, 1, 0, 0), on(40, 0, 0, 3)}, today: 45,
			freeTripped: true, firstRefund: "none", worstRefund: d(0) + ".." + d(0),
			firstFree: d(11) + ".." + d(40), worstFree: d(11) + ".." + d(40),
			trailingStart: d(16), trailingEnd: d(45), sinceDay0Free: 3},
		{name: "counts before Day-0's day are left out", day0: first,
			days: []store.DayCounts{{Day: d(-5), PaidCalls: 1, Refunds: 1, FreeCalls: 100}, on(0, 1, 0, 0)}, today: 1,
			firstRefund: "none", worstRefund: d(0) + ".." + d(0), firstFree: "none", worstFree: d(0) + ".." + d(0),
			trailingStart: d(0), trailingEnd: d(1), trailingPaid: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Evaluate(tc.day0, tc.days, day0.AddDate(0, 0, tc.today).Add(time.Hour), limits)
			if tc.day0 == nil {
				if !r.BeforeDay0 || r.Refunds != nil || r.FreeUse != nil {
					t.Fatalf("before Day-0: %+v, want no figure", r)
				}
				return
			}
			rw, fw := r.Refunds, r.FreeUse
			got := []any{rw.Tripped, fw.Tripped, span(rw.FirstTripped), span(rw.Worst), span(fw.FirstTripped), span(fw.Worst),
				rw.Trailing.Start, rw.Trailing.End, rw.Trailing.PaidCalls, fw.SinceDay0.FreeCalls}
			want := []any{tc.refundTripped, tc.freeTripped, tc.firstRefund, tc.worstRefund, tc.firstFree, tc.worstFree,
				tc.trailingStart, tc.trailingEnd, tc.trailingPaid, tc.sinceDay0Free}
			names := []string{"refund tripped", "free tripped", "first refund window", "worst refund window", "first free window",
				"worst free window", "trailing start", "trailing end", "trailing paid", "free since Day-0"}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s = %v, want %v", names[i], got[i], want[i])
				}
			}
		})
	}
}

// manyDays is paid calls on each day from day from to day to, no refund.
func manyDays(from, to int, paid int64) []store.DayCounts {
	var out []store.DayCounts
	for n := from; n <= to; n++ {
		out = append(out, on(n, paid, 0, 0))
	}
	return out
}

// TestNoRatioOverNothing: a window without paid calls carries no share and no ratio.
func TestNoRatioOverNothing(t *testing.T) {
	r := Evaluate(&store.Day0{At: day0}, []store.DayCounts{on(0, 1, 1, 0)}, day0.AddDate(0, 0, 40), limits)
	if tr := r.Refunds.Trailing; tr.PaidCalls != 0 || tr.RefundShare != nil || tr.FreePerPaid != nil {
		t.Fatalf("trailing window without paid calls: %+v", tr)
	}
	if w := r.Refunds.Worst; w == nil || *w.RefundShare != 1 || !r.Refunds.Tripped {
		t.Fatalf("worst refund window: %+v", w)
	}
}
