// Package x402test holds the conformance suite every x402.SettlementStore must pass (the
// in-memory store and both SQL backends run it).
package x402test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// suiteNow is the suite's clock.
var suiteNow = time.UnixMilli(1_800_000_000_000).UTC()

func row(sig, challenge string, now time.Time) *x402.Settlement {
	return &x402.Settlement{TxSig: sig, Challenge: challenge, ChallengeExpiry: now.Add(time.Minute), Payer: "payer-" + sig,
		Network: "solana:test", Blockhash: "bh", Status: x402.StatusReserved, CreatedAt: now, UpdatedAt: now}
}

// opener returns a fresh, empty store.
type opener = func(t *testing.T) x402.SettlementStore

// RunStoreSuite checks reservation uniqueness, compare-and-set updates, claims, listing and the
// sweep, one sub-suite each. open returns a fresh, empty store.
func RunStoreSuite(t *testing.T, open func(t *testing.T) x402.SettlementStore) {
	t.Run("reservations", func(t *testing.T) { reservationSuite(t, open) })
	t.Run("updates", func(t *testing.T) { updateSuite(t, open) })
	t.Run("queries", func(t *testing.T) { querySuite(t, open) })
	t.Run("retention", func(t *testing.T) { retentionSuite(t, open) })
}

// reservationSuite checks that a transaction and a challenge are reserved once, by one winner,
// and that a payer has one payment in flight.
func reservationSuite(t *testing.T, open opener) {
	t.Run("reserve_unique", func(t *testing.T) { reserveUnique(t, open(t)) })
	t.Run("one_in_flight_per_payer", func(t *testing.T) { oneInFlightPerPayer(t, open(t)) })
	t.Run("concurrent_reserve_one_winner", func(t *testing.T) { concurrentReserveOneWinner(t, open(t)) })
	t.Run("released_frees_challenge", func(t *testing.T) { releasedFreesChallenge(t, open(t)) })
}

// updateSuite checks that compare-and-set updates and claims change a row only from the state
// they name, and keep what they do not change.
func updateSuite(t *testing.T, open opener) {
	t.Run("compare_and_set_round_trip", func(t *testing.T) { compareAndSetRoundTrip(t, open(t)) })
	t.Run("amount_units", func(t *testing.T) { amountUnits(t, open(t)) })
	t.Run("claim_rule", func(t *testing.T) { claimRule(t, open(t)) })
}

// querySuite checks the listings that resume and the fee budgets read.
func querySuite(t *testing.T, open opener) {
	t.Run("list_by_status", func(t *testing.T) { listByStatus(t, open(t)) })
	t.Run("failed_fees", func(t *testing.T) { failedFees(t, open(t)) })
}

// retentionSuite checks the sweep of finished rows.
func retentionSuite(t *testing.T, open opener) {
	t.Run("sweep_retention", func(t *testing.T) { sweepRetention(t, open(t)) })
}

// reserveUnique: a second reservation of a transaction returns its row; a second transaction
// with the same challenge is refused.
func reserveUnique(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	if ex, err := st.Reserve(ctx, row("s1", "c1", now)); err != nil || ex != nil {
		t.Fatalf("first reserve: %v %v", ex, err)
	}
	ex, err := st.Reserve(ctx, row("s1", "c1", now))
	if err != nil || ex == nil || ex.Status != x402.StatusReserved {
		t.Fatalf("second reserve must return the existing row: %+v %v", ex, err)
	}
	if _, err := st.Reserve(ctx, row("s2", "c1", now)); !errors.Is(err, x402.ErrChallengeUsed) {
		t.Fatalf("same challenge, other tx: %v", err)
	}
}

