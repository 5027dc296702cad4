// Package storetest is the conformance suite every store.Store backend must pass.
package storetest

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scopehygiene/scope-hygiene/server/settlement"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Opener opens one more handle on the same database (a second replica).
type Opener func(t *testing.T) store.Store

// Run runs the suite. fresh creates a new, empty database for one subtest and returns an Opener
// for it; handles it opens are closed by the caller's cleanup.
func Run(t *testing.T, fresh func(t *testing.T) Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"LedgerColumnsAreTheClosedList", testLedgerColumns},
		{"LedgerRoundTrip", testLedgerRoundTrip},
		{"LedgerOneRowPerPayment", testLedgerOneRowPerPayment},
		{"FreeTierSequence", testFreeTierSequence},
		{"FreeTierConcurrentInterval", testFreeTierConcurrentInterval},
		{"FreeTierConcurrentDaily", testFreeTierConcurrentDaily},
		{"Tripwires", testTripwires},
		{"TripwireDays", testTripwireDays},
		{"Day0Rules", testDay0Rules},
		{"Day0Race", testDay0Race},
		{"MigrationsIdempotent", testMigrationsIdempotent},
		{"SweepKeepsLedgerAndOwedPayments", testSweepKeepsLedger},
		{"FreeUseOnce", testFreeUseOnce},
		{"LedgerRowOnce", testLedgerRowOnce},
		{"ClosedStoreCommitsNothing", testClosedStoreCommitsNothing},
		{"GroupWritersDurable", testGroupWritersDurable},
		{"GroupFailingWriteAlone", testGroupFailingWriteAlone},
		{"GroupCancelledCallerWritesNothing", testGroupCancelledCallerWritesNothing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh(t)) })
	}
}

func testLedgerColumns(t *testing.T, open Opener) {
	s := open(t)
	got, err := s.LedgerColumns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := store.LedgerColumnNames()
	sort.Strings(got)
	sort.Strings(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ledger columns differ from the criteria's closed field list (-want +got):\n%s", d)
	}
}

func intp(v int) *int       { return &v }
func int64p(v int64) *int64 { return &v }

