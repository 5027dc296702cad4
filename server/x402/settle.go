package x402

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"
)

// Settlement policy defaults (published in docs/x402.md).
const (
	// DefaultPollInterval is the getSignatureStatuses polling period.
	DefaultPollInterval = 250 * time.Millisecond
	// DefaultConfirmTimeout bounds how long one request waits for confirmation.
	DefaultConfirmTimeout = 30 * time.Second
	// DefaultInFlightGrace is how long after its last update a reserved/submitted row is
	// considered owned by the request that wrote it.
	DefaultInFlightGrace = 45 * time.Second
	// DefaultResumeWindow is how long after settlement an undelivered report can be resumed.
	DefaultResumeWindow = 15 * time.Minute
	// DefaultClaimLease is how long a started audit run blocks a resume unless it is abandoned.
	DefaultClaimLease = 20 * time.Second
	// DefaultMaxClaims is the number of audit runs one payment can start (first run + resumes).
	DefaultMaxClaims = 3
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
	// MinBroadcastTime is the least time left before the settlement's deadline for a payment to
	// be broadcast; with less, it is released unsent (503 request_deadline, nothing charged).
	MinBroadcastTime = time.Second
	// ReasonDeadline is the 503 reason of a payment not broadcast because the request's
	// deadline was too close after the checks before it (a slow RPC).
	ReasonDeadline = "request_deadline"
	// ReasonPaymentsPaused is the 503 reason of a payment refused because the fee payer's
	// global failed-fee budget is spent (or would be by the payments now in flight).
	ReasonPaymentsPaused = "payments_paused"
	// DefaultFeeBudgetWindow is the fee budget's rolling window.
	DefaultFeeBudgetWindow = time.Hour
	// ReasonPayerFeeBudget is the 429 reason of a payer whose failed transactions used up the
	// fee budget.
	ReasonPayerFeeBudget = "payer_fee_budget"
)

// Settler runs the settlement state machine for verified payments.
type Settler struct {
	cfg      *Config
	rpc      RPC
	store    SettlementStore
	payToATA solana.PublicKey
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error

	PollInterval   time.Duration
	ConfirmTimeout time.Duration
	InFlightGrace  time.Duration
	ResumeWindow   time.Duration
	ClaimLease     time.Duration
	MaxClaims      int
	// FeeBudget is the lamports our fee payer may spend on one payer's failed transactions in
	// a rolling FeeBudgetWindow (0: no budget). It is read from the settlement rows, so every
	// replica sharing the store shares it.
	FeeBudget       int64
	FeeBudgetWindow time.Duration
	// OnFailedFee, when set, is told the fee our fee payer paid for a transaction that landed
	// with an error (the lamports-lost counter).
	OnFailedFee func(lamports int64)
	// GlobalFeeBudget is the lamports our fee payer may lose on failed transactions of all
	// payers in a rolling FeeBudgetWindow (0: no budget). It is read from the settlement rows
	// (failed ones, and the worst case of those in flight), so replicas share it.
	GlobalFeeBudget int64
	// OnPaused, when set, is told each payment refused because the global budget is spent
	// (paused) and each one admitted again (resumed): the tripwire and its metric.
	OnPaused func(paused bool)
}

// Paused is a payment refused before any broadcast because the fee payer's global failed-fee
// budget is spent: HTTP 503 payments_paused with Retry-After, nothing broadcast, nothing charged.
type Paused struct {
	// RetryAfter is when the budget may admit a payment again.
	RetryAfter time.Duration
}

// Error implements error with static text.
func (p *Paused) Error() string { return "x402: payments paused: " + ReasonPaymentsPaused }

// HTTPStatus is 503.
func (p *Paused) HTTPStatus() int { return http.StatusServiceUnavailable }

