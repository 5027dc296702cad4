package tripwire

import (
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// prefix holds running totals of the days from a first day to a last, so that any run of days
// is two subtractions.
type prefix struct {
	first time.Time
	n     int
	// sums[i] is the total of days 0..i-1.
	sums []store.DayCounts
}

func parseDay(d string) time.Time {
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return time.Time{}
	}
	return t
}

// newPrefix totals days from firstDay to lastDay (YYYY-MM-DD); counts outside are left out.
func newPrefix(firstDay, lastDay string, days []store.DayCounts) prefix {
	first, last := parseDay(firstDay), parseDay(lastDay)
	n := int(last.Sub(first).Hours()/24) + 1
	n = max(n, 1)
	p := prefix{first: first, n: n, sums: make([]store.DayCounts, n+1)}
	perDay := make([]store.DayCounts, n)
	for _, d := range days {
		i := int(parseDay(d.Day).Sub(first).Hours() / 24)
		if i >= 0 && i < n && d.Day >= firstDay {
			perDay[i] = d
		}
	}
	for i, d := range perDay {
		s := p.sums[i]
		p.sums[i+1] = store.DayCounts{PaidCalls: s.PaidCalls + d.PaidCalls, Refunds: s.Refunds + d.Refunds,
			FreeCalls: s.FreeCalls + d.FreeCalls, HouseCalls: s.HouseCalls + d.HouseCalls}
	}
	return p
}

// window is the days from index from to index to, both included.
func (p prefix) window(from, to int) Window {
	a, b := p.sums[from], p.sums[to+1]
	w := Window{Start: store.Day(p.first.AddDate(0, 0, from)), End: store.Day(p.first.AddDate(0, 0, to)),
		PaidCalls: b.PaidCalls - a.PaidCalls, Refunds: b.Refunds - a.Refunds, FreeCalls: b.FreeCalls - a.FreeCalls,
		HouseCalls: b.HouseCalls - a.HouseCalls}
	if w.PaidCalls > 0 {
		share := float64(w.Refunds) / float64(w.PaidCalls)
		ratio := float64(w.FreeCalls) / float64(w.PaidCalls)
		w.RefundShare, w.FreePerPaid = &share, &ratio
	}
	return w
}
