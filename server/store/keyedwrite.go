package store

import (
	"context"
	"time"
)

// The keyed writes' orchestration, written once for both backends: in one transaction, answer a
// live key's retry as its committed write, or make the write and store its key, then commit.
// Each backend supplies only its SQL and how its errors are marked (WriteDB, WriteTx).

// WriteTx is one backend transaction of a keyed write. Its errors carry the backend's context;
// the orchestration marks them NotApplied where nothing can have been committed.
type WriteTx interface {
	// Replay counts one retry of wk; ok is false when wk stands for no live, unspent write.
	Replay(ctx context.Context, wk WriteKey, now time.Time) (r Replay, ok bool, err error)
	// PutKey stores wk for the write r (LedgerID 0: a free-tier use), renewing a spent key.
	PutKey(ctx context.Context, wk WriteKey, r Replay, now time.Time) error
	// TakeFree decides one free-tier call, not yet committed.
	TakeFree(ctx context.Context, key string, now time.Time, limits FreeLimits) (FreeDecision, error)
	// AppendLedger writes one ledger row, not yet committed.
	AppendLedger(ctx context.Context, e LedgerEntry) (int64, error)
	// Commit commits the write named what, marking its error as the backend knows it
	// (NotApplied, NotDurable, or unmarked when a commit may hide behind it).
	Commit(ctx context.Context, what string) error
	// Rollback ends the transaction if it is still open; its error is of no use.
	Rollback(ctx context.Context)
}

// WriteDB is a backend as the keyed writes see it.
type WriteDB interface {
	// BeginWrite starts the transaction of the write named what.
	BeginWrite(ctx context.Context, what string) (WriteTx, error)
	// AppendLedger writes one ledger row committed on its own (a write without a key).
	AppendLedger(ctx context.Context, e LedgerEntry) (int64, error)
}

// retryCommit is the name of the commit that counts a key's retry.
const retryCommit = "write-key retry"

// TakeFreeOnce is Keyed.TakeFreeOnce over db.
func TakeFreeOnce(ctx context.Context, db WriteDB, key string, wk WriteKey, now time.Time, limits FreeLimits) (FreeDecision, error) {
	tx, err := db.BeginWrite(ctx, "free-tier check")
	if err != nil {
		return FreeDecision{}, NotApplied(err)
	}
	defer tx.Rollback(ctx)
	if wk != "" {
		r, ok, err := tx.Replay(ctx, wk, now)
		if err != nil {
			return FreeDecision{}, NotApplied(err)
		}
		if ok {
			// A retry's count is not a use: a failed commit here consumed nothing either way.
			if err := tx.Commit(ctx, retryCommit); err != nil {
				return FreeDecision{}, NotApplied(err)
			}
			return FreeDecision{Outcome: FreeAllowed, Used: r.Used, Replayed: true}, nil
		}
	}
	d, err := tx.TakeFree(ctx, key, now, limits)
	if err != nil {
		return d, NotApplied(err)
	}
	if d.Outcome != FreeAllowed {
		return d, nil // nothing to commit: the refusal consumed nothing
	}
	if wk != "" {
		if err := tx.PutKey(ctx, wk, Replay{Used: d.Used}, now); err != nil {
			return FreeDecision{}, NotApplied(err)
		}
	}
	if err := tx.Commit(ctx, "free-tier check"); err != nil {
		return FreeDecision{}, err
	}
	return d, nil
}

// AppendLedgerOnce is Keyed.AppendLedgerOnce over db.
func AppendLedgerOnce(ctx context.Context, db WriteDB, e LedgerEntry, wk WriteKey, now time.Time) (int64, bool, error) {
	if wk == "" {
		id, err := db.AppendLedger(ctx, e)
		return id, false, err
	}
	tx, err := db.BeginWrite(ctx, "ledger append")
	if err != nil {
		return 0, false, NotApplied(err)
	}
	defer tx.Rollback(ctx)
	r, ok, err := tx.Replay(ctx, wk, now)
	if err != nil {
		return 0, false, NotApplied(err)
	}
	if ok && r.LedgerID > 0 {
		if err := tx.Commit(ctx, retryCommit); err != nil {
			return 0, false, NotApplied(err)
		}
		return r.LedgerID, true, nil
	}
	id, err := tx.AppendLedger(ctx, e)
	if err != nil {
		return 0, false, NotApplied(err)
	}
	if err := tx.PutKey(ctx, wk, Replay{LedgerID: id}, now); err != nil {
		return 0, false, NotApplied(err)
	}
	if err := tx.Commit(ctx, "ledger append"); err != nil {
		return 0, false, err
	}
	return id, false, nil
}
