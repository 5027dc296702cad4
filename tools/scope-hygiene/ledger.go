package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// ledgerRow is one ledger row as the ledger command prints it (one JSON object per line).
type ledgerRow struct {
	ID                 int64   `json:"id"`
	PayerWallet        *string `json:"payer_wallet"`
	Timestamp          string  `json:"timestamp"`
	Day                string  `json:"day"`
	PriceUSDCUnits     int64   `json:"price_usdc_units"`
	CAD                cadRow  `json:"cad"`
	PaymentTx          *string `json:"payment_tx"`
	SolanaFeeLamports  *int64  `json:"solana_fee_lamports"`
	CriteriaVersion    string  `json:"criteria_version"`
	VerdictLine        string  `json:"verdict_line"`
	Op                 string  `json:"op"`
	UndeclaredClusters *int    `json:"undeclared_clusters"`
	House              bool    `json:"house"`
}

type cadRow struct {
	Rate     *string `json:"rate"`
	RateDate *string `json:"rate_date"`
	Basis    *string `json:"basis"`
	Pending  bool    `json:"cad_pending"`
	Refund   bool    `json:"refund"`
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toRow(e store.LedgerEntry) ledgerRow {
	return ledgerRow{ID: e.ID, PayerWallet: opt(e.PayerWallet), Timestamp: e.Timestamp.UTC().Format(time.RFC3339Nano), Day: e.Day,
		PriceUSDCUnits: e.PriceUSDCUnits, CAD: cadRow{Rate: opt(e.CAD.Rate), RateDate: opt(e.CAD.RateDate), Basis: opt(e.CAD.Basis),
			Pending: e.CAD.Pending, Refund: e.CAD.Refund}, PaymentTx: opt(e.PaymentTx), SolanaFeeLamports: e.SolanaFeeLamports,
		CriteriaVersion: e.CriteriaVersion, VerdictLine: e.VerdictLine, Op: e.Op, UndeclaredClusters: e.UndeclaredClusters, House: e.House}
}

// devChainStore is where `scope-hygiene dev-chain` keeps its store: the store file under its
// -dir (env SCOPE_HYGIENE_DEV_DIR, default var/dev-chain; devchain.go).
func devChainStore() string {
	dir := os.Getenv("SCOPE_HYGIENE_DEV_DIR")
	if dir == "" {
		dir = "var/dev-chain"
	}
	return filepath.Join(dir, "scope-hygiene.db")
}

// defaultLedgerStore finds the ledger when neither -store nor SCOPE_HYGIENE_STORE names it: the
// store `serve` uses by default (var/scope-hygiene.db) or the one `dev-chain` uses; when both
// exist, the one written last. Unless it reads serve's store alone, it says on stderr which store
// it reads, and where the other is.
func defaultLedgerStore(fs *flag.FlagSet, spec string, stderr io.Writer) string {
	set := os.Getenv(envName("store")) != ""
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "store" })
	if set {
		return spec
	}
	type candidate struct {
		path, by string
		mod      time.Time
	}
	var found []candidate
	for _, c := range []candidate{{path: strings.TrimPrefix(spec, "sqlite:"), by: "serve"}, {path: devChainStore(), by: "dev-chain"}} {
		if st, err := os.Stat(c.path); err == nil && st.Mode().IsRegular() {
			c.mod = st.ModTime()
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		fmt.Fprintf(stderr, "ledger: no store at %s (serve's default) or %s (dev-chain's); give -store\n", strings.TrimPrefix(spec, "sqlite:"), devChainStore())
		return spec
	case 2:
		if found[1].mod.After(found[0].mod) {
			found[0], found[1] = found[1], found[0]
		}
		fmt.Fprintf(stderr, "ledger: reading sqlite:%s (%s's store, written last); %s's is -store sqlite:%s\n", found[0].path, found[0].by, found[1].by, found[1].path)
	default:
		if found[0].by != "serve" { // serve's is the flag's default: nothing to say
			fmt.Fprintf(stderr, "ledger: reading sqlite:%s (%s's store)\n", found[0].path, found[0].by)
		}
	}
	return "sqlite:" + found[0].path
}

func ledger(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if sub, ok := ledgerSubcommands[args[0]]; ok { // ledger_x402.go
			return sub(ctx, args[1:], stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("ledger", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var spec string
	storeFlag(fs, &spec)
	after := fs.Int64("after", 0, "print rows with id greater than this")
	limit := fs.Int("limit", 1000, "print at most this many rows")
	trip := fs.Bool("tripwires", false, "print the kill line's tripwires since Day-0 instead (every window, the worst, the first tripped, the trailing one)")
	asJSON := fs.Bool("json", false, "with -tripwires: one JSON object instead of words and tables")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	spec = defaultLedgerStore(fs, spec, stderr)
	st, err := openExistingStore(ctx, spec)
	if err != nil {
		fmt.Fprintln(stderr, "ledger:", err)
		return 1
	}
	defer st.Close()
	if *trip {
		return runKillLine(ctx, st, 0, *asJSON, stdout, stderr)
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	rows, err := st.ListLedger(ctx, *after, *limit)
	if err != nil {
		fmt.Fprintln(stderr, "ledger:", err)
		return 1
	}
	for _, e := range rows {
		if err := enc.Encode(toRow(e)); err != nil {
			return 1
		}
	}
	return 0
}
