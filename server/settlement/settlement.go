// Package settlement holds the settlement records of x402 payments and their stores (in memory,
// and over the SQL table both store backends create). It is storage: it knows nothing of
// payments' verification or of the chain, so server/store depends on it, not on server/x402.
package settlement

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"
)

// Status is the state of one settlement row.
type Status string

// Settlement states. reserved → submitted → settled → delivered is the happy path; released
// means provably never landed (the reservation stops blocking), failed means landed with an error.
const (
	// StatusReserved: the transaction id is reserved and nothing was broadcast yet.
	StatusReserved Status = "reserved"
	// StatusSubmitted: broadcast (or about to be); the outcome is not known yet ("pending").
	StatusSubmitted Status = "submitted"
	// StatusSettled: confirmed on-chain with the fee recorded; the report has not been delivered.
	// This is the verified marker a resume relies on.
	StatusSettled Status = "settled"
	// StatusDelivered: the paid report was handed to the client.
	StatusDelivered Status = "delivered"
	// StatusReleased: provably absent from the chain and unable to land; no longer blocks.
	StatusReleased Status = "released"
	// StatusFailed: landed with an error; terminal.
	StatusFailed Status = "failed"
)

// Settlement is one row of the x402_settlements table. It holds payment state only — never
// any export data.
type Settlement struct {
	// TxSig is the transaction id (base58 signature 0, ours); unique.
	TxSig string
	// Challenge is the memo challenge the payment answered; unique among non-released rows.
	Challenge string
	// ChallengeExpiry is the expiry encoded in the challenge.
	ChallengeExpiry time.Time
	// Payer is the client wallet (TransferChecked authority).
	Payer string
	// Network is the CAIP-2 id.
	Network string
	// Blockhash is the transaction's recent blockhash.
	Blockhash string
	// ExpiryHeight is an upper bound of the last block height at which the transaction can land.
	ExpiryHeight uint64
	// Status is the current state.
	Status Status
	// Reason is the static reason of a released or failed row.
	Reason string
	// FeeLamports is meta.fee once known (nil before).
	FeeLamports *int64
	// Slot is the slot the transaction landed in (0 before).
	Slot uint64
	// Claims counts audit runs started on this payment (first run plus resumes).
	Claims int
	// LedgerID is the ledger row written for this payment (nil before).
	LedgerID *int64
	// AmountUnits is the amount the payment was made at, in USDC atomic units (the price the
	// server asked; 0 on rows written before it was recorded). A refund books it.
	AmountUnits uint64
	// CreatedAt, UpdatedAt and SettledAt are bookkeeping times (UTC).
	CreatedAt, UpdatedAt time.Time
	SettledAt            *time.Time
}

// Store errors.
var (
	// ErrNotFound: no row for that transaction id.
	ErrNotFound = errors.New("settlement: not found")
	// ErrChallengeUsed: another live settlement already answered this challenge.
	ErrChallengeUsed = errors.New("settlement: challenge already used by another payment")
	// ErrPayerBusy: the payer already has a payment reserved or submitted (one unsettled payment
	// per payer, across replicas), so the fee payer risks at most one failed fee per payer.
	ErrPayerBusy = errors.New("settlement: payer has a payment in flight")
)

// inFlight reports whether a row holds its payer's one unsettled slot.
func inFlight(st Status) bool { return st == StatusReserved || st == StatusSubmitted }

// Store persists settlement state. Implementations: MemStore (tests, single process)
// and the SQLite/PostgreSQL backends of server/store (table x402_settlements).
type Store interface {
	// Reserve inserts s unless a row with s.TxSig exists; then it returns that row and nil
	// error. It returns ErrChallengeUsed when a different live row holds s.Challenge.
	Reserve(ctx context.Context, s *Settlement) (existing *Settlement, err error)
	// Update overwrites the mutable fields of the row s.TxSig iff its stored status is from
	// (compare-and-set). It reports whether it updated.
	Update(ctx context.Context, s *Settlement, from Status) (bool, error)
	// Claim starts one audit run on a settled row iff rule allows it: it increments Claims,
	// sets UpdatedAt to rule.Now and clears Reason.
	Claim(ctx context.Context, txSig string, rule ClaimRule) (bool, error)
	// Get returns one row or ErrNotFound.
	Get(ctx context.Context, txSig string) (*Settlement, error)
	// List returns rows in a status, oldest update first, at most limit.
	List(ctx context.Context, status Status, limit int) ([]*Settlement, error)
	// FailedFees returns the payer's payments that landed with an error (status failed, not
	// refunded) updated after since, oldest first, at most limit: the fee budget's input. An
	// empty payer means every payer's (the fee payer's global budget).
	FailedFees(ctx context.Context, payer string, since time.Time, limit int) ([]FailedFee, error)
	// Sweep deletes at most batch rows that rt allows deleting at now (Retention.Sweepable) and
	// returns how many it deleted. Rows still owed an answer (reserved, submitted, settled) are
	// never deleted.
	Sweep(ctx context.Context, now time.Time, rt Retention, batch int) (int64, error)
}

// ReasonRefunded is the reason of a settled payment closed by `ledger refund -tx` (status
// failed): its ledger row records the refund, and its fee was not lost on a failed transaction.
const ReasonRefunded = "refunded"

// FailedFee is one failed payment of a payer: the fee our fee payer paid for it (nil when the
// chain did not tell) and when the row recorded the failure.
type FailedFee struct {
	Lamports *int64
	At       time.Time
}

