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

// writes adapts the pool to store.WriteDB. Each write is its own transaction (store.Serial), on
// its own pooled connection: PostgreSQL already shares one WAL flush among the commits of
// concurrent connections, and a group commit of ours (store.Group over 2, 4 or 8 connections,
// measured interleaved against this at 8 and 32 callers) was no faster (0.76 to 1.38 of this
// one's rate, no consistent gain) while putting many callers' row locks in one transaction,
// where two groups can deadlock on free-tier rows that one write each never could.
type writes struct{ s *Store }

// BeginWrite implements store.WriteDB.
func (w writes) BeginWrite(ctx context.Context, what string) (store.WriteTx, error) {
	tx, err := w.s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: begin %s: %w", what, err)
	}
	return writeTx{tx}, nil
}

// AppendLedger implements store.WriteDB.
func (w writes) AppendLedger(ctx context.Context, e store.LedgerEntry) (int64, error) {
	return w.s.AppendLedger(ctx, e)
}

// writeTx adapts one pgx.Tx to store.WriteTx.
type writeTx struct{ tx pgx.Tx }

// Replay implements store.WriteTx.
func (w writeTx) Replay(ctx context.Context, wk store.WriteKey, now time.Time) (store.Replay, bool, error) {
	var r store.Replay
	err := w.tx.QueryRow(ctx, store.ReplaySQL, string(wk), now.UnixMilli(), store.MaxReplays).Scan(&r.LedgerID, &r.Used)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return r, false, nil
	case err != nil:
		return r, false, fmt.Errorf("postgres: replay write key: %w", err)
	}
	return r, true, nil
}

// PutKey implements store.WriteTx.
func (w writeTx) PutKey(ctx context.Context, wk store.WriteKey, r store.Replay, now time.Time) error {
	var ledgerID *int64
	if r.LedgerID > 0 {
		ledgerID = &r.LedgerID
	}
	if _, err := w.tx.Exec(ctx, store.PutKeySQL, string(wk), ledgerID, r.Used, now.Add(store.KeyLifetime).UnixMilli()); err != nil {
		return fmt.Errorf("postgres: store write key: %w", err)
	}
	return nil
}

// TakeFree implements store.WriteTx.
func (w writeTx) TakeFree(ctx context.Context, key string, now time.Time, limits store.FreeLimits) (store.FreeDecision, error) {
	return takeFree(ctx, w.tx, key, now, limits)
}

// AppendLedger implements store.WriteTx.
func (w writeTx) AppendLedger(ctx context.Context, e store.LedgerEntry) (int64, error) {
	return appendLedger(ctx, w.tx, e)
}

// Commit implements store.WriteTx.
func (w writeTx) Commit(ctx context.Context, what string) error { return commit(ctx, w.tx, what) }

// Rollback implements store.WriteTx; ctx is the call's, bounded, so a black-holed connection
// cannot hold it.
func (w writeTx) Rollback(ctx context.Context) { w.tx.Rollback(ctx) }

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

// TakeFreeOnce implements store.Keyed.
func (s *Store) TakeFreeOnce(ctx context.Context, key string, wk store.WriteKey, now time.Time, limits store.FreeLimits) (store.FreeDecision, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	return store.TakeFreeOnce(ctx, store.Serial{DB: writes{s}}, key, wk, now, limits)
}

// AppendLedgerOnce implements store.Keyed. A write without a key is AppendLedger, which bounds
// itself within this bound.
func (s *Store) AppendLedgerOnce(ctx context.Context, e store.LedgerEntry, wk store.WriteKey, now time.Time) (int64, bool, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	return store.AppendLedgerOnce(ctx, store.Serial{DB: writes{s}}, e, wk, now)
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
