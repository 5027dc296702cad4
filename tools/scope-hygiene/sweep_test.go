package main

import (
	"context"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// batchSweeper has rows rows left in each table and deletes at most batch per table a call.
type batchSweeper struct {
	nonces, free, settlements int64
	calls                     int
}

func (b *batchSweeper) Sweep(_ context.Context, _ time.Time, _ time.Duration, batch int) (store.SweepResult, error) {
	b.calls++
	take := func(left *int64) int64 {
		n := min(*left, int64(batch))
		*left -= n
		return n
	}
	return store.SweepResult{Nonces: take(&b.nonces), FreeTier: take(&b.free), Settlements: take(&b.settlements)}, nil
}

// TestSweepAllLoopsUntilDone: the serve sweep repeats bounded statements until no table fills a
// batch, so a backlog (46,241 free-tier rows in 20 s, as measured in issue 9) drains in one tick.
func TestSweepAllLoopsUntilDone(t *testing.T) {
	b := &batchSweeper{nonces: 1200, free: 46241, settlements: 3}
	r, err := sweepAll(context.Background(), b, time.Now(), 5*time.Second, sweepBatch)
	if err != nil {
		t.Fatal(err)
	}
	if r.Nonces != 1200 || r.FreeTier != 46241 || r.Settlements != 3 || b.free != 0 {
		t.Fatalf("swept %+v, left %d free-tier rows", r, b.free)
	}
	if want := 46241/sweepBatch + 1; b.calls != want {
		t.Fatalf("%d statements per table, want %d", b.calls, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sweepAll(ctx, &batchSweeper{free: 10_000}, time.Now(), time.Second, sweepBatch); err == nil {
		t.Fatal("a cancelled sweep reported success")
	}
}

// TestFeeBudgetFlag: the fee budget defaults to x402.DefaultFeeBudgetLamports, reads its
// environment variable, loses to the flag, and a malformed environment value stops payments
// from starting instead of silently using the default.
func TestFeeBudgetFlag(t *testing.T) {
	parse := func(env map[string]string, args ...string) payConfig {
		var p payConfig
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		payFlags(fs, &p, func(k string) string { return env[k] })
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := parse(nil); p.FeeBudget != x402.DefaultFeeBudgetLamports {
		t.Fatalf("default %d", p.FeeBudget)
	}
	env := map[string]string{"SCOPE_HYGIENE_X402_FEE_BUDGET": "25000"}
	if p := parse(env); p.FeeBudget != 25000 {
		t.Fatalf("from env %d", p.FeeBudget)
	}
	if p := parse(env, "-x402-fee-budget", "0"); p.FeeBudget != 0 {
		t.Fatalf("flag over env %d", p.FeeBudget)
	}
	p := parse(map[string]string{"SCOPE_HYGIENE_X402_FEE_BUDGET": "lots"})
	if _, err := startPayments(context.Background(), p, "http://127.0.0.1:8080", x402.Price{Units: 50000}, nil, slog.New(slog.DiscardHandler)); err == nil ||
		!strings.Contains(err.Error(), "SCOPE_HYGIENE_X402_FEE_BUDGET") {
		t.Fatalf("malformed env: %v", err)
	}
}

// TestPaymentsNeedPublicBaseURL: with a payTo wallet (payments on), the service refuses to start
// without an absolute public base URL, the only origin sign-in-with-x proofs are bound to.
func TestPaymentsNeedPublicBaseURL(t *testing.T) {
	p := payConfig{Network: "devnet", PayTo: "11111111111111111111111111111112"}
	for _, base := range []string{"", "audit.example.com", "ftp://audit.example.com", "http://"} {
		if _, err := startPayments(context.Background(), p, base, x402.Price{Units: 50000}, nil, slog.New(slog.DiscardHandler)); err == nil ||
			!strings.Contains(err.Error(), "-public-base-url") {
			t.Errorf("public base URL %q: %v, want a refusal naming -public-base-url", base, err)
		}
	}
}
