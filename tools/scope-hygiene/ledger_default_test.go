package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// TestLedgerFindsTheDefaultStores: with no -store and no SCOPE_HYGIENE_STORE, `ledger` reads the
// store `dev-chain` wrote when it is the only one, the newer of serve's and dev-chain's when both
// exist, and says which it read and where the other is.
func TestLedgerFindsTheDefaultStores(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("SCOPE_HYGIENE_STORE", "")
	t.Setenv("SCOPE_HYGIENE_DEV_DIR", "")
	ctx := context.Background()
	write := func(path, tx string) {
		t.Helper()
		if err := os.MkdirAll(strings.TrimSuffix(path, "/scope-hygiene.db"), 0o755); err != nil {
			t.Fatal(err)
		}
		st, err := openStore(ctx, "sqlite:"+path)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		if _, err := st.AppendLedger(ctx, store.LedgerEntry{PayerWallet: "payer", Timestamp: now, Day: store.Day(now), PriceUSDCUnits: 50000,
			CAD: store.CADBlock{Pending: true}, PaymentTx: tx, CriteriaVersion: "1.0.1", VerdictLine: "v", Op: store.OpAudit}); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	ledgerOut := func() (int, string, string) {
		var out, errOut bytes.Buffer
		rc := ledger(ctx, nil, &out, &errOut)
		return rc, out.String(), errOut.String()
	}

	if rc, _, se := ledgerOut(); rc == 0 || !strings.Contains(se, "var/dev-chain/scope-hygiene.db") {
		t.Fatalf("no store: exit %d, %q", rc, se)
	}
	write("var/dev-chain/scope-hygiene.db", "tx-dev-chain")
	rc, so, se := ledgerOut()
	if rc != 0 || !strings.Contains(so, "tx-dev-chain") || !strings.Contains(se, "dev-chain's store") {
		t.Fatalf("after dev-chain: exit %d\n%s\n%s", rc, so, se)
	}
	time.Sleep(20 * time.Millisecond)
	write("var/scope-hygiene.db", "tx-serve")
	rc, so, se = ledgerOut()
	if rc != 0 || !strings.Contains(so, "tx-serve") || !strings.Contains(se, "serve's store, written last") || !strings.Contains(se, "-store sqlite:var/dev-chain/scope-hygiene.db") {
		t.Fatalf("both: exit %d\n%s\n%s", rc, so, se)
	}
	var out, errOut bytes.Buffer
	if rc := ledger(ctx, []string{"-store", "sqlite:var/dev-chain/scope-hygiene.db"}, &out, &errOut); rc != 0 || !strings.Contains(out.String(), "tx-dev-chain") || errOut.Len() != 0 {
		t.Fatalf("-store: exit %d\n%s\n%s", rc, out.String(), errOut.String())
	}
}