// worstFee is the most a payment we accept can cost the fee payer: the fee counted for a failure
// whose fee the chain did not report, and for a payment in flight.
const worstFee = int64(5000*RequiredSignatures + MaxPriorityFeeLamports)

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
	var spent int64
	for _, f := range fees {
		if f.Lamports != nil {
			spent += *f.Lamports
		} else {
			spent += worstFee
		}
	}
	var inFlight int64
	if self != nil {
		sub, err := s.store.List(ctx, StatusSubmitted, 10000)
		if err != nil {
			return unavailable("S20", "settlement_store_unavailable")
		}
		for _, r := range sub {
			if r.TxSig != self.TxSig {
				inFlight += worstFee
			}
		}
	}
	need := int64(ver.MaxFeeLamports)
	if spent+inFlight+need <= s.GlobalFeeBudget {
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
	if spent+need > s.GlobalFeeBudget {
		retry = s.FeeBudgetWindow
		for _, f := range fees {
			if f.Lamports != nil {
				spent -= *f.Lamports
			} else {
				spent -= worstFee
			}
			if spent+need <= s.GlobalFeeBudget {
				retry = f.At.Add(s.FeeBudgetWindow).Sub(now)
				break
			}
		}
	}
	return &Paused{RetryAfter: max(retry, time.Second)}
}

// NewSettler returns a Settler with the default policy.
func NewSettler(cfg *Config, r RPC, st SettlementStore, now func() time.Time) (*Settler, error) {
	if now == nil {
		now = time.Now
	}
	ata, err := cfg.PayToATA()
	if err != nil {
		return nil, err
	}
	return &Settler{cfg: cfg, rpc: r, store: st, payToATA: ata, now: now, sleep: sleepCtx,
		PollInterval: DefaultPollInterval, ConfirmTimeout: DefaultConfirmTimeout, InFlightGrace: DefaultInFlightGrace,
		ResumeWindow: DefaultResumeWindow, ClaimLease: DefaultClaimLease, MaxClaims: DefaultMaxClaims,
		FeeBudget: DefaultFeeBudgetLamports, FeeBudgetWindow: DefaultFeeBudgetWindow,
		GlobalFeeBudget: DefaultGlobalFeeBudgetLamports}, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Receipt is a settled payment that may run one audit.
type Receipt struct {
	TxSig       string
	Payer       string
	Network     string
	FeeLamports int64
	Slot        uint64
	// Resumed is true when this audit runs on an earlier settlement (no new charge).
	Resumed bool
	// LedgerID is the ledger row already written for this payment, if any.
	LedgerID *int64
	units    uint64
}

// Response is the PAYMENT-RESPONSE of a successful settlement.
func (r *Receipt) Response() SettlementResponse {
	return SettlementResponse{Success: true, Payer: r.Payer, Transaction: r.TxSig, Network: r.Network,
		Amount: fmt.Sprint(r.units)}
}

// Unavailable is a settlement that could not proceed for a reason on our side (RPC down,
// settlement pending, store failure): HTTP 503, no audit, and no charge unless TxSig is set
// and later reconciles.
type Unavailable struct {
	Item   string
	Reason string
	// TxSig is set when a broadcast may have happened (settlement_pending).
	TxSig string
}

// Error implements error with static text.
func (u *Unavailable) Error() string {
	return "x402: settlement unavailable at " + u.Item + ": " + u.Reason
}

// HTTPStatus is 503.
func (u *Unavailable) HTTPStatus() int { return http.StatusServiceUnavailable }

func unavailable(item, reason string) *Unavailable { return &Unavailable{Item: item, Reason: reason} }

// Throttled is a payment refused before any broadcast because its payer is over a budget:
// HTTP 429 with Retry-After, nothing broadcast, nothing charged.
type Throttled struct {
	Item   string
	Reason string
	// RetryAfter is when the budget admits this payment again.
	RetryAfter time.Duration
}

// Error implements error with static text.
func (t *Throttled) Error() string { return "x402: payment throttled at " + t.Item + ": " + t.Reason }

// HTTPStatus is 429.
func (t *Throttled) HTTPStatus() int { return http.StatusTooManyRequests }

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
	lamports := func(f FailedFee) int64 {
		if f.Lamports != nil {
			return *f.Lamports
		}
		return worstFee
	}
	var spent int64
	for _, f := range fees {
		spent += lamports(f)
	}
	need := int64(ver.MaxFeeLamports)
	if spent == 0 || spent+need <= s.FeeBudget {
		return nil
	}
	// The payment fits once enough of the oldest failures have left the window.
	retry := s.FeeBudgetWindow
	for _, f := range fees {
		spent -= lamports(f)
		if spent == 0 || spent+need <= s.FeeBudget {
			retry = f.At.Add(s.FeeBudgetWindow).Sub(now)
			break
		}
	}
	return &Throttled{Item: "S19", Reason: ReasonPayerFeeBudget, RetryAfter: max(retry, time.Second)}
}

