package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

var _ store.Keyed = (*Store)(nil)

// lite rewrites the shared statements' $N parameters to SQLite's ?N.
func lite(q string) string { return strings.ReplaceAll(q, "$", "?") }

var (
	replaySQL  = lite(store.ReplaySQL)
	putKeySQL  = lite(store.PutKeySQL)
	findKeySQL = lite(store.FindKeySQL)
	probeSQL   = lite(store.ProbeSQL)
)

// replay counts one retry of wk in tx; ok is false when wk stands for no live, unspent write.
func replay(ctx context.Context, tx *sql.Tx, wk store.WriteKey, now time.Time) (store.Replay, bool, error) {
	var r store.Replay
	err := tx.QueryRowContext(ctx, replaySQL, string(wk), now.UnixMilli(), store.MaxReplays).Scan(&r.LedgerID, &r.Used)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, false, nil
	case err != nil:
		return r, false, fmt.Errorf("sqlite: replay write key: %w", err)
	}
	return r, true, nil
}

func putKey(ctx context.Context, tx *sql.Tx, wk store.WriteKey, ledgerID any, used int, now time.Time) error {
	if _, err := tx.ExecContext(ctx, putKeySQL, string(wk), ledgerID, used, now.Add(store.KeyLifetime).UnixMilli()); err != nil {
		return fmt.Errorf("sqlite: store write key: %w", err)
	}
	return nil
}

// commit commits tx. A commit that could not write its pages (a read-only or full filesystem, a
// failed write) committed nothing: the WAL frame that commits is written last and only counts
// whole. Any other failure, a failed sync above all, may leave the commit visible here and yet
// not on disk: it is marked store.NotDurable, so no look-up answers it as committed.
func commit(tx *sql.Tx, what string) error {
	if err := tx.Commit(); err != nil {
		return unwritten(fmt.Errorf("sqlite: commit %s: %w", what, err))
	}
	return nil
}

// unwritten marks err store.NotApplied when SQLite could not write at all, and any other
// failure of a write that may have committed store.NotDurable.
func unwritten(err error) error {
	var e *sqlite3.Error
	if err == nil || errors.Is(err, store.ErrNotApplied) {
		return err
	}
	if !errors.As(err, &e) {
		return store.NotDurable(err)
	}
	switch c := e.Code(); {
	case c&0xff == sqlite3lib.SQLITE_READONLY, c == sqlite3lib.SQLITE_FULL, c == sqlite3lib.SQLITE_IOERR_WRITE:
		return store.NotApplied(err)
	}
	return store.NotDurable(err)
}

// TakeFreeOnce implements store.Keyed.
func (s *Store) TakeFreeOnce(ctx context.Context, key string, wk store.WriteKey, now time.Time, limits store.FreeLimits) (store.FreeDecision, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return store.FreeDecision{}, store.NotApplied(fmt.Errorf("sqlite: begin free-tier check: %w", err))
	}
	defer tx.Rollback()
	if wk != "" {
		r, ok, err := replay(ctx, tx, wk, now)
		if err != nil {
			return store.FreeDecision{}, store.NotApplied(err)
		}
		if ok {
			// A retry's count is not a use: a failed commit here consumed nothing either way.
			if err := commit(tx, "write-key retry"); err != nil {
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
	if err := commit(tx, "free-tier check"); err != nil {
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
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, store.NotApplied(fmt.Errorf("sqlite: begin ledger append: %w", err))
	}
	defer tx.Rollback()
	r, ok, err := replay(ctx, tx, wk, now)
	if err != nil {
		return 0, false, store.NotApplied(err)
	}
	if ok && r.LedgerID > 0 {
		if err := commit(tx, "write-key retry"); err != nil {
			return 0, false, store.NotApplied(err)
		}
		return r.LedgerID, true, nil
	}
	id, err := appendLedger(ctx, tx.StmtContext(ctx, s.appendLedger), tx, e)
	if err != nil {
		return 0, false, store.NotApplied(err)
	}
	if err := putKey(ctx, tx, wk, id, 0, now); err != nil {
		return 0, false, store.NotApplied(err)
	}
	if err := commit(tx, "ledger append"); err != nil {
		return 0, false, err
	}
	return id, false, nil
}

// FindWrite implements store.Keyed.
func (s *Store) FindWrite(ctx context.Context, wk store.WriteKey, now time.Time) (store.Replay, error) {
	var r store.Replay
	err := s.db.QueryRowContext(ctx, findKeySQL, string(wk), now.UnixMilli()).Scan(&r.LedgerID, &r.Used)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, store.ErrNotFound
	case err != nil:
		return r, fmt.Errorf("sqlite: find write key: %w", err)
	}
	return r, nil
}

// FindPayment implements store.Keyed.
func (s *Store) FindPayment(ctx context.Context, txID string) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT id FROM ledger WHERE payment_tx = ?`, txID).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, store.ErrNotFound
	case err != nil:
		return 0, fmt.Errorf("sqlite: find payment: %w", err)
	}
	return id, nil
}

// ProbeWrite implements store.Keyed.
func (s *Store) ProbeWrite(ctx context.Context, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, probeSQL, now.UnixMilli()); err != nil {
		return fmt.Errorf("sqlite: write probe: %w", err)
	}
	return nil
}