// Retention says how long finished settlement rows are kept. The ledger is the lasting record;
// a settlement row is operational state, kept only while something still reads it.
type Retention struct {
	// Done is how long delivered, released and refunded rows are kept after their last change
	// and after their payment challenge expired: a replay of the payment is refused as a
	// duplicate while the row exists and as challenge_expired once it is gone; the margin
	// covers clock differences between replicas.
	Done time.Duration
	// Failed is how long rows that landed with an error (the fee payer paid their fee) are kept
	// after their last change: the fee budget reads the last hour of them, and `ledger
	// tripwires` states the lamports lost over the rows still kept.
	Failed time.Duration
}

// DefaultRetention is the published retention (docs/x402.md, "How long each operational row lives").
var DefaultRetention = Retention{Done: 10 * time.Minute, Failed: 24 * time.Hour}

// Sweepable reports whether r may be deleted at now (the reference semantics for every
// backend): never while a payment is in flight or settled and undelivered.
func (rt Retention) Sweepable(r *Settlement, now time.Time) bool {
	done := now.Add(-rt.Done)
	old := !r.UpdatedAt.After(done) && !r.ChallengeExpiry.After(done)
	switch r.Status {
	case StatusDelivered, StatusReleased:
		return old
	case StatusFailed:
		if r.Reason == ReasonRefunded {
			return old
		}
		return old && !r.UpdatedAt.After(now.Add(-rt.Failed))
	}
	return false
}

// ClaimRule is the condition of Store.Claim. A claim succeeds iff the row is settled,
// Claims < MaxClaims, SettledAt >= SettledAfter, and either Claims == 0 (the first run), or the
// previous run is idle (UpdatedAt <= IdleBefore) or was abandoned (Reason == ReasonUndelivered).
type ClaimRule struct {
	MaxClaims    int
	SettledAfter time.Time
	IdleBefore   time.Time
	Now          time.Time
}

// ReasonUndelivered marks a settled row whose audit run ended without delivering the report.
const ReasonUndelivered = "undelivered"

// Allows reports whether rule admits a claim on r (the reference semantics for every backend).
func (rule ClaimRule) Allows(r *Settlement) bool {
	return r.Status == StatusSettled && r.Claims < rule.MaxClaims && r.SettledAt != nil &&
		!r.SettledAt.Before(rule.SettledAfter) &&
		(r.Claims == 0 || !r.UpdatedAt.After(rule.IdleBefore) || r.Reason == ReasonUndelivered)
}

// MemStore is an in-process Store (tests and single-process tools).
type MemStore struct {
	mu   sync.Mutex
	rows map[string]*Settlement
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{rows: map[string]*Settlement{}} }

func clone(s *Settlement) *Settlement { c := *s; return &c }

// Reserve implements Store.
func (m *MemStore) Reserve(_ context.Context, s *Settlement) (*Settlement, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ex, ok := m.rows[s.TxSig]; ok {
		return clone(ex), nil
	}
	for _, r := range m.rows {
		if r.Challenge == s.Challenge && r.Status != StatusReleased {
			return nil, ErrChallengeUsed
		}
	}
	for _, r := range m.rows {
		if r.Payer == s.Payer && inFlight(r.Status) && inFlight(s.Status) {
			return nil, ErrPayerBusy
		}
	}
	m.rows[s.TxSig] = clone(s)
	return nil, nil
}

// Update implements Store.
func (m *MemStore) Update(_ context.Context, s *Settlement, from Status) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[s.TxSig]
	if !ok || r.Status != from {
		return false, nil
	}
	if from == StatusReleased && s.Status != StatusReleased {
		for _, o := range m.rows {
			if o.TxSig != s.TxSig && o.Challenge == s.Challenge && o.Status != StatusReleased {
				return false, ErrChallengeUsed
			}
		}
	}
	if inFlight(s.Status) && !inFlight(r.Status) {
		for _, o := range m.rows {
			if o.TxSig != s.TxSig && o.Payer == s.Payer && inFlight(o.Status) {
				return false, ErrPayerBusy
			}
		}
	}
	m.rows[s.TxSig] = clone(s)
	return true, nil
}

// Claim implements Store.
func (m *MemStore) Claim(_ context.Context, txSig string, rule ClaimRule) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[txSig]
	if !ok || !rule.Allows(r) {
		return false, nil
	}
	r.Claims++
	r.UpdatedAt = rule.Now
	r.Reason = ""
	return true, nil
}

// FailedFees implements Store.
func (m *MemStore) FailedFees(_ context.Context, payer string, since time.Time, limit int) ([]FailedFee, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []FailedFee
	for _, r := range m.rows {
		if (payer == "" || r.Payer == payer) && r.Status == StatusFailed && r.Reason != ReasonRefunded && r.UpdatedAt.After(since) {
			f := FailedFee{At: r.UpdatedAt}
			if r.FeeLamports != nil {
				v := *r.FeeLamports
				f.Lamports = &v
			}
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Sweep implements Store.
func (m *MemStore) Sweep(_ context.Context, now time.Time, rt Retention, batch int) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for k, r := range m.rows {
		if n >= int64(batch) {
			break
		}
		if rt.Sweepable(r, now) {
			delete(m.rows, k)
			n++
		}
	}
	return n, nil
}

// Get implements Store.
func (m *MemStore) Get(_ context.Context, txSig string) (*Settlement, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[txSig]
	if !ok {
		return nil, ErrNotFound
	}
	return clone(r), nil
}

// List implements Store.
func (m *MemStore) List(_ context.Context, status Status, limit int) ([]*Settlement, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Settlement
	for _, r := range m.rows {
		if r.Status == status {
			out = append(out, clone(r))
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].UpdatedAt.Before(out[j-1].UpdatedAt); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