// sourceCovers reads the payer's source token account right before broadcast and reports
// whether it still holds the price for the transfer's authority: an account emptied after
// simulation would make the transfer fail on-chain at our fee payer's expense.
func (s *Settler) sourceCovers(ctx context.Context, ver *Verified) (bool, error) {
	acc, err := s.rpc.Account(ctx, ver.Source)
	if err != nil {
		return false, err
	}
	if acc == nil || !acc.Owner.Equals(solana.TokenProgramID) {
		return false, nil
	}
	var ta token.Account
	if err := bin.NewBinDecoder(acc.Data).Decode(&ta); err != nil {
		return false, nil
	}
	price := s.cfg.Price.Units
	if !ta.Mint.Equals(s.cfg.Network.USDCMint) || ta.State != token.Initialized || ta.Amount < price {
		return false, nil
	}
	if ta.Owner.Equals(ver.Payer) {
		return true, nil
	}
	// A delegate may spend at most its delegated amount.
	return ta.Delegate != nil && ta.Delegate.Equals(ver.Payer) && ta.DelegatedAmount >= price, nil
}

// Settle reserves, co-signs, simulates, sends and confirms a verified payment, then reads the fee
// and the balance change. It returns a Receipt, a *Rejection (402), a *Throttled (429, the
// payer over its fee budget) or an *Unavailable (503).
func (s *Settler) Settle(ctx context.Context, ver *Verified) (*Receipt, error) {
	signed, sig, err := ver.CoSign(s.cfg.FeePayer)
	if err != nil {
		return nil, unavailable("S17", "cosign_failed")
	}
	now := s.now().UTC()
	row := &Settlement{
		TxSig: sig.String(), Challenge: ver.Challenge, ChallengeExpiry: ver.ChallengeExpiry.UTC(),
		Payer: ver.Payer.String(), Network: s.cfg.Network.CAIP2, Blockhash: ver.Blockhash.String(),
		Status: StatusReserved, CreatedAt: now, UpdatedAt: now, AmountUnits: s.cfg.Price.Units,
	}
	if ver.ChallengeExpired {
		// Only an existing settlement (a resume) may use an expired challenge; nothing new is
		// reserved or broadcast on it.
		ex, err := s.store.Get(ctx, row.TxSig)
		if errors.Is(err, ErrSettlementNotFound) {
			return nil, reject("C02", ReasonChallengeExpired)
		}
		if err != nil {
			return nil, unavailable("S18", "settlement_store_unavailable")
		}
		if ex.Status == StatusReleased || ex.Status == StatusReserved {
			// Never broadcast: sending it now would be a new payment on an expired challenge.
			return nil, reject("C02", ReasonChallengeExpired)
		}
		return s.onExisting(ctx, ver, signed, sig, ex)
	}
	// S18: reserve the transaction id before anything can be broadcast.
	existing, err := s.store.Reserve(ctx, row)
	if errors.Is(err, ErrPayerBusy) {
		return nil, reject("S18", ReasonPayerBusy)
	}
	if errors.Is(err, ErrChallengeUsed) {
		return nil, reject("S18", ReasonDuplicateSettlement)
	}
	if err != nil {
		return nil, unavailable("S18", "settlement_store_unavailable")
	}
	if existing != nil {
		return s.onExisting(ctx, ver, signed, sig, existing)
	}
	return s.broadcast(ctx, ver, signed, sig, row)
}

// Lookup returns the settlement row of the payment ver, or ErrSettlementNotFound: the API
// asks it before settling, to tell a resume (which needs the payer's proof) from a first payment.
func (s *Settler) Lookup(ctx context.Context, ver *Verified) (*Settlement, error) {
	_, sig, err := ver.CoSign(s.cfg.FeePayer)
	if err != nil {
		return nil, fmt.Errorf("x402: lookup: cosign: %w", err)
	}
	return s.store.Get(ctx, sig.String())
}

