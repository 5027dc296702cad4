package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// ledgerSubcommands are the ledger commands added by the payments work:
//
//	ledger reconcile-cad -rates <csv>   fill the CAD block of cad_pending rows whose day now has a rate
//	ledger refund (-id N | -tx SIG)     record a refund on one paid row
//	ledger tripwires [-window-days 30]  refunds as a share of paid calls over every window, free vs paid
var ledgerSubcommands = map[string]func(context.Context, []string, io.Writer, io.Writer) int{
	"reconcile-cad": ledgerReconcileCAD,
	"refund":        ledgerRefund,
	"tripwires":     ledgerTripwires,
}

// cadSetter is implemented by both store backends (server/store/*/x402.go).
type cadSetter interface {
	SetLedgerCAD(ctx context.Context, id int64, rate, rateDate, basis string, pending bool) error
}

func allLedger(ctx context.Context, st store.Store) ([]store.LedgerEntry, error) {
	var out []store.LedgerEntry
	var after int64
	for {
		rows, err := st.ListLedger(ctx, after, 1000)
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			return out, nil
		}
		out = append(out, rows...)
		after = rows[len(rows)-1].ID
	}
}

// openLedgerStore parses the command's flags, then opens the store they name (spec is read after
// parsing, so -store wins over the default).
func openLedgerStore(ctx context.Context, fs *flag.FlagSet, spec *string, args []string, stderr io.Writer) (store.Store, int) {
	if err := fs.Parse(args); err != nil {
		return nil, 2
	}
	st, err := openExistingStore(ctx, *spec)
	if err != nil {
		fmt.Fprintln(stderr, "ledger:", err)
		return nil, 1
	}
	return st, 0
}

func ledgerReconcileCAD(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ledger reconcile-cad", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec string
	storeFlag(fs, &spec)
	ratesPath := fs.String("rates", getenv(envName("x402-rates-csv")), "daily USD/CAD rates CSV (date,rate) (env "+envName("x402-rates-csv")+")")
	basis := fs.String("basis", x402.DefaultCADBasis, "basis stated with every CAD rate")
	st, rc := openLedgerStore(ctx, fs, &spec, args, stderr)
	if st == nil {
		return rc
	}
	defer st.Close()
	if *ratesPath == "" {
		fmt.Fprintln(stderr, "ledger reconcile-cad: -rates is required")
		return 2
	}
	rates, err := x402.LoadRates(*ratesPath, *basis)
	if err != nil {
		fmt.Fprintln(stderr, "ledger reconcile-cad:", err)
		return 1
	}
	cs, ok := st.(cadSetter)
	if !ok {
		fmt.Fprintln(stderr, "ledger reconcile-cad: this store cannot update CAD blocks")
		return 1
	}
	rows, err := allLedger(ctx, st)
	if err != nil {
		fmt.Fprintln(stderr, "ledger reconcile-cad:", err)
		return 1
	}
	fixed, pending := 0, 0
	for _, e := range rows {
		if !e.CAD.Pending {
			continue
		}
		c := rates.For(e.Day)
		if c.Pending {
			pending++
			continue
		}
		if err := cs.SetLedgerCAD(ctx, e.ID, c.Rate, c.RateDate, c.Basis, false); err != nil {
			fmt.Fprintln(stderr, "ledger reconcile-cad:", err)
			return 1
		}
		fixed++
	}
	json.NewEncoder(stdout).Encode(map[string]int{"fixed": fixed, "still_pending": pending})
	return 0
}