func testLedgerRoundTrip(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	ts := time.Date(2026, 11, 30, 12, 0, 0, 123_000_000, time.UTC)
	entries := []store.LedgerEntry{
		{
			PayerWallet: "4Nd1mYQzvgV8Vr3Z3nYb7pKdM3x5qJ8tq8z5w1sYcGkA", Timestamp: ts, Day: "2026-11-30",
			PriceUSDCUnits:    50000,
			CAD:               store.CADBlock{Rate: "1.3725", RateDate: "2026-11-29", Basis: "Bank of Canada daily average", Pending: false},
			PaymentTx:         "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW",
			SolanaFeeLamports: int64p(5000), CriteriaVersion: "1.0.0",
			VerdictLine: "MEMORY SCOPE-HYGIENE — records: 2 · live: 2 · unscoped: 0.0% · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 0 — 2026-11-30T12:00:00Z",
			Op:          store.OpAudit, UndeclaredClusters: intp(0),
		},
		{
			Timestamp: ts.Add(time.Second), Day: "2026-11-30", CAD: store.CADBlock{Pending: false},
			CriteriaVersion: "1.0.0", VerdictLine: "MEMORY SCOPE-HYGIENE — house", Op: store.OpAudit, House: true,
		},
		{
			PayerWallet: "w", Timestamp: ts.Add(2 * time.Second), Day: "2026-11-30", PriceUSDCUnits: 50000,
			CAD: store.CADBlock{Pending: true}, CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit,
		},
	}
	for i := range entries {
		id, err := s.AppendLedger(ctx, entries[i])
		if err != nil {
			t.Fatal(err)
		}
		entries[i].ID = id
	}
	if err := s.MarkRefund(ctx, entries[2].ID); err != nil {
		t.Fatal(err)
	}
	entries[2].CAD.Refund = true
	if err := s.MarkRefund(ctx, 1<<40); err != store.ErrNotFound {
		t.Fatalf("MarkRefund(missing) = %v, want ErrNotFound", err)
	}
	got, err := s.ListLedger(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(entries, got); d != "" {
		t.Fatalf("ledger round trip (-want +got):\n%s", d)
	}
	page, err := s.ListLedger(ctx, entries[0].ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 || page[0].ID != entries[1].ID {
		t.Fatalf("ListLedger(after first, 1) = %+v", page)
	}
}

func testFreeTierSequence(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	lim := store.FreeLimits{PerDay: 3, MinInterval: 5 * time.Second}
	t0 := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	steps := []struct {
		at        time.Duration
		key       string
		want      store.FreeOutcome
		used      int
		retryWant time.Duration
	}{
		{0, "a", store.FreeAllowed, 1, 0},
		{1 * time.Second, "a", store.FreeTooSoon, 1, 4 * time.Second},
		{4999 * time.Millisecond, "a", store.FreeTooSoon, 1, time.Millisecond},
		{1 * time.Second, "b", store.FreeAllowed, 1, 0}, // keys are independent
		{5 * time.Second, "a", store.FreeAllowed, 2, 0}, // exactly the interval is allowed
		{10 * time.Second, "a", store.FreeAllowed, 3, 0},
		{15 * time.Second, "a", store.FreeExhausted, 3, 0},
		{16 * time.Second, "a", store.FreeExhausted, 3, 0}, // exhaustion wins over too soon
		{60 * time.Second, "a", store.FreeAllowed, 1, 0},   // next UTC day resets the count
		{61 * time.Second, "a", store.FreeTooSoon, 1, 4 * time.Second},
	}
	for i, st := range steps {
		d, err := s.TakeFree(ctx, st.key, t0.Add(st.at), lim)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if d.Outcome != st.want || d.Used != st.used || d.RetryAfter != st.retryWant {
			t.Fatalf("step %d: got %+v, want outcome %d used %d retry %v", i, d, st.want, st.used, st.retryWant)
		}
	}
	tw, err := s.Tripwires(ctx, t0.Add(2*time.Minute), 30*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if tw.FreeCalls != 5 {
		t.Fatalf("free calls counted = %d, want 5 (refused calls consume nothing)", tw.FreeCalls)
	}
	// An uncounted allowance (a criteria served beside the primary one) is enforced the same way
	// but stays out of the free-use tripwire.
	un := lim
	un.Uncounted = true
	if d, err := s.TakeFree(ctx, "c", t0.Add(62*time.Second), un); err != nil || d.Outcome != store.FreeAllowed {
		t.Fatalf("uncounted call: %+v %v", d, err)
	}
	if d, _ := s.TakeFree(ctx, "c", t0.Add(63*time.Second), un); d.Outcome != store.FreeTooSoon {
		t.Fatalf("uncounted allowance not enforced: %+v", d)
	}
	if tw, err := s.Tripwires(ctx, t0.Add(2*time.Minute), 30*24*time.Hour); err != nil || tw.FreeCalls != 5 {
		t.Fatalf("an uncounted call was counted: %d (%v)", tw.FreeCalls, err)
	}
}

// concurrent fires n TakeFree calls at once through two handles (two replicas).
func concurrent(t *testing.T, open Opener, n int, lim store.FreeLimits, at func(i int) time.Time) map[store.FreeOutcome]int {
	a, b := open(t), open(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[store.FreeOutcome]int{}
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			<-start
			d, err := s.TakeFree(context.Background(), "same-caller", at(i), lim)
			if err != nil {
				t.Errorf("TakeFree: %v", err)
				return
			}
			mu.Lock()
			counts[d.Outcome]++
			mu.Unlock()
		}(i)
	}
	close(start)
	wg.Wait()
	return counts
}

func testFreeTierConcurrentInterval(t *testing.T, open Opener) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	got := concurrent(t, open, 24, store.FreeLimits{PerDay: 100, MinInterval: 5 * time.Second},
		func(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) })
	if got[store.FreeAllowed] != 1 || got[store.FreeTooSoon] != 23 {
		t.Fatalf("concurrent calls within the interval: %v, want exactly one allowed", got)
	}
}

func testFreeTierConcurrentDaily(t *testing.T, open Opener) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	got := concurrent(t, open, 30, store.FreeLimits{PerDay: 7, MinInterval: 0},
		func(i int) time.Time { return t0 })
	if got[store.FreeAllowed] != 7 || got[store.FreeExhausted] != 23 {
		t.Fatalf("concurrent calls against the daily allowance: %v, want exactly 7 allowed", got)
	}
}