// release marks a never-broadcast or provably dead row released with a reason.
func (s *Settler) release(ctx context.Context, row *Settlement, from Status, reason string) {
	row.Status, row.Reason, row.UpdatedAt = StatusReleased, reason, s.now().UTC()
	_, _ = s.store.Update(context.WithoutCancel(ctx), row, from)
}

// classify maps a simulation error to a reason.
func classify(e TxError) (reason string, ours bool) {
	j := errJSON(e)
	switch {
	case strings.Contains(j, "BlockhashNotFound"):
		return ReasonBlockhashExpired, false
	case strings.Contains(j, "AlreadyProcessed"):
		return ReasonDuplicateSettlement, false
	case strings.Contains(j, "InsufficientFundsForFee"), strings.Contains(j, "InsufficientFundsForRent"):
		return "fee_payer_unfunded", true
	case strings.Contains(j, `"InstructionError":[2,{"Custom":1}]`):
		return ReasonInsufficientFunds, false
	}
	return ReasonSimulationFailed, false
}

// broadcast runs S19..S22 on a row this request reserved (status reserved).
func (s *Settler) broadcast(ctx context.Context, ver *Verified, signed []byte, sig solana.Signature, row *Settlement) (*Receipt, error) {
	bh, err := solana.HashFromBase58(row.Blockhash)
	if err != nil {
		s.release(ctx, row, StatusReserved, ReasonUndecodable)
		return nil, reject("S19", ReasonUndecodable)
	}
	if err := s.feeBudget(ctx, ver); err != nil {
		s.release(ctx, row, StatusReserved, ReasonPayerFeeBudget)
		return nil, err
	}
	if err := s.globalBudget(ctx, ver, nil); err != nil {
		s.release(ctx, row, StatusReserved, ReasonPaymentsPaused)
		return nil, err
	}
	valid, err := s.rpc.IsBlockhashValid(ctx, bh)
	if err != nil {
		s.release(ctx, row, StatusReserved, ReasonRPCUnavailable)
		return nil, unavailable("S19", ReasonRPCUnavailable)
	}
	if !valid {
		s.release(ctx, row, StatusReserved, ReasonBlockhashExpired)
		return nil, reject("S19", ReasonBlockhashExpired)
	}
	// Upper bound of the last height this transaction can land at: its blockhash is not newer
	// than the latest one.
	_, lastValid, err := s.rpc.LatestBlockhash(ctx)
	if err != nil {
		s.release(ctx, row, StatusReserved, ReasonRPCUnavailable)
		return nil, unavailable("S19", ReasonRPCUnavailable)
	}
	simErr, err := s.rpc.Simulate(ctx, signed)
	if err != nil {
		s.release(ctx, row, StatusReserved, ReasonRPCUnavailable)
		return nil, unavailable("S19", ReasonRPCUnavailable)
	}
	if simErr != nil {
		reason, ours := classify(simErr)
		s.release(ctx, row, StatusReserved, reason)
		if ours {
			return nil, unavailable("S19", reason)
		}
		return nil, reject("S19", reason)
	}
	// The last read before the broadcast: the source account still covers the price.
	covers, err := s.sourceCovers(ctx, ver)
	if err != nil {
		s.release(ctx, row, StatusReserved, ReasonRPCUnavailable)
		return nil, unavailable("S19", ReasonRPCUnavailable)
	}
	if !covers {
		s.release(ctx, row, StatusReserved, ReasonInsufficientFunds)
		return nil, reject("S19", ReasonInsufficientFunds)
	}
	// Nothing is sent that could not be answered in time: past this point the answer names the
	// transaction, and the confirmation needs at least a poll or two.
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < MinBroadcastTime {
		s.release(ctx, row, StatusReserved, ReasonDeadline)
		return nil, unavailable("S20", ReasonDeadline)
	}
	// S20: mark submitted before sending: from here on the row is never released unless the
	// signature is provably absent and the blockhash provably dead.
	row.Status, row.ExpiryHeight, row.UpdatedAt = StatusSubmitted, lastValid, s.now().UTC()
	ok, err := s.store.Update(ctx, row, StatusReserved)
	if err != nil || !ok {
		s.release(ctx, row, StatusReserved, "settlement_store_unavailable")
		return nil, unavailable("S20", "settlement_store_unavailable")
	}
	// The global budget again, now that this payment counts as in flight for every other check:
	// nothing was sent yet, so a refusal releases the row.
	if err := s.globalBudget(ctx, ver, row); err != nil {
		s.release(ctx, row, StatusSubmitted, ReasonPaymentsPaused)
		return nil, err
	}
	if _, err := s.rpc.Send(ctx, signed); err != nil && !isRPCReply(err) {
		// Transport failure: the node may or may not have it. Fall through to confirmation;
		// the row stays submitted and is reconciled, never re-sent blindly.
		_ = err
	}
	st, err := s.waitConfirmed(ctx, sig)
	if err != nil || st == nil {
		return nil, &Unavailable{Item: "S20", Reason: ReasonSettlementPending, TxSig: row.TxSig}
	}
	if st.Err != nil {
		// Landed with an error: finish reads the fee our fee payer lost and records the row failed.
		err := s.finish(ctx, row, sig)
		var rj *Rejection
		switch {
		case err == nil: // getTransaction, which settlement trusts, says it settled
			return s.claimBroadcast(ctx, row.TxSig)
		case errors.As(err, &rj):
			return nil, err
		}
		row.Status, row.Reason, row.Slot, row.UpdatedAt = StatusFailed, ReasonTransactionFailed, st.Slot, s.now().UTC()
		_, _ = s.store.Update(context.WithoutCancel(ctx), row, StatusSubmitted)
		return nil, reject("S20", ReasonTransactionFailed)
	}
	if err := s.finish(ctx, row, sig); err != nil {
		return nil, err
	}
	return s.claimBroadcast(ctx, row.TxSig)
}