// oneInFlightPerPayer: one unsettled payment per payer: a second reservation by the same payer, while the first is
// reserved or submitted, is ErrPayerBusy (on every replica: the store enforces it); once the
// first settles or is released the payer may pay again.
func oneInFlightPerPayer(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	a := row("s1", "c1", now)
	a.Payer = "wallet"
	if _, err := st.Reserve(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := row("s2", "c2", now)
	b.Payer = "wallet"
	if _, err := st.Reserve(ctx, b); !errors.Is(err, x402.ErrPayerBusy) {
		t.Fatalf("second in-flight payment of one payer: %v, want ErrPayerBusy", err)
	}
	a.Status = x402.StatusSubmitted
	if ok, err := st.Update(ctx, a, x402.StatusReserved); !ok || err != nil {
		t.Fatalf("submit: %v %v", ok, err)
	}
	if _, err := st.Reserve(ctx, b); !errors.Is(err, x402.ErrPayerBusy) {
		t.Fatalf("while submitted: %v, want ErrPayerBusy", err)
	}
	settled := now
	a.Status, a.SettledAt = x402.StatusSettled, &settled
	if ok, err := st.Update(ctx, a, x402.StatusSubmitted); !ok || err != nil {
		t.Fatalf("settle: %v %v", ok, err)
	}
	if ex, err := st.Reserve(ctx, b); err != nil || ex != nil {
		t.Fatalf("after the first settled: %+v %v", ex, err)
	}
}

// concurrentReserveOneWinner: of concurrent reservations of one transaction, exactly one wins.
func concurrentReserveOneWinner(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ex, err := st.Reserve(ctx, row("s1", "c1", now))
			if err != nil {
				t.Error(err)
				return
			}
			if ex == nil {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d reservations won, want 1", won)
	}
}

// releasedFreesChallenge: a released row's challenge may be reserved again, and the released
// row may not take it back.
func releasedFreesChallenge(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	r := row("s1", "c1", now)
	st.Reserve(ctx, r)
	r.Status = x402.StatusReleased
	if ok, err := st.Update(ctx, r, x402.StatusReserved); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ex, err := st.Reserve(ctx, row("s2", "c1", now)); err != nil || ex != nil {
		t.Fatalf("challenge of a released row: %v %v", ex, err)
	}
	r.Status = x402.StatusReserved
	if _, err := st.Update(ctx, r, x402.StatusReleased); !errors.Is(err, x402.ErrChallengeUsed) {
		t.Fatalf("re-reserving a released row whose challenge is live elsewhere: %v", err)
	}
}

// compareAndSetRoundTrip: an update from the stored status applies and every field reads back;
// one from a stale status does not apply.
func compareAndSetRoundTrip(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	r := row("s1", "c1", now)
	if _, err := st.Reserve(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status, r.ExpiryHeight = x402.StatusSubmitted, 250
	if ok, err := st.Update(ctx, r, x402.StatusReserved); !ok || err != nil {
		t.Fatalf("cas reserved→submitted: %v %v", ok, err)
	}
	if ok, _ := st.Update(ctx, r, x402.StatusReserved); ok {
		t.Fatal("cas from a stale status succeeded")
	}
	fee, lid := int64(10001), int64(7)
	settled := now.Add(time.Second)
	r.Status, r.FeeLamports, r.Slot, r.SettledAt, r.LedgerID = x402.StatusSettled, &fee, 99, &settled, &lid
	if ok, err := st.Update(ctx, r, x402.StatusSubmitted); !ok || err != nil {
		t.Fatalf("cas submitted→settled: %v %v", ok, err)
	}
	got, err := st.Get(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != x402.StatusSettled || got.FeeLamports == nil || *got.FeeLamports != 10001 || got.Slot != 99 ||
		got.ExpiryHeight != 250 || got.SettledAt == nil || !got.SettledAt.Equal(settled) || *got.LedgerID != 7 ||
		!got.ChallengeExpiry.Equal(r.ChallengeExpiry) || got.Payer != "payer-s1" {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := st.Get(ctx, "nope"); !errors.Is(err, x402.ErrSettlementNotFound) {
		t.Fatalf("missing row: %v", err)
	}
}

// amountUnits: the amount a payment was made at is kept through reserve and update (a refund books it).
func amountUnits(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	r := row("amt", "c-amt", now)
	r.AmountUnits = 70000
	if _, err := st.Reserve(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status = x402.StatusSubmitted
	if ok, err := st.Update(ctx, r, x402.StatusReserved); err != nil || !ok {
		t.Fatalf("update: %v %v", ok, err)
	}
	got, err := st.Get(ctx, "amt")
	if err != nil || got.AmountUnits != 70000 || got.Status != x402.StatusSubmitted {
		t.Fatalf("row %+v %v, want amount 70000 kept", got, err)
	}
}

// claimRule: a settled row is claimed once per lease, at most MaxClaims times, and only inside
// the window.
func claimRule(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	r := row("s1", "c1", now)
	st.Reserve(ctx, r)
	settled := now
	r.Status, r.SettledAt = x402.StatusSettled, &settled
	st.Update(ctx, r, x402.StatusReserved)
	rule := x402.ClaimRule{MaxClaims: 2, SettledAfter: now.Add(-time.Minute), IdleBefore: now.Add(-20 * time.Second), Now: now}
	if ok, err := st.Claim(ctx, "s1", rule); !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if ok, _ := st.Claim(ctx, "s1", rule); ok {
		t.Fatal("second claim inside the lease succeeded")
	}
	later := now.Add(30 * time.Second)
	rule2 := x402.ClaimRule{MaxClaims: 2, SettledAfter: later.Add(-time.Minute), IdleBefore: later.Add(-20 * time.Second), Now: later}
	if ok, _ := st.Claim(ctx, "s1", rule2); !ok {
		t.Fatal("claim after the lease refused")
	}
	if ok, _ := st.Claim(ctx, "s1", x402.ClaimRule{MaxClaims: 2, SettledAfter: now.Add(-time.Hour), IdleBefore: later.Add(time.Hour), Now: later}); ok {
		t.Fatal("claim beyond MaxClaims succeeded")
	}
	got, _ := st.Get(ctx, "s1")
	if got.Claims != 2 || !got.UpdatedAt.Equal(later) {
		t.Fatalf("claims %d updated %v", got.Claims, got.UpdatedAt)
	}
	if ok, _ := st.Claim(ctx, "s1", x402.ClaimRule{MaxClaims: 9, SettledAfter: now.Add(time.Second), IdleBefore: later.Add(time.Hour), Now: later}); ok {
		t.Fatal("claim outside the window succeeded")
	}
}

// listByStatus: rows of a status are listed oldest first, at most the limit.
func listByStatus(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	for i, s := range []string{"a", "b", "c"} {
		r := row(s, "c"+s, now.Add(time.Duration(3-i)*time.Second))
		st.Reserve(ctx, r)
	}
	l, err := st.List(ctx, x402.StatusReserved, 2)
	if err != nil || len(l) != 2 || l[0].TxSig != "c" || l[1].TxSig != "b" {
		t.Fatalf("list: %v %v", l, err)
	}
}

// failedFees: the fee budget reads a payer's failed rows of the window, oldest first, refunds excluded.
func failedFees(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	put := func(sig, payer string, status x402.Status, reason string, age time.Duration, fee *int64) {
		r := row(sig, "c-"+sig, now.Add(-age))
		r.Payer, r.Status, r.Reason, r.FeeLamports = payer, status, reason, fee
		if _, err := st.Reserve(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	a, b := int64(10001), int64(15000)
	put("f1", "w", x402.StatusFailed, x402.ReasonTransactionFailed, 10*time.Minute, &a)
	put("f2", "w", x402.StatusFailed, x402.ReasonTransactionFailed, 50*time.Minute, &b)
	put("f3", "w", x402.StatusFailed, x402.ReasonTransactionFailed, 5*time.Minute, nil)
	put("old", "w", x402.StatusFailed, x402.ReasonTransactionFailed, 2*time.Hour, &a)
	put("refund", "w", x402.StatusFailed, x402.ReasonRefunded, time.Minute, &a)
	put("ok", "w", x402.StatusDelivered, "", time.Minute, &a)
	put("other", "v", x402.StatusFailed, x402.ReasonTransactionFailed, time.Minute, &a)
	got, err := st.FailedFees(ctx, "w", now.Add(-time.Hour), 100)
	if err != nil || len(got) != 3 {
		t.Fatalf("failed fees %+v %v, want f2, f1, f3", got, err)
	}
	if got[0].Lamports == nil || *got[0].Lamports != b || !got[0].At.Equal(now.Add(-50*time.Minute)) ||
		got[1].Lamports == nil || *got[1].Lamports != a || got[2].Lamports != nil {
		t.Fatalf("failed fees %+v, want oldest first with the unknown fee as nil", got)
	}
	// Every payer's together (the fee payer's global budget): the other payer's row too.
	all, err := st.FailedFees(ctx, "", now.Add(-time.Hour), 100)
	if err != nil || len(all) != 4 || all[3].Lamports == nil || *all[3].Lamports != a || !all[3].At.Equal(now.Add(-time.Minute)) {
		t.Fatalf("failed fees of every payer %+v %v, want f2, f1, f3, other", all, err)
	}
}

// sweepRetention: finished rows are swept after their retention, in bounded batches; a row still owed an
// answer (reserved, submitted, settled and undelivered, however old) never is.
func sweepRetention(t *testing.T, st x402.SettlementStore) {
	ctx, now := context.Background(), suiteNow
	rt := x402.Retention{Done: 10 * time.Minute, Failed: 24 * time.Hour}
	fee := int64(10001)
	add := func(sig string, status x402.Status, reason string, age time.Duration) {
		r := row(sig, "c-"+sig, now.Add(-age))
		r.Payer, r.Status, r.Reason, r.ChallengeExpiry = "p-"+sig, status, reason, now.Add(-age+2*time.Minute)
		if status == x402.StatusFailed || status == x402.StatusSettled || status == x402.StatusDelivered {
			r.FeeLamports = &fee
			at := now.Add(-age)
			r.SettledAt = &at
		}
		if _, err := st.Reserve(ctx, r); err != nil {
			t.Fatalf("reserve %s: %v", sig, err)
		}
	}
	gone := []string{"delivered-old", "released-old", "refunded-old", "failed-day-old", "delivered-old-2"}
	kept := []string{"delivered-recent", "challenge-live", "failed-hour-old", "settled-two-days", "submitted-old", "reserved-old"}
	add("delivered-old", x402.StatusDelivered, "", time.Hour)
	add("delivered-old-2", x402.StatusDelivered, "", 2*time.Hour)
	add("released-old", x402.StatusReleased, x402.ReasonBlockhashExpired, time.Hour)
	add("refunded-old", x402.StatusFailed, x402.ReasonRefunded, time.Hour)
	add("failed-day-old", x402.StatusFailed, x402.ReasonTransactionFailed, 25*time.Hour)
	add("delivered-recent", x402.StatusDelivered, "", 5*time.Minute)
	add("challenge-live", x402.StatusReleased, x402.ReasonBlockhashExpired, 11*time.Minute) // challenge expired 9 min ago
	add("failed-hour-old", x402.StatusFailed, x402.ReasonTransactionFailed, time.Hour)
	add("settled-two-days", x402.StatusSettled, "", 48*time.Hour)
	add("submitted-old", x402.StatusSubmitted, "", 48*time.Hour)
	add("reserved-old", x402.StatusReserved, "", 48*time.Hour)
	n, err := st.Sweep(ctx, now, rt, 2)
	if err != nil || n != 2 {
		t.Fatalf("first batch: %d %v, want 2 (bounded)", n, err)
	}
	total := n
	for n == 2 {
		if n, err = st.Sweep(ctx, now, rt, 2); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != int64(len(gone)) {
		t.Fatalf("swept %d rows, want %d", total, len(gone))
	}
	for _, sig := range gone {
		if _, err := st.Get(ctx, sig); !errors.Is(err, x402.ErrSettlementNotFound) {
			t.Errorf("%s survived the sweep: %v", sig, err)
		}
	}
	for _, sig := range kept {
		if _, err := st.Get(ctx, sig); err != nil {
			t.Errorf("%s was swept: %v", sig, err)
		}
	}
}
