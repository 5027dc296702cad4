// Package tripwire evaluates the criteria kill line's two ledger tripwires from Day-0 and per-day
// counts: refunds over a share of paid calls in every window since Day-0, and free use over a
// multiple of paid use, over every window and cumulative since Day-0. It reads nothing and
// writes nothing; the ledger command and the /metrics gauges print what it finds.
package tripwire

import (
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Limits are the kill line's numbers (criteria kill_line_tripwires).
type Limits struct {
	// WindowDays is the length of every window, in days.
	WindowDays int `json:"window_days"`
	// RefundsOverPercentOfPaid trips the refund wire when a window's refunds exceed this
	// percentage of its paid calls.
	RefundsOverPercentOfPaid int64 `json:"refunds_over_percent_of_paid"`
	// FreeOverTimesPaid trips the free-use wire when free calls exceed this multiple of paid calls.
	FreeOverTimesPaid int64 `json:"free_over_times_paid"`
}

// Window is the counts of the UTC days Start to End (both included) and what they give. A share
// or a ratio is absent (nil) when there is nothing to divide by: never a ratio over nothing.
type Window struct {
	Start      string `json:"start"`
	End        string `json:"end"`
	PaidCalls  int64  `json:"paid_calls"`
	Refunds    int64  `json:"refunds"`
	FreeCalls  int64  `json:"free_calls"`
	HouseCalls int64  `json:"house_calls"`
	// RefundShare is Refunds / PaidCalls; nil without paid calls.
	RefundShare *float64 `json:"refund_share,omitempty"`
	// FreePerPaid is FreeCalls / PaidCalls; nil without paid calls.
	FreePerPaid *float64 `json:"free_per_paid,omitempty"`
}

// Wire is one tripwire's findings since Day-0.
type Wire struct {
	// Tripped is true when any window since Day-0 tripped the wire.
	Tripped bool `json:"tripped"`
	// FirstTripped is the earliest window that tripped it (nil when none did).
	FirstTripped *Window `json:"first_tripped"`
	// Worst is the window with the highest figure, the earliest of equals (nil when no window
	// has anything to divide).
	Worst *Window `json:"worst"`
	// Trailing is the window ending today.
	Trailing Window `json:"trailing"`
	// SinceDay0 is every day from Day-0 to today (the free-use wire's cumulative figure).
	SinceDay0 *Window `json:"since_day0,omitempty"`
}

// Report is the kill line's ledger tripwires as of one day.
type Report struct {
	Limits Limits `json:"limits"`
	// Day0 is the first outside paid settle; nil before it.
	Day0 *store.Day0 `json:"day0"`
	// BeforeDay0 is true while the ledger has no outside paid settle: no figure exists yet.
	BeforeDay0 bool `json:"before_day0"`
	// Today is the UTC day the report is made on.
	Today string `json:"today"`
	// Refunds and FreeUse are nil before Day-0: no figure exists before it.
	Refunds *Wire `json:"refunds_over_share_of_paid,omitempty"`
	FreeUse *Wire `json:"free_over_multiple_of_paid,omitempty"`
}

// figure is a window's numerator and denominator for one wire.
type figure func(w Window) (num, den int64)

func refundFigure(w Window) (int64, int64) { return w.Refunds, w.PaidCalls }
func freeFigure(w Window) (int64, int64)   { return w.FreeCalls, w.PaidCalls }

// RefundsTrip reports whether w's refunds exceed the limit's share of its paid calls.
func (l Limits) RefundsTrip(w Window) bool {
	return w.Refunds*100 > l.RefundsOverPercentOfPaid*w.PaidCalls
}

// FreeTrips reports whether w's free calls exceed the limit's multiple of its paid calls.
func (l Limits) FreeTrips(w Window) bool { return w.FreeCalls > l.FreeOverTimesPaid*w.PaidCalls }

// Evaluate finds both wires' windows from Day-0 (nil before it) to now's UTC day. days are the
// store's per-day counts, sorted by day; days before Day-0's are left out. Each window is the
// WindowDays days ending on one day from Day-0's to today, starting no earlier than Day-0's.
func Evaluate(day0 *store.Day0, days []store.DayCounts, now time.Time, l Limits) Report {
	r := Report{Limits: l, Day0: day0, BeforeDay0: day0 == nil, Today: store.Day(now)}
	if day0 == nil {
		return r
	}
	cum := newPrefix(store.Day(day0.At), r.Today, days)
	refunds := &Wire{}
	free := &Wire{}
	for end := 0; end < cum.n; end++ {
		w := cum.window(max(0, end-l.WindowDays+1), end)
		refunds.see(w, l.RefundsTrip(w), refundFigure)
		free.see(w, l.FreeTrips(w), freeFigure)
	}
	since := cum.window(0, cum.n-1)
	free.SinceDay0 = &since
	r.Refunds, r.FreeUse = refunds, free
	return r
}

// see takes the next window in time order.
func (wire *Wire) see(w Window, trips bool, f figure) {
	wire.Trailing = w
	if trips && !wire.Tripped {
		wire.Tripped, wire.FirstTripped = true, &w
	}
	num, den := f(w)
	if den == 0 && num == 0 {
		return // nothing to divide
	}
	if wire.Worst == nil {
		wire.Worst = &w
		return
	}
	wn, wd := f(*wire.Worst)
	// num/den > wn/wd without dividing (a zero denominator reads as unbounded).
	if num*wd > wn*den {
		wire.Worst = &w
	}
}