// claimBroadcast claims the first run of a payment this request broadcast. The store writes do
// not share the settlement's deadline (the payment moved; its run must be recorded), and a
// failure names the transaction so the answer is a 202, never a bare 503.
func (s *Settler) claimBroadcast(ctx context.Context, txSig string) (*Receipt, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	rc, err := s.claim(ctx, txSig, false)
	var un *Unavailable
	if errors.As(err, &un) && un.TxSig == "" {
		return nil, &Unavailable{Item: un.Item, Reason: ReasonSettlementPending, TxSig: txSig}
	}
	return rc, err
}

// waitConfirmed polls getSignatureStatuses until confirmed, failed, or ConfirmTimeout.
func (s *Settler) waitConfirmed(ctx context.Context, sig solana.Signature) (*SigStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, s.ConfirmTimeout)
	defer cancel()
	for {
		st, err := s.rpc.Status(ctx, sig)
		if err == nil && st != nil && (st.Err != nil || st.Confirmed()) {
			return st, nil
		}
		if err := s.sleep(ctx, s.PollInterval); err != nil {
			return nil, fmt.Errorf("x402: confirmation: %w", err)
		}
	}
}

// finish runs S22 on a confirmed signature: getTransaction, fee, balance change, then marks
// the row settled (compare-and-set from submitted; losing the race to a reconciler is fine).
func (s *Settler) finish(ctx context.Context, row *Settlement, sig solana.Signature) error {
	var out *Outcome
	var err error
	for i := 0; i < 20; i++ {
		out, err = s.rpc.Transaction(ctx, sig)
		if !errors.Is(err, ErrTxNotFound) {
			break
		}
		if s.sleep(ctx, s.PollInterval) != nil {
			break
		}
	}
	if err != nil || out == nil {
		return &Unavailable{Item: "S22", Reason: ReasonSettlementPending, TxSig: row.TxSig}
	}
	if out.Err != nil {
		row.Status, row.Reason, row.Slot, row.UpdatedAt = StatusFailed, ReasonTransactionFailed, out.Slot, s.now().UTC()
		fee := int64(out.Fee)
		row.FeeLamports = &fee
		if ok, _ := s.store.Update(context.WithoutCancel(ctx), row, StatusSubmitted); ok && s.OnFailedFee != nil {
			s.OnFailedFee(fee)
		}
		return reject("S22", ReasonTransactionFailed)
	}
	fee := int64(out.Fee)
	row.FeeLamports, row.Slot = &fee, out.Slot
	if out.TokenDelta(s.cfg.PayTo, s.cfg.Network.USDCMint).Cmp(new(big.Int).SetUint64(s.cfg.Price.Units)) != 0 {
		row.Status, row.Reason, row.UpdatedAt = StatusFailed, ReasonTransferNotObservedOnce, s.now().UTC()
		_, _ = s.store.Update(context.WithoutCancel(ctx), row, StatusSubmitted)
		return reject("S22", ReasonTransferNotObservedOnce)
	}
	now := s.now().UTC()
	row.Status, row.UpdatedAt, row.SettledAt, row.Reason = StatusSettled, now, &now, ""
	if _, err := s.store.Update(context.WithoutCancel(ctx), row, StatusSubmitted); err != nil {
		return &Unavailable{Item: "S22", Reason: ReasonSettlementPending, TxSig: row.TxSig}
	}
	return nil
}