func testTripwires(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	add := func(age time.Duration, house, refund bool) {
		id, err := s.AppendLedger(ctx, store.LedgerEntry{Timestamp: now.Add(-age), CriteriaVersion: "1.0.0",
			VerdictLine: "v", Op: store.OpAudit, House: house, PriceUSDCUnits: 50000, CAD: store.CADBlock{Pending: true}})
		if err != nil {
			t.Fatal(err)
		}
		if refund {
			if err := s.MarkRefund(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(time.Hour, false, false)
	add(2*time.Hour, false, true)
	add(3*time.Hour, true, false)
	add(29*24*time.Hour, false, false)
	add(31*24*time.Hour, false, true) // outside the window
	for i := 0; i < 4; i++ {
		if _, err := s.TakeFree(ctx, "k", now.Add(time.Duration(i-4)*time.Minute), store.FreeLimits{PerDay: 100}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Tripwires(ctx, now, 30*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Tripwires{PaidCalls: 3, Refunds: 1, HouseCalls: 1, FreeCalls: 4}
	if got != want {
		t.Fatalf("Tripwires = %+v, want %+v", got, want)
	}
}

func testMigrationsIdempotent(t *testing.T, open Opener) {
	a := open(t)
	b := open(t) // migrates again: nothing to apply
	ta, err := a.Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ta, tb); d != "" {
		t.Fatal(d)
	}
	for _, want := range []string{"free_calls_daily", "free_tier", "ledger", "schema_migrations"} {
		found := false
		for _, n := range ta {
			found = found || n == want
		}
		if !found {
			t.Errorf("table %s missing from %v", want, ta)
		}
	}
}

// testLedgerOneRowPerPayment: appending the same payment twice (a resume after a crash between
// the ledger write and the settlement update) returns the first row and writes no second one;
// house rows, which carry no payment, are never merged.
func testLedgerOneRowPerPayment(t *testing.T, open Opener) {
	s := open(t)
	ctx := context.Background()
	ts := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	paid := store.LedgerEntry{PayerWallet: "w", Timestamp: ts, Day: "2026-11-30", PriceUSDCUnits: 50000,
		PaymentTx: "tx-1", SolanaFeeLamports: int64p(5000), CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit}
	first, err := s.AppendLedger(ctx, paid)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.AppendLedger(ctx, paid)
	if err != nil || again != first {
		t.Fatalf("second append of the same payment = %d, %v; want %d", again, err, first)
	}
	house := store.LedgerEntry{Timestamp: ts, Day: "2026-11-30", CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit, House: true}
	h1, err1 := s.AppendLedger(ctx, house)
	h2, err2 := s.AppendLedger(ctx, house)
	if err1 != nil || err2 != nil || h1 == h2 {
		t.Fatalf("house rows: %d %v, %d %v; want two distinct rows", h1, err1, h2, err2)
	}
	rows, err := s.ListLedger(ctx, 0, 100)
	if err != nil || len(rows) != 3 {
		t.Fatalf("ledger has %d rows (%v), want 3", len(rows), err)
	}
}

// testSweepKeepsLedger: the sweep deletes finished settlement rows past their retention, counts
// them, and leaves the closed ledger and a settled-but-undelivered payment alone, however old.
func testSweepKeepsLedger(t *testing.T, open Opener) {
	ctx := context.Background()
	st := open(t)
	sw, ok := st.(store.Sweeper)
	so, ok2 := st.(interface{ Settlements() settlement.Store })
	if !ok || !ok2 {
		t.Fatal("backend has no sweeper or no settlement table")
	}
	now := time.UnixMilli(1_800_000_000_000).UTC()
	old := now.Add(-30 * 24 * time.Hour)
	fee := int64(10001)
	if _, err := st.AppendLedger(ctx, store.LedgerEntry{PayerWallet: "w", Timestamp: old, Day: store.Day(old), PriceUSDCUnits: 50000,
		CAD: store.CADBlock{Pending: true}, PaymentTx: "delivered", SolanaFeeLamports: &fee, CriteriaVersion: "1.0.1", Op: store.OpAudit}); err != nil {
		t.Fatal(err)
	}
	for i, status := range []settlement.Status{settlement.StatusDelivered, settlement.StatusSettled} {
		r := &settlement.Settlement{TxSig: string(status), Challenge: "c" + string(status), ChallengeExpiry: old, Payer: "p" + string(rune('0'+i)),
			Network: "solana:test", Blockhash: "bh", Status: status, FeeLamports: &fee, CreatedAt: old, UpdatedAt: old, SettledAt: &old}
		if _, err := so.Settlements().Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	r, err := sw.Sweep(ctx, now, 5*time.Second, 500)
	if err != nil || r.Settlements != 1 || r.More(500) {
		t.Fatalf("sweep %+v %v, want one settlement row", r, err)
	}
	if _, err := so.Settlements().Get(ctx, string(settlement.StatusSettled)); err != nil {
		t.Fatalf("the undelivered payment was swept: %v", err)
	}
	if rows, err := st.ListLedger(ctx, 0, 10); err != nil || len(rows) != 1 {
		t.Fatalf("ledger after the sweep: %d rows %v, want 1", len(rows), err)
	}
}
