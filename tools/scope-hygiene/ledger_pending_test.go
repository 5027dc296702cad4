package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// TestLedgerPendingAndStrandedRefund: a payment that settled and was never delivered has no
// ledger row; `ledger pending` lists it and `ledger refund -tx` finds it, books its ledger row
// refunded (house, as a devnet payment) and closes the settlement, on both backends.
func TestLedgerPendingAndStrandedRefund(t *testing.T) {
	eachLedgerStore(t, func(t *testing.T, ctx context.Context, dsn string, st store.Store) {
		settled := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
		fee := int64(10001)
		const tx = "5tranded1111111111111111111111111111111111111111111111111111111111111111111111111111"
		if _, err := st.(settlementsOf).Settlements().Reserve(ctx, &x402.Settlement{TxSig: tx, Challenge: "c", Payer: "PayerWa11et",
			Network: x402.Devnet.CAIP2, Blockhash: "bh", Status: x402.StatusSettled, FeeLamports: &fee, Claims: 1,
			SettledAt: &settled, CreatedAt: settled, UpdatedAt: settled, AmountUnits: 70000}); err != nil {
			t.Fatal(err)
		}
		// A payment not confirmed yet: refund -tx says so, and books nothing.
		const unconfirmed = "Unc0nfirmed11111111111111111111111111111111111111111111111111111111111111111111111111"
		if _, err := st.(settlementsOf).Settlements().Reserve(ctx, &x402.Settlement{TxSig: unconfirmed, Challenge: "c2", Payer: "OtherPayer",
			Network: x402.Devnet.CAIP2, Blockhash: "bh", Status: x402.StatusSubmitted, CreatedAt: settled, UpdatedAt: settled, AmountUnits: 70000}); err != nil {
			t.Fatal(err)
		}
		st.Close()
		var unOut, unErr bytes.Buffer
		if rc := ledgerRefund(ctx, []string{"-store", dsn, "-tx", unconfirmed}, &unOut, &unErr); rc != 1 ||
			!strings.Contains(unErr.String(), "not confirmed yet (status submitted)") {
			t.Fatalf("refund -tx of an unconfirmed payment: %d %q", rc, unErr.String())
		}
		var out, errOut bytes.Buffer
		if rc := ledgerPending(ctx, []string{"-store", dsn}, &out, &errOut); rc != 0 {
			t.Fatalf("pending: %d %s", rc, errOut.String())
		}
		if !strings.Contains(out.String(), tx) || !strings.Contains(out.String(), "2 pending") || strings.Contains(out.String(), "map[") {
			t.Fatalf("pending output:\n%s", out.String())
		}
		out.Reset()
		if rc := ledgerRefund(ctx, []string{"-store", dsn, "-tx", tx}, &out, &errOut); rc != 0 {
			t.Fatalf("refund -tx of a stranded payment: %d %s", rc, errOut.String())
		}
		st, err := openStore(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rows, err := allLedger(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		// The refund books the amount the payment was made at (70 000 here), not the
		// built-in criteria's price.
		if len(rows) != 1 || rows[0].PaymentTx != tx || !rows[0].CAD.Refund || !rows[0].House || rows[0].PayerWallet != "PayerWa11et" ||
			rows[0].SolanaFeeLamports == nil || *rows[0].SolanaFeeLamports != fee || rows[0].PriceUSDCUnits != 70000 {
			t.Fatalf("ledger after the refund: %+v", rows)
		}
		out.Reset()
		if rc := ledgerPending(ctx, []string{"-store", dsn}, &out, &errOut); rc != 0 || strings.Contains(out.String(), tx) || !strings.Contains(out.String(), "1 pending") {
			t.Fatalf("pending after the refund: %d %s", rc, out.String())
		}
		if rc := ledgerRefund(ctx, []string{"-store", dsn, "-tx", tx}, &out, &errOut); rc != 0 {
			t.Fatalf("second refund -tx finds the ledger row now: %d", rc)
		}
		if rows, _ := allLedger(ctx, st); len(rows) != 1 {
			t.Fatalf("a second refund wrote %d rows", len(rows))
		}
	})
}

// TestTripwiresLamportsLost: the fees of failed mainnet transactions still kept are a
// tripwires line; devnet failures are test money and do not count.
func TestTripwiresLamportsLost(t *testing.T) {
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "ledger.db")
	st, err := openStore(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i, nw := range []string{x402.Mainnet.CAIP2, x402.Mainnet.CAIP2, x402.Devnet.CAIP2} {
		fee := int64(5000 + i)
		if _, err := st.(settlementsOf).Settlements().Reserve(ctx, &x402.Settlement{TxSig: "tx" + string(rune('a'+i)), Challenge: "c" + string(rune('a'+i)),
			Payer: "p" + string(rune('a'+i)), Network: nw, Blockhash: "bh", Status: x402.StatusFailed, FeeLamports: &fee, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	var out, errOut bytes.Buffer
	if rc := ledgerTripwires(ctx, []string{"-json", "-store", dsn}, &out, &errOut); rc != 0 {
		t.Fatalf("tripwires: %d %s", rc, errOut.String())
	}
	if !strings.Contains(out.String(), `"lamports_lost_on_failed_transactions":{"lamports":10001,"transactions":2}`) {
		t.Fatalf("tripwires output lacks the lamports-lost line: %s", out.String())
	}
}
