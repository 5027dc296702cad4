package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

func keyed(t *testing.T, s store.Store) store.Keyed {
	t.Helper()
	k, ok := s.(store.Keyed)
	if !ok {
		t.Fatal("backend has no idempotent writes (store.Keyed)")
	}
	return k
}

// testFreeUseOnce: a free use under a write key is counted once; a retry with the key answers
// that use (allowed, replayed) and consumes nothing, MaxReplays times within KeyLifetime; then
// the key is spent and a call carrying it is a new use. A refused call stores no key.
func testFreeUseOnce(t *testing.T, open Opener) {
	s := open(t)
	k := keyed(t, s)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	lim := store.FreeLimits{PerDay: 3, MinInterval: time.Second}
	wk := store.NewWriteKey(store.WriteFree, "caller", "key-1")
	d, err := k.TakeFreeOnce(ctx, "caller", wk, now, lim)
	if err != nil || d.Outcome != store.FreeAllowed || d.Used != 1 || d.Replayed {
		t.Fatalf("first use: %+v %v", d, err)
	}
	for i := range store.MaxReplays {
		d, err := k.TakeFreeOnce(ctx, "caller", wk, now.Add(time.Duration(i)*time.Millisecond), lim)
		if err != nil || d.Outcome != store.FreeAllowed || d.Used != 1 || !d.Replayed {
			t.Fatalf("retry %d: %+v %v, want the first use replayed", i, d, err)
		}
	}
	if r, err := k.FindWrite(ctx, wk, now); err != nil || r.Used != 1 || r.LedgerID != 0 {
		t.Fatalf("FindWrite: %+v %v", r, err)
	}
	// Spent: a new use, which the minimum interval refuses here; the refusal stores nothing.
	d, err = k.TakeFreeOnce(ctx, "caller", wk, now.Add(10*time.Millisecond), lim)
	if err != nil || d.Outcome != store.FreeTooSoon {
		t.Fatalf("spent key within the interval: %+v %v, want a refusal", d, err)
	}
	other := store.NewWriteKey(store.WriteFree, "caller", "key-2")
	if _, err := k.TakeFreeOnce(ctx, "caller", other, now.Add(20*time.Millisecond), lim); err != nil {
		t.Fatal(err)
	}
	if _, err := k.FindWrite(ctx, other, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused call's key was stored: %v", err)
	}
	d, err = k.TakeFreeOnce(ctx, "caller", wk, now.Add(2*time.Second), lim)
	if err != nil || d.Outcome != store.FreeAllowed || d.Used != 2 || d.Replayed {
		t.Fatalf("spent key after the interval: %+v %v, want a second use", d, err)
	}
	tw, err := s.Tripwires(ctx, now.Add(time.Hour), 24*time.Hour)
	if err != nil || tw.FreeCalls != 2 {
		t.Fatalf("free calls counted %d (%v), want 2", tw.FreeCalls, err)
	}
	if _, err := k.FindWrite(ctx, wk, now.Add(2*time.Second+store.KeyLifetime)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("key found past its lifetime: %v", err)
	}
}

// testLedgerRowOnce: a house audit's row under a write key is written once; a retry returns the
// same row, replayed; FindWrite and FindPayment find committed rows; the sweep deletes keys past
// their lifetime and never a ledger row.
func testLedgerRowOnce(t *testing.T, open Opener) {
	s := open(t)
	k := keyed(t, s)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	house := store.LedgerEntry{Timestamp: now, Day: store.Day(now), CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit, House: true}
	wk := store.NewWriteKey(store.WriteHouse, "criteria", "key-1")
	if _, err := k.FindWrite(ctx, wk, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindWrite before the write: %v", err)
	}
	id, replayed, err := k.AppendLedgerOnce(ctx, house, wk, now)
	if err != nil || replayed {
		t.Fatalf("first append: %d %v %v", id, replayed, err)
	}
	again, replayed, err := k.AppendLedgerOnce(ctx, house, wk, now.Add(time.Second))
	if err != nil || !replayed || again != id {
		t.Fatalf("retry: %d %v %v, want row %d replayed", again, replayed, err, id)
	}
	if r, err := k.FindWrite(ctx, wk, now); err != nil || r.LedgerID != id {
		t.Fatalf("FindWrite: %+v %v, want row %d", r, err, id)
	}
	if rows, err := s.ListLedger(ctx, 0, 10); err != nil || len(rows) != 1 {
		t.Fatalf("ledger has %d rows (%v), want 1", len(rows), err)
	}
	paid := store.LedgerEntry{PayerWallet: "w", Timestamp: now, Day: store.Day(now), PriceUSDCUnits: 50000, PaymentTx: "tx-9",
		SolanaFeeLamports: int64p(5000), CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit}
	if _, err := k.FindPayment(ctx, "tx-9"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FindPayment before the write: %v", err)
	}
	pid, _, err := k.AppendLedgerOnce(ctx, paid, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k.FindPayment(ctx, "tx-9"); err != nil || got != pid {
		t.Fatalf("FindPayment: %d %v, want %d", got, err, pid)
	}
	if err := k.ProbeWrite(ctx, now); err != nil {
		t.Fatalf("write probe: %v", err)
	}
	sw, ok := s.(store.Sweeper)
	if !ok {
		t.Fatal("backend has no sweeper")
	}
	r, err := sw.Sweep(ctx, now.Add(store.KeyLifetime-time.Millisecond), time.Second, 100)
	if err != nil || r.WriteKeys != 0 {
		t.Fatalf("sweep before the lifetime: %+v %v", r, err)
	}
	r, err = sw.Sweep(ctx, now.Add(store.KeyLifetime), time.Second, 100)
	if err != nil || r.WriteKeys != 1 {
		t.Fatalf("sweep after the lifetime: %+v %v, want one key", r, err)
	}
	if rows, err := s.ListLedger(ctx, 0, 10); err != nil || len(rows) != 2 {
		t.Fatalf("ledger after the sweep: %d rows (%v), want 2", len(rows), err)
	}
}

// testClosedStoreCommitsNothing: a write that cannot begin is marked store.ErrNotApplied (the
// service may then say nothing was recorded).
func testClosedStoreCommitsNothing(t *testing.T, open Opener) {
	s := open(t)
	k := keyed(t, s)
	s.Close()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if _, err := k.TakeFreeOnce(ctx, "c", store.NewWriteKey(store.WriteFree, "c", "k"), now, store.FreeLimits{PerDay: 1}); !errors.Is(err, store.ErrNotApplied) {
		t.Fatalf("free use on a closed store: %v, want ErrNotApplied", err)
	}
	e := store.LedgerEntry{Timestamp: now, CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit, House: true}
	if _, _, err := k.AppendLedgerOnce(ctx, e, store.NewWriteKey(store.WriteHouse, "c", "k"), now); !errors.Is(err, store.ErrNotApplied) {
		t.Fatalf("ledger append on a closed store: %v, want ErrNotApplied", err)
	}
}
