package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// TestLedgerOperatorCommands drives `ledger reconcile-cad`, `ledger refund` and `ledger tripwires`
// against both backends: CAD values filled from the operator's CSV where the day is known and left
// pending where it is not, a refund found by transaction id, and the refund share reported.
func TestLedgerOperatorCommands(t *testing.T) {
	eachLedgerStore(t, func(t *testing.T, ctx context.Context, dsn string, st store.Store) {
		now := time.Now().UTC()
		day := store.Day(now)
		yesterday := store.Day(now.AddDate(0, 0, -1))
		rows := []store.LedgerEntry{ // in time order, as a ledger is written: yesterday's row is Day-0
			{PayerWallet: "payer-b", Timestamp: now.AddDate(0, 0, -1), Day: yesterday, PriceUSDCUnits: 50000, CAD: store.CADBlock{Pending: true},
				PaymentTx: "tx-b", SolanaFeeLamports: ptr(int64(5000)), CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit},
			{PayerWallet: "payer-a", Timestamp: now, Day: day, PriceUSDCUnits: 50000, CAD: store.CADBlock{Pending: true},
				PaymentTx: "tx-a", SolanaFeeLamports: ptr(int64(5000)), CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit, UndeclaredClusters: ptr(0)},
		}
		for _, r := range rows {
			if _, err := st.AppendLedger(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()
		rates := filepath.Join(t.TempDir(), "usdcad.csv")
		if err := os.WriteFile(rates, []byte("date,rate\n"+day+",1.3725\n"), 0o600); err != nil {
			t.Fatal(err)
		}

		var out, errOut bytes.Buffer
		if rc := ledgerReconcileCAD(ctx, []string{"-store", dsn, "-rates", rates}, &out, &errOut); rc != 0 {
			t.Fatalf("reconcile-cad exit %d: %s", rc, errOut.String())
		}
		var rec map[string]int
		if err := json.Unmarshal(out.Bytes(), &rec); err != nil || rec["fixed"] != 1 || rec["still_pending"] != 1 {
			t.Fatalf("reconcile-cad = %s (%v), want fixed 1, still_pending 1", out.String(), err)
		}

		out.Reset()
		if rc := ledgerRefund(ctx, []string{"-store", dsn, "-tx", "tx-a"}, &out, &errOut); rc != 0 {
			t.Fatalf("refund exit %d: %s", rc, errOut.String())
		}
		if rc := ledgerRefund(ctx, []string{"-store", dsn, "-tx", "tx-unknown"}, &out, &errOut); rc != 1 {
			t.Fatalf("refund of an unknown transaction: exit %d, want 1", rc)
		}

		st, err := openStore(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		got, err := allLedger(ctx, st)
		st.Close()
		if err != nil || len(got) != 2 {
			t.Fatalf("ledger rows: %d, %v", len(got), err)
		}
		for _, e := range got {
			switch e.PaymentTx {
			case "tx-a":
				if e.CAD.Pending || e.CAD.Rate != "1.3725" || e.CAD.RateDate != day || e.CAD.Basis == "" || !e.CAD.Refund {
					t.Errorf("tx-a CAD block = %+v, want the day's rate, a basis, not pending, refunded", e.CAD)
				}
			case "tx-b":
				if !e.CAD.Pending || e.CAD.Rate != "" || e.CAD.Refund {
					t.Errorf("tx-b CAD block = %+v, want still pending, not refunded", e.CAD)
				}
			}
		}

		out.Reset()
		if rc := ledgerTripwires(ctx, []string{"-json", "-store", dsn}, &out, &errOut); rc != 0 {
			t.Fatalf("tripwires exit %d: %s", rc, errOut.String())
		}
		if !bytes.Contains(out.Bytes(), []byte(`"refund_share":0.5`)) {
			t.Fatalf("tripwires output lacks the refund share of 1 in 2 paid calls:\n%s", out.String())
		}
	})
}

func ptr[T any](v T) *T { return &v }
