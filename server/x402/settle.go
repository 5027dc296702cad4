package x402

import (
	"context"
	"errors"
	"fmt"
	"time"

	solana "github.com/gagliardetto/solana-go"
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
