package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/metrics/tripwire"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// killLineLimits are the kill line's numbers as the criteria ps publishes them.
func killLineLimits(ps *rules.ProgramSet) (tripwire.Limits, error) {
	k, ok := ps.KillLine()
	if !ok {
		return tripwire.Limits{}, errors.New("the criteria carry no kill_line_tripwires block")
	}
	return tripwire.Limits(k), nil
}

// killLineReport is `ledger -tripwires -json`: the report, and the lamports our fee payer lost on
// mainnet payment transactions that failed (absent when the store keeps no settlements).
type killLineReport struct {
	tripwire.Report
	LamportsLost *lamportsLost `json:"lamports_lost_on_failed_transactions,omitempty"`
}

type lamportsLost struct {
	Lamports     int64 `json:"lamports"`
	Transactions int64 `json:"transactions"`
}

// readKillLine evaluates the tripwires of st as of now under the embedded criteria's kill line;
// windowDays, when positive, replaces the criteria's window length.
func readKillLine(ctx context.Context, st store.Store, now time.Time, windowDays int) (killLineReport, error) {
	ps, err := rules.Default()
	if err != nil {
		return killLineReport{}, err
	}
	limits, err := killLineLimits(ps)
	if err != nil {
		return killLineReport{}, err
	}
	if windowDays > 0 {
		limits.WindowDays = windowDays
	}
	r, err := metrics.ReadKillLine(ctx, st, now, limits)
	if err != nil {
		return killLineReport{}, err
	}
	out := killLineReport{Report: r}
	lost, n, err := failedFees(ctx, st)
	if err != nil {
		return killLineReport{}, err
	}
	if lost >= 0 {
		out.LamportsLost = &lamportsLost{Lamports: lost, Transactions: n}
	}
	return out, nil
}

// printKillLine writes the report in words and tables, for people.
func printKillLine(w io.Writer, r killLineReport) {
	l := r.Limits
	refundWire := fmt.Sprintf("Refunds over %d%% of paid calls in any %d-day window", l.RefundsOverPercentOfPaid, l.WindowDays)
	freeWire := fmt.Sprintf("Free use over %dx paid use", l.FreeOverTimesPaid)
	if r.BeforeDay0 {
		fmt.Fprintln(w, "Day-0: not yet. The ledger holds no paid call from outside (house audits and test-network settles never count),")
		fmt.Fprintln(w, "so no tripwire has a figure: every one is before Day-0.")
		fmt.Fprintf(w, "%s: before Day-0.\n%s: before Day-0.\n", refundWire, freeWire)
	} else {
		fmt.Fprintf(w, "Day-0: %s (transaction %s, ledger row %d), the first outside paid settle; the tripwires count from it.\n",
			r.Day0.At.UTC().Format(time.RFC3339Nano), r.Day0.PaymentTx, r.Day0.LedgerID)
		printWire(w, refundWire, r.Refunds, []string{"refunds", "share"}, func(v tripwire.Window) []string {
			return []string{fmt.Sprint(v.Refunds), percent(v.RefundShare)}
		}, "worst", "first tripped", "trailing")
		printWire(w, freeWire, r.FreeUse, []string{"free calls", "free per paid"}, func(v tripwire.Window) []string {
			return []string{fmt.Sprint(v.FreeCalls), times(v.FreePerPaid)}
		}, "since Day-0", "worst", "first tripped", "trailing")
	}
	if r.LamportsLost != nil {
		fmt.Fprintf(w, "Lamports lost on failed mainnet payment transactions (settlement rows kept): %d over %d transactions.\n",
			r.LamportsLost.Lamports, r.LamportsLost.Transactions)
	}
}

// printWire writes one wire's verdict and a table of the named windows it has.
func printWire(w io.Writer, title string, wire *tripwire.Wire, heads []string, cells func(tripwire.Window) []string, rows ...string) {
	if wire.Tripped {
		fmt.Fprintf(w, "%s: TRIPPED (stop and review), first in the window %s to %s.\n", title, wire.FirstTripped.Start, wire.FirstTripped.End)
	} else {
		fmt.Fprintf(w, "%s: not tripped.\n", title)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  window\tstart\tend\tpaid calls\t%s\t%s\n", heads[0], heads[1])
	named := map[string]*tripwire.Window{"since Day-0": wire.SinceDay0, "worst": wire.Worst, "first tripped": wire.FirstTripped, "trailing": &wire.Trailing}
	for _, name := range rows {
		v := named[name]
		if v == nil {
			continue
		}
		c := cells(*v)
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\n", name, v.Start, v.End, v.PaidCalls, c[0], c[1])
	}
	tw.Flush()
}

func percent(share *float64) string {
	if share == nil {
		return "no paid calls"
	}
	return fmt.Sprintf("%.1f%%", *share*100)
}

func times(ratio *float64) string {
	if ratio == nil {
		return "no paid calls"
	}
	return fmt.Sprintf("%.1fx", *ratio)
}

// runKillLine is `ledger -tripwires` and `ledger tripwires`: the report of st as of now, in
// words or, with asJSON, as one JSON object.
func runKillLine(ctx context.Context, st store.Store, windowDays int, asJSON bool, stdout, stderr io.Writer) int {
	r, err := readKillLine(ctx, st, time.Now(), windowDays)
	if err != nil {
		fmt.Fprintln(stderr, "ledger tripwires:", err)
		return 1
	}
	if !asJSON {
		printKillLine(stdout, r)
		return 0
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return 1
	}
	return 0
}
