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

// writes adapts the SQLite handle to store.GroupDB.
type writes struct{ s *Store }

// BeginGroup implements store.GroupDB: BEGIN IMMEDIATE (the DSN's _txlock).
func (w writes) BeginGroup(ctx context.Context) (store.WriteTx, error) {
	tx, err := w.s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: begin group: %w", err)
	}
	return writeTx{tx: tx, appendLedger: w.s.appendLedger, replay: w.s.replay, putKey: w.s.putKey}, nil
}

// Isolated implements store.GroupDB: a constraint (or a value SQLite refuses) belongs to the
// statement's own write; so does a row the write expected and did not find.
func (w writes) Isolated(err error) bool {
	var e *sqlite3.Error
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3lib.SQLITE_CONSTRAINT, sqlite3lib.SQLITE_MISMATCH, sqlite3lib.SQLITE_TOOBIG, sqlite3lib.SQLITE_RANGE:
			return true
		}
		return false
	}
	return errors.Is(err, sql.ErrNoRows)
}

// writeTx adapts one *sql.Tx to store.WriteTx.
type writeTx struct {
	tx                           *sql.Tx
	appendLedger, replay, putKey *sql.Stmt // the Store's, prepared once
}

// Replay implements store.WriteTx.
func (w writeTx) Replay(ctx context.Context, wk store.WriteKey, now time.Time) (store.Replay, bool, error) {
	var r store.Replay
	err := w.tx.StmtContext(ctx, w.replay).QueryRowContext(ctx, string(wk), now.UnixMilli(), store.MaxReplays).Scan(&r.LedgerID, &r.Used)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, false, nil
	case err != nil:
		return r, false, fmt.Errorf("sqlite: replay write key: %w", err)
	}
	return r, true, nil
}

// PutKey implements store.WriteTx.
func (w writeTx) PutKey(ctx context.Context, wk store.WriteKey, r store.Replay, now time.Time) error {
	var ledgerID any
	if r.LedgerID > 0 {
		ledgerID = r.LedgerID
	}
	if _, err := w.tx.StmtContext(ctx, w.putKey).ExecContext(ctx, string(wk), ledgerID, r.Used, now.Add(store.KeyLifetime).UnixMilli()); err != nil {
		return fmt.Errorf("sqlite: store write key: %w", err)
	}
	return nil
}

// TakeFree implements store.WriteTx.
func (w writeTx) TakeFree(ctx context.Context, key string, now time.Time, limits store.FreeLimits) (store.FreeDecision, error) {
	return takeFree(ctx, w.tx, key, now, limits)
}

// AppendLedger implements store.WriteTx.
func (w writeTx) AppendLedger(ctx context.Context, e store.LedgerEntry) (int64, error) {
	return appendLedger(ctx, w.tx.StmtContext(ctx, w.appendLedger), w.tx, e)
}

// Commit implements store.WriteTx.
func (w writeTx) Commit(_ context.Context, what string) error { return commit(w.tx, what) }

// Rollback implements store.WriteTx.
func (w writeTx) Rollback(context.Context) { w.tx.Rollback() }

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
	return store.TakeFreeOnce(ctx, s.group, key, wk, now, limits)
}

// AppendLedgerOnce implements store.Keyed.
func (s *Store) AppendLedgerOnce(ctx context.Context, e store.LedgerEntry, wk store.WriteKey, now time.Time) (int64, bool, error) {
	return store.AppendLedgerOnce(ctx, s.group, e, wk, now)
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