func ledgerRefund(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ledger refund", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec string
	storeFlag(fs, &spec)
	id := fs.Int64("id", 0, "ledger row id to mark refunded")
	tx := fs.String("tx", "", "payment transaction id of the row to mark refunded")
	st, rc := openLedgerStore(ctx, fs, &spec, args, stderr)
	if st == nil {
		return rc
	}
	defer st.Close()
	if (*id == 0) == (*tx == "") {
		fmt.Fprintln(stderr, "ledger refund: give exactly one of -id or -tx")
		return 2
	}
	if *tx != "" {
		rows, err := allLedger(ctx, st)
		if err != nil {
			fmt.Fprintln(stderr, "ledger refund:", err)
			return 1
		}
		for _, e := range rows {
			if e.PaymentTx == *tx {
				*id = e.ID
			}
		}
		if *id == 0 {
			fmt.Fprintln(stderr, "ledger refund: no ledger row carries that transaction id")
			return 1
		}
	}
	if err := st.MarkRefund(ctx, *id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			fmt.Fprintln(stderr, "ledger refund: no such ledger row")
			return 1
		}
		fmt.Fprintln(stderr, "ledger refund:", err)
		return 1
	}
	json.NewEncoder(stdout).Encode(map[string]any{"refunded": *id})
	return 0
}

// windowFigures is one window's tripwire figures.
type windowFigures struct {
	End         string  `json:"window_end"`
	PaidCalls   int64   `json:"paid_calls"`
	Refunds     int64   `json:"refunds"`
	RefundShare float64 `json:"refund_share"`
	FreeCalls   int64   `json:"free_calls"`
	FreePerPaid float64 `json:"free_per_paid"`
}

func figures(end time.Time, tw store.Tripwires) windowFigures {
	r := metrics.FreePerPaid(tw)
	if math.IsInf(r, 1) {
		r = -1 // free calls with no paid call: printed as -1 (unbounded)
	}
	return windowFigures{End: store.Day(end), PaidCalls: tw.PaidCalls, Refunds: tw.Refunds, RefundShare: tw.RefundShare(),
		FreeCalls: tw.FreeCalls, FreePerPaid: r}
}

func ledgerTripwires(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ledger tripwires", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec string
	storeFlag(fs, &spec)
	days := fs.Int("window-days", 30, "window length in days")
	st, rc := openLedgerStore(ctx, fs, &spec, args, stderr)
	if st == nil {
		return rc
	}
	defer st.Close()
	window := time.Duration(*days) * 24 * time.Hour
	rows, err := allLedger(ctx, st)
	if err != nil {
		fmt.Fprintln(stderr, "ledger tripwires:", err)
		return 1
	}
	now := time.Now().UTC()
	// Every window ending on a day from the first ledger day to today (each ends at 23:59:59.999).
	start := now
	for _, e := range rows {
		if e.Timestamp.Before(start) {
			start = e.Timestamp
		}
	}
	var worstRefund, worstFree *windowFigures
	var trailing windowFigures
	for d := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC); !d.After(now); d = d.AddDate(0, 0, 1) {
		end := d.Add(24*time.Hour - time.Millisecond)
		if end.After(now) {
			end = now
		}
		tw, err := st.Tripwires(ctx, end, window)
		if err != nil {
			fmt.Fprintln(stderr, "ledger tripwires:", err)
			return 1
		}
		f := figures(end, tw)
		trailing = f
		if worstRefund == nil || f.RefundShare > worstRefund.RefundShare {
			c := f
			worstRefund = &c
		}
		if worstFree == nil || f.FreePerPaid < 0 || (worstFree.FreePerPaid >= 0 && f.FreePerPaid > worstFree.FreePerPaid) {
			c := f
			worstFree = &c
		}
	}
	out := map[string]any{
		"window_days": *days, "trailing": trailing,
		"worst_refund_window": worstRefund, "worst_free_window": worstFree,
		"refunds_over_5pct_of_paid_in_any_window": worstRefund != nil && worstRefund.RefundShare > metrics.RefundShareLimit,
		"free_over_10x_paid_in_any_window":        worstFree != nil && (worstFree.FreePerPaid < 0 || worstFree.FreePerPaid > metrics.FreeToPaidLimit),
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return 1
	}
	return 0
}
