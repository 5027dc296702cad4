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

// TakeFreeOnce is Keyed.TakeFreeOnce through w.
func TakeFreeOnce(ctx context.Context, w Writer, key string, wk WriteKey, now time.Time, limits FreeLimits) (FreeDecision, error) {
	var d FreeDecision
	err := w.Write(ctx, "free-tier check", func(ctx context.Context, tx WriteTx) (Need, error) {
		d = FreeDecision{}
		if wk != "" {
			r, ok, err := tx.Replay(ctx, wk, now)
			if err != nil {
				return NeedNothing, err
			}
			if ok {
				// A retry's count is not a use: a failed commit here consumed nothing either way.
				d = FreeDecision{Outcome: FreeAllowed, Used: r.Used, Replayed: true}
				return NeedCount, nil
			}
		}
		var err error
		if d, err = tx.TakeFree(ctx, key, now, limits); err != nil || d.Outcome != FreeAllowed {
			return NeedNothing, err // a refusal consumed nothing: nothing to commit
		}
		if wk != "" {
			if err := tx.PutKey(ctx, wk, Replay{Used: d.Used}, now); err != nil {
				return NeedNothing, err
			}
		}
		return NeedDurable, nil
	})
	if err != nil {
		return FreeDecision{}, err
	}
	return d, nil
}

// AppendLedgerOnce is Keyed.AppendLedgerOnce through w.
func AppendLedgerOnce(ctx context.Context, w Writer, e LedgerEntry, wk WriteKey, now time.Time) (int64, bool, error) {
	if wk == "" {
		id, err := w.AppendLedger(ctx, e)
		return id, false, err
	}
	var id int64
	var replayed bool
	err := w.Write(ctx, "ledger append", func(ctx context.Context, tx WriteTx) (Need, error) {
		r, ok, err := tx.Replay(ctx, wk, now)
		if err != nil {
			return NeedNothing, err
		}
		if ok && r.LedgerID > 0 {
			id, replayed = r.LedgerID, true
			return NeedCount, nil
		}
		if id, err = tx.AppendLedger(ctx, e); err != nil {
			return NeedNothing, err
		}
		replayed = false
		return NeedDurable, tx.PutKey(ctx, wk, Replay{LedgerID: id}, now)
	})
	if err != nil {
		return 0, false, err
	}
	return id, replayed, nil
}
