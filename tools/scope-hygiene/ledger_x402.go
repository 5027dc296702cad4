package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// ledgerSubcommands are the ledger commands added by the payments work:
//
//	ledger reconcile-cad -rates <csv>   fill the CAD block of cad_pending rows whose day now has a rate
//	ledger refund (-id N | -tx SIG)     record a refund on one paid row
//	ledger tripwires [-json]            the kill line's tripwires since Day-0 (as ledger -tripwires)
//	ledger pending [-json]              settled payments not delivered yet (resume or refund them)
var ledgerSubcommands = map[string]func(context.Context, []string, io.Writer, io.Writer) int{
	"reconcile-cad": ledgerReconcileCAD,
	"refund":        ledgerRefund,
	"tripwires":     ledgerTripwires,
	"pending":       ledgerPending,
}

// settlementsOf is implemented by both store backends (server/store/*/x402.go).
type settlementsOf interface {
	Settlements() x402.SettlementStore
}

// ledgerPending lists payments that settled (the USDC moved) and whose report was not delivered
// yet, and those still submitted: each is owed a report (resume) or a refund (ledger refund -tx).
func ledgerPending(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ledger pending", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec string
	storeFlag(fs, &spec)
	asJSON := fs.Bool("json", false, "one JSON object per line instead of a table")
	st, rc := openLedgerStore(ctx, fs, &spec, args, stderr)
	if st == nil {
		return rc
	}
	defer st.Close()
	so, ok := st.(settlementsOf)
	if !ok {
		fmt.Fprintln(stderr, "ledger pending: this store has no settlement table")
		return 1
	}
	var rows []*x402.Settlement
	for _, status := range []x402.Status{x402.StatusSettled, x402.StatusSubmitted} {
		r, err := so.Settlements().List(ctx, status, 10000)
		if err != nil {
			fmt.Fprintln(stderr, "ledger pending:", err)
			return 1
		}
		rows = append(rows, r...)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			enc.Encode(map[string]any{"transaction": r.TxSig, "payer": r.Payer, "network": r.Network, "status": string(r.Status),
				"runs": r.Claims, "ledger_row": r.LedgerID, "updated": r.UpdatedAt.UTC().Format(time.RFC3339)})
		}
		return 0
	}
	if len(rows) == 0 {
		fmt.Fprintln(stdout, "no pending payments: every settled payment was delivered or refunded")
		return 0
	}
	fmt.Fprintf(stdout, "%-88s  %-44s  %-9s  %4s  %s\n", "transaction", "payer", "status", "runs", "since")
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-88s  %-44s  %-9s  %4d  %s\n", r.TxSig, r.Payer, r.Status, r.Claims, r.UpdatedAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(stdout, "%d pending: resume within the window, or refund with: scope-hygiene ledger refund -tx <transaction>\n", len(rows))
	return 0
}

// refundStranded records the refund of a settled payment that never got its report and so has
// no ledger row: the closed ledger gets the payment's row, flagged refunded, and the settlement
// row is closed (status failed, reason refunded) so it can no longer be resumed.
func refundStranded(ctx context.Context, st store.Store, tx string) (int64, bool, error) {
	so, ok := st.(settlementsOf)
	if !ok {
		return 0, false, nil
	}
	row, err := so.Settlements().Get(ctx, tx)
	if errors.Is(err, x402.ErrSettlementNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	switch {
	case row.Status == x402.StatusReserved || row.Status == x402.StatusSubmitted:
		return 0, false, errors.New("ledger refund: that payment is not confirmed yet (status " + string(row.Status) +
			"): nothing is known to have moved; the reconciler settles or releases it within a minute or two, then run this again if it settled")
	case row.Status == x402.StatusReleased:
		return 0, false, errors.New("ledger refund: that payment never landed (status released): nothing moved, nothing to refund")
	case row.Status == x402.StatusFailed && row.Reason == x402.ReasonRefunded:
		return 0, false, errors.New("ledger refund: that payment is already refunded")
	case row.Status == x402.StatusFailed:
		return 0, false, errors.New("ledger refund: that payment's transaction failed on-chain (status failed): no USDC moved, nothing to refund")
	case row.Status != x402.StatusSettled || row.LedgerID != nil:
		return 0, false, nil
	}
	if row.AmountUnits == 0 {
		return 0, false, errors.New("ledger refund: the settlement row does not record the amount paid (written before amounts were recorded); refund it by hand from the transaction on the chain")
	}
	ps, err := rules.Default()
	if err != nil {
		return 0, false, err
	}
	now := time.Now().UTC()
	if row.SettledAt != nil {
		now = row.SettledAt.UTC()
	}
	e := store.LedgerEntry{PayerWallet: row.Payer, Timestamp: now, Day: store.Day(now), PriceUSDCUnits: int64(row.AmountUnits),
		CAD: store.CADBlock{Pending: true}, PaymentTx: row.TxSig, SolanaFeeLamports: row.FeeLamports,
		CriteriaVersion: ps.Revision(), VerdictLine: "", Op: store.OpAudit, House: row.Network != x402.Mainnet.CAIP2}
	id, err := st.AppendLedger(ctx, e)
	if err != nil {
		return 0, false, err
	}
	if err := st.MarkRefund(ctx, id); err != nil {
		return 0, false, err
	}
	row.Status, row.Reason, row.LedgerID, row.UpdatedAt = x402.StatusFailed, x402.ReasonRefunded, &id, time.Now().UTC()
	if ok, err := so.Settlements().Update(ctx, row, x402.StatusSettled); err != nil || !ok {
		return id, true, fmt.Errorf("ledger refund: settlement row changed while refunding")
	}
	return id, true, nil
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
			// A stranded payment (settled, report never delivered) has no ledger row yet.
			sid, found, err := refundStranded(ctx, st, *tx)
			if err != nil {
				fmt.Fprintln(stderr, "ledger refund:", err)
				return 1
			}
			if !found {
				fmt.Fprintln(stderr, "ledger refund: no ledger row or undelivered settlement carries that transaction id")
				return 1
			}
			json.NewEncoder(stdout).Encode(map[string]any{"refunded": sid, "stranded": true})
			return 0
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

// ledgerTripwires is `ledger tripwires`: the same report as `ledger -tripwires`, with the window
// length replaceable.
func ledgerTripwires(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ledger tripwires", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec string
	storeFlag(fs, &spec)
	days := fs.Int("window-days", 0, "window length in days (default the criteria's kill_line_tripwires.window_days)")
	asJSON := fs.Bool("json", false, "one JSON object instead of words and tables")
	st, rc := openLedgerStore(ctx, fs, &spec, args, stderr)
	if st == nil {
		return rc
	}
	defer st.Close()
	return runKillLine(ctx, st, *days, *asJSON, stdout, stderr)
}

// failedFees sums the fees our fee payer paid for mainnet payment transactions that landed with
// an error, over the settlement rows still kept (-1 when the store has no settlement table).
// Other networks are test money and never count.
func failedFees(ctx context.Context, st store.Store) (lamports, transactions int64, err error) {
	so, ok := st.(settlementsOf)
	if !ok {
		return -1, 0, nil
	}
	rows, err := so.Settlements().List(ctx, x402.StatusFailed, 1_000_000)
	if err != nil {
		return 0, 0, err
	}
	for _, r := range rows {
		// A refunded row's fee paid for a transfer that landed; it was not lost.
		if r.FeeLamports != nil && r.Network == x402.Mainnet.CAIP2 && r.Reason != x402.ReasonRefunded {
			lamports += *r.FeeLamports
			transactions++
		}
	}
	return lamports, transactions, nil
}
