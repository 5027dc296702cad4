package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

var _ store.Keyed = (*Store)(nil)

// replay counts one retry of wk in tx; ok is false when wk stands for no live, unspent write.
func replay(ctx context.Context, tx pgx.Tx, wk store.WriteKey, now time.Time) (store.Replay, bool, error) {
	var r store.Replay
	err := tx.QueryRow(ctx, store.ReplaySQL, string(wk), now.UnixMilli(), store.MaxReplays).Scan(&r.LedgerID, &r.Used)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return r, false, nil
	case err != nil:
		return r, false, fmt.Errorf("postgres: replay write key: %w", err)
	}
	return r, true, nil
}

func putKey(ctx context.Context, tx pgx.Tx, wk store.WriteKey, ledgerID *int64, used int, now time.Time) error {
	if _, err := tx.Exec(ctx, store.PutKeySQL, string(wk), ledgerID, used, now.Add(store.KeyLifetime).UnixMilli()); err != nil {
		return fmt.Errorf("postgres: store write key: %w", err)
	}
	return nil
}

// commit commits tx. A commit the server cannot have received (nothing was sent) or that it
// answered with a rollback committed nothing; any other failure (the connection cut after the
// commit was sent) may hide a commit and is not marked.
func commit(ctx context.Context, tx pgx.Tx, what string) error {
	err := tx.Commit(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgx.ErrTxCommitRollback) || pgconn.SafeToRetry(err):
		return store.NotApplied(fmt.Errorf("postgres: commit %s: %w", what, err))
	}
	return fmt.Errorf("postgres: commit %s: %w", what, err)
}

// begin starts a transaction; its failure committed nothing.
func (s *Store) begin(ctx context.Context, what string) (pgx.Tx, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, store.NotApplied(fmt.Errorf("postgres: begin %s: %w", what, err))
	}
	return tx, nil
}

// TakeFreeOnce implements store.Keyed.
func (s *Store) TakeFreeOnce(ctx context.Context, key string, wk store.WriteKey, now time.Time, limits store.FreeLimits) (store.FreeDecision, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	tx, err := s.begin(ctx, "free-tier check")
	if err != nil {
		return store.FreeDecision{}, err
	}
	defer tx.Rollback(ctx) // bounded: a black-holed connection cannot hold it
	if wk != "" {
		r, ok, err := replay(ctx, tx, wk, now)
		if err != nil {
			return store.FreeDecision{}, store.NotApplied(err)
		}
		if ok {
			// A retry's count is not a use: a failed commit here consumed nothing either way.
			if err := commit(ctx, tx, "write-key retry"); err != nil {
				return store.FreeDecision{}, store.NotApplied(err)
			}
			return store.FreeDecision{Outcome: store.FreeAllowed, Used: r.Used, Replayed: true}, nil
		}
	}
	d, err := takeFree(ctx, tx, key, now, limits)
	if err != nil {
		return d, store.NotApplied(err)
	}
	if d.Outcome != store.FreeAllowed {
		return d, nil // nothing to commit: the refusal consumed nothing
	}
	if wk != "" {
		if err := putKey(ctx, tx, wk, nil, d.Used, now); err != nil {
			return store.FreeDecision{}, store.NotApplied(err)
		}
	}
	if err := commit(ctx, tx, "free-tier check"); err != nil {
		return store.FreeDecision{}, err
	}
	return d, nil
}

// AppendLedgerOnce implements store.Keyed.
func (s *Store) AppendLedgerOnce(ctx context.Context, e store.LedgerEntry, wk store.WriteKey, now time.Time) (int64, bool, error) {
	if wk == "" {
		id, err := s.AppendLedger(ctx, e)
		return id, false, err
	}
	ctx, cancel := bound(ctx)
	defer cancel()
	tx, err := s.begin(ctx, "ledger append")
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback(ctx) // bounded: a black-holed connection cannot hold it
	r, ok, err := replay(ctx, tx, wk, now)
	if err != nil {
		return 0, false, store.NotApplied(err)
	}
	if ok && r.LedgerID > 0 {
		if err := commit(ctx, tx, "write-key retry"); err != nil {
			return 0, false, store.NotApplied(err)
		}
		return r.LedgerID, true, nil
	}
	id, err := appendLedger(ctx, tx, e)
	if err != nil {
		return 0, false, store.NotApplied(err)
	}
	if err := putKey(ctx, tx, wk, &id, 0, now); err != nil {
		return 0, false, store.NotApplied(err)
	}
	if err := commit(ctx, tx, "ledger append"); err != nil {
		return 0, false, err
	}
	return id, false, nil
}

// FindWrite implements store.Keyed.
func (s *Store) FindWrite(ctx context.Context, wk store.WriteKey, now time.Time) (store.Replay, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	var r store.Replay
	err := s.pool.QueryRow(ctx, store.FindKeySQL, string(wk), now.UnixMilli()).Scan(&r.LedgerID, &r.Used)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return r, store.ErrNotFound
	case err != nil:
		return r, fmt.Errorf("postgres: find write key: %w", err)
	}
	return r, nil
}

// FindPayment implements store.Keyed.
func (s *Store) FindPayment(ctx context.Context, txID string) (int64, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT id FROM ledger WHERE payment_tx = $1`, txID).Scan(&id)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, store.ErrNotFound
	case err != nil:
		return 0, fmt.Errorf("postgres: find payment: %w", err)
	}
	return id, nil
}

// ProbeWrite implements store.Keyed.
func (s *Store) ProbeWrite(ctx context.Context, now time.Time) error {
	ctx, cancel := bound(ctx)
	defer cancel()
	if _, err := s.pool.Exec(ctx, store.ProbeSQL, now.UnixMilli()); err != nil {
		return fmt.Errorf("postgres: write probe: %w", err)
	}
	return nil
}