// claim starts one audit run on a settled row.
func (s *Settler) claim(ctx context.Context, txSig string, resumed bool) (*Receipt, error) {
	now := s.now().UTC()
	ok, err := s.store.Claim(ctx, txSig, ClaimRule{MaxClaims: s.MaxClaims, SettledAfter: now.Add(-s.ResumeWindow),
		IdleBefore: now.Add(-s.ClaimLease), Now: now})
	if err != nil {
		return nil, unavailable("S23", "settlement_store_unavailable")
	}
	row, gerr := s.store.Get(ctx, txSig)
	if gerr != nil {
		return nil, unavailable("S23", "settlement_store_unavailable")
	}
	if !ok {
		switch {
		case row.Status != StatusSettled:
			return nil, reject("S23", ReasonDuplicateSettlement)
		case row.Claims >= s.MaxClaims || row.SettledAt == nil || row.SettledAt.Before(now.Add(-s.ResumeWindow)):
			return nil, reject("S23", ReasonResumeWindowClosed)
		}
		// Another run of this payment is in progress.
		return nil, reject("S23", ReasonDuplicateSettlement)
	}
	var fee int64
	if row.FeeLamports != nil {
		fee = *row.FeeLamports
	}
	return &Receipt{TxSig: row.TxSig, Payer: row.Payer, Network: row.Network, FeeLamports: fee, Slot: row.Slot,
		Resumed: resumed || row.Claims > 1, LedgerID: row.LedgerID, units: s.cfg.Price.Units}, nil
}

// RecordLedger writes the ledger row of a payment once: if the settlement already has one
// (a resumed audit), appendFn is not called again.
func (s *Settler) RecordLedger(ctx context.Context, r *Receipt, appendFn func() (int64, error)) error {
	row, err := s.store.Get(ctx, r.TxSig)
	if err != nil {
		return fmt.Errorf("x402: record ledger: %w", err)
	}
	if row.LedgerID != nil {
		r.LedgerID = row.LedgerID
		return nil
	}
	id, err := appendFn()
	if err != nil {
		return fmt.Errorf("x402: record ledger: %w", err)
	}
	row.LedgerID, row.UpdatedAt = &id, s.now().UTC()
	if _, err := s.store.Update(ctx, row, StatusSettled); err != nil {
		return fmt.Errorf("x402: record ledger: %w", err)
	}
	r.LedgerID = &id
	return nil
}

// Delivered marks the report of a payment delivered: no further resume is possible.
func (s *Settler) Delivered(ctx context.Context, r *Receipt) error {
	row, err := s.store.Get(ctx, r.TxSig)
	if err != nil {
		return fmt.Errorf("x402: mark delivered: %w", err)
	}
	row.Status, row.UpdatedAt = StatusDelivered, s.now().UTC()
	if _, err := s.store.Update(ctx, row, StatusSettled); err != nil {
		return fmt.Errorf("x402: mark delivered: %w", err)
	}
	return nil
}
