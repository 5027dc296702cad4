package x402

import (
	"context"
	"time"
)

// Fee budget defaults (published in docs/x402.md).
const (
	// DefaultFeeBudgetLamports is how many lamports our fee payer may spend on one payer's
	// failed transactions in a rolling FeeBudgetWindow. A payment is admitted while the payer's
	// failures plus its own worst-case fee stay within it (a payer with no failure is always
	// admitted): four failed payments at the x402 client's default compute budget (10 001
	// lamports each, the fifth would reach 50 005), three at our cap (15 000).
	DefaultFeeBudgetLamports = 50_000
	// DefaultGlobalFeeBudgetLamports is how many lamports our fee payer may lose on failed
	// transactions of all payers together in a rolling FeeBudgetWindow, shared by every replica
	// through the settlement rows: nine failed payments at 10 001 lamports, six at our cap.
	DefaultGlobalFeeBudgetLamports = 100_000
	// DefaultFeeBudgetWindow is the fee budget's rolling window.
	DefaultFeeBudgetWindow = time.Hour
)

// worstFee is the most a payment we accept can cost the fee payer: the fee counted for a failure
// whose fee the chain did not report, and for a payment in flight.
const worstFee = int64(5000*RequiredSignatures + MaxPriorityFeeLamports)

// failedLamports is what one failed transaction counts for in a budget: its fee, or worstFee when
// the chain did not report it.
func failedLamports(f FailedFee) int64 {
	if f.Lamports != nil {
		return *f.Lamports
	}
	return worstFee
}

// failedTotal is what the failed transactions fees count for together.
func failedTotal(fees []FailedFee) int64 {
	var spent int64
	for _, f := range fees {
		spent += failedLamports(f)
	}
	return spent
}

// budgetRetry is how long until enough of the oldest failures (fees, oldest first, adding up to
// spent) have left the window for fits to hold: the whole window if none suffices.
func (s *Settler) budgetRetry(fees []FailedFee, spent int64, now time.Time, fits func(spent int64) bool) time.Duration {
	for _, f := range fees {
		spent -= failedLamports(f)
		if fits(spent) {
			return f.At.Add(s.FeeBudgetWindow).Sub(now)
		}
	}
	return s.FeeBudgetWindow
}

// feeBudget refuses a payment whose worst-case fee would take its payer's failed-transaction
// fees of the last FeeBudgetWindow past FeeBudget. A payer with no failure in the window is
// always admitted; a failure whose fee the chain did not report counts as the largest fee a
// payment we accept can cost.
func (s *Settler) feeBudget(ctx context.Context, ver *Verified) error {
	if s.FeeBudget <= 0 {
		return nil
	}
	now := s.now().UTC()
	fees, err := s.store.FailedFees(ctx, ver.Payer.String(), now.Add(-s.FeeBudgetWindow), 1000)
	if err != nil {
		return unavailable("S19", "settlement_store_unavailable")
	}
	need := int64(ver.MaxFeeLamports)
	fits := func(spent int64) bool { return spent == 0 || spent+need <= s.FeeBudget }
	spent := failedTotal(fees)
	if fits(spent) {
		return nil
	}
	// The payment fits once enough of the oldest failures have left the window.
	retry := s.budgetRetry(fees, spent, now, fits)
	return &Throttled{Item: "S19", Reason: ReasonPayerFeeBudget, RetryAfter: max(retry, time.Second)}
}

// globalBudget refuses a payment whose worst-case fee would take the fee payer's failed-transaction
// fees of all payers in the last FeeBudgetWindow past GlobalFeeBudget. self, when set, is this
// payment's own row, already marked submitted: every other payment in flight then counts at its
// worst case, so payments checked at the same moment on any replica cannot together exceed the
// budget (a check that sees the other's row refuses).
func (s *Settler) globalBudget(ctx context.Context, ver *Verified, self *Settlement) error {
	if s.GlobalFeeBudget <= 0 {
		return nil
	}
	now := s.now().UTC()
	fees, err := s.store.FailedFees(ctx, "", now.Add(-s.FeeBudgetWindow), 10000)
	if err != nil {
		return unavailable("S19", "settlement_store_unavailable")
	}
	inFlight, err := s.othersInFlight(ctx, self)
	if err != nil {
		return err
	}
	need := int64(ver.MaxFeeLamports)
	fits := func(spent int64) bool { return spent+need <= s.GlobalFeeBudget }
	spent := failedTotal(fees)
	if fits(spent + inFlight) {
		if s.OnPaused != nil {
			s.OnPaused(false)
		}
		return nil
	}
	if s.OnPaused != nil {
		s.OnPaused(true)
	}
	// Payments in flight settle within seconds; failures leave the window one by one.
	retry := 5 * time.Second
	if !fits(spent) {
		retry = s.budgetRetry(fees, spent, now, fits)
	}
	return &Paused{RetryAfter: max(retry, time.Second)}
}

// othersInFlight is the worst-case fee of every payment in flight but self (none when self is
// nil).
func (s *Settler) othersInFlight(ctx context.Context, self *Settlement) (int64, error) {
	if self == nil {
		return 0, nil
	}
	sub, err := s.store.List(ctx, StatusSubmitted, 10000)
	if err != nil {
		return 0, unavailable("S20", "settlement_store_unavailable")
	}
	var inFlight int64
	for _, r := range sub {
		if r.TxSig != self.TxSig {
			inFlight += worstFee
		}
	}
	return inFlight, nil
}
