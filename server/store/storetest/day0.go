package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// settle is a paid audit's ledger row as the payment gate writes it: house is true for a house
// audit and for a payment on any network but mainnet (gate.Settle books those as house rows).
func settle(ts time.Time, tx string, house bool) store.LedgerEntry {
	return store.LedgerEntry{PayerWallet: "payer", Timestamp: ts, Day: store.Day(ts), PriceUSDCUnits: 50000,
		CAD: store.CADBlock{Pending: true}, PaymentTx: tx, SolanaFeeLamports: int64p(5000), CriteriaVersion: "1.0.0",
		VerdictLine: "v", Op: store.OpAudit, House: house}
}

func wantDay0(t *testing.T, s store.Store, want *store.Day0, why string) {
	t.Helper()
	got, ok, err := s.Day0(context.Background())
	switch {
	case err != nil:
		t.Fatalf("%s: Day0: %v", why, err)
	case want == nil && ok:
		t.Fatalf("%s: Day-0 set to %+v, want none", why, got)
	case want != nil && (!ok || !got.At.Equal(want.At) || got.PaymentTx != want.PaymentTx || got.LedgerID != want.LedgerID):
		t.Fatalf("%s: Day-0 = %+v (set %v), want %+v", why, got, ok, *want)
	}
}

// testDay0Rules: house audits, test-network settles and rows without a payment never set Day-0;
// the first outside paid settle sets it, in the same write as its row; later settles (even one
// timestamped earlier), a repeated append of the same payment and another handle (a restart, a
// replica) never move it.
func testDay0Rules(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	t0 := time.Date(2026, 10, 25, 9, 30, 0, 123_000_000, time.UTC)
	wantDay0(t, s, nil, "empty ledger")
	noDay0 := []store.LedgerEntry{
		{Timestamp: t0, Day: store.Day(t0), CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit, House: true},
		settle(t0.Add(time.Minute), "devnet-tx", true),
		{Timestamp: t0, Day: store.Day(t0), CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit},
	}
	for i, e := range noDay0 {
		if _, err := s.AppendLedger(ctx, e); err != nil {
			t.Fatal(err)
		}
		wantDay0(t, s, nil, []string{"a house audit", "a test-network settle", "a row without a payment"}[i])
	}
	id, err := s.AppendLedger(ctx, settle(t0.Add(time.Hour), "tx-first", false))
	if err != nil {
		t.Fatal(err)
	}
	first := &store.Day0{At: t0.Add(time.Hour), PaymentTx: "tx-first", LedgerID: id}
	wantDay0(t, s, first, "the first outside paid settle")
	for _, e := range []store.LedgerEntry{settle(t0.Add(2*time.Hour), "tx-later", false), settle(t0.Add(-time.Hour), "tx-earlier-stamped", false),
		settle(t0.Add(3*time.Hour), "tx-first", false)} {
		if _, err := s.AppendLedger(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	wantDay0(t, s, first, "later settles")
	wantDay0(t, open(t), first, "another handle")

	days, err := s.TripwireDays(ctx, store.Day(t0), store.Day(t0))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.DayCounts{{Day: store.Day(t0), PaidCalls: 4, HouseCalls: 2}}
	if d := cmp.Diff(want, days); d != "" {
		t.Fatalf("TripwireDays (-want +got):\n%s", d)
	}
}

// testDay0Race: replicas settling their first outside payments at once agree on one Day-0, and
// it is the row of the payment it names.
func testDay0Race(t *testing.T, open Opener) {
	ctx := context.Background()
	t0 := time.Date(2026, 10, 25, 9, 30, 0, 0, time.UTC)
	handles := make([]store.Store, 4)
	for i := range handles {
		handles[i] = open(t)
	}
	ids := make([]int64, len(handles))
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := h.AppendLedger(ctx, settle(t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("tx-%d", i), false))
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	d, ok, err := handles[0].Day0(ctx)
	if err != nil || !ok {
		t.Fatalf("Day0 after the race: %+v, %v, %v", d, ok, err)
	}
	var i int
	if _, err := fmt.Sscanf(d.PaymentTx, "tx-%d", &i); err != nil || ids[i] != d.LedgerID || !d.At.Equal(t0.Add(time.Duration(i)*time.Second)) {
		t.Fatalf("Day-0 %+v is not the row of its payment (ids %v)", d, ids)
	}
	for _, h := range handles[1:] {
		wantDay0(t, h, &d, "every replica")
	}
}

// testTripwireDays: each day's counts, free calls joined to ledger days and days with free
// calls only, within the asked range.
func testTripwireDays(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	d1 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	d2, d3 := d1.AddDate(0, 0, 1), d1.AddDate(0, 0, 2)
	for _, e := range []struct {
		ts       time.Time
		tx       string
		house    bool
		refunded bool
	}{{d1, "a", false, true}, {d1, "b", false, false}, {d1, "", true, false}, {d3, "c", false, false}, {d3.AddDate(0, 0, 1), "d", false, false}} {
		id, err := s.AppendLedger(ctx, settle(e.ts, e.tx, e.house))
		if err != nil {
			t.Fatal(err)
		}
		if e.refunded {
			if err := s.MarkRefund(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, at := range []time.Time{d1, d2, d2.Add(time.Minute)} {
		if _, err := s.TakeFree(ctx, fmt.Sprint("k", i), at, store.FreeLimits{PerDay: 100}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TripwireDays(ctx, store.Day(d1), store.Day(d3))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.DayCounts{
		{Day: store.Day(d1), PaidCalls: 2, Refunds: 1, HouseCalls: 1, FreeCalls: 1},
		{Day: store.Day(d2), FreeCalls: 2},
		{Day: store.Day(d3), PaidCalls: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("TripwireDays (-want +got):\n%s", d)
	}
}
