// Package sqlite is the embedded default Store: one SQLite file (modernc.org/sqlite, pure Go) in
// WAL mode with a busy timeout, so several processes on one host can share it. The request
// path's writes (ledger rows, free-tier uses, their write keys) are group-committed: one
// transaction and one sync for every write queued while the previous group synced.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite backend.
type Store struct {
	db *sql.DB
	// appendLedger is the ledger INSERT, prepared once: parsing it on every paid or house audit
	// cost about as much as executing it.
	appendLedger *sql.Stmt
	// replay and putKey are a keyed write's look-up and record, prepared once for the same
	// reason: a house audit runs both beside its INSERT, and parsing them was most of the SQL
	// time the c = 32 profile showed left on the ledger's path.
	replay, putKey *sql.Stmt
	// group commits the request path's writes (ledger rows, free-tier uses): SQLite has one
	// writer, so one group at a time, each one BEGIN IMMEDIATE ... COMMIT with one sync.
	group *store.Group
}

var _ store.Store = (*Store)(nil)

// idleConns is how many connections stay open between requests: the group committer's one, the
// readers of a loaded server (free-tier reads, readiness, settlement lookups) and the sweeper.
const idleConns = 16

// Open opens (creating if needed) the database file at path and applies pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, true)
}

// OpenExisting opens the database file at path only if it exists (operator commands must not
// create an empty ledger in the wrong folder).
func OpenExisting(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, false)
}

func open(ctx context.Context, path string, create bool) (*Store, error) {
	if !create {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("sqlite: no store at %s (nothing was created)", path)
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sqlite: create directory: %w", err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	// FULL: a committed ledger, settlement or free-tier write is on disk before the answer
	// (NORMAL in WAL mode can lose the last commits when the host or filesystem fails).
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	// database/sql keeps two idle connections by default: under load every further one was
	// opened (its pragmas run) and closed per request, and its statements prepared again; the
	// loadbench profile showed newConn and sqlite3_prepare_v2 on the ledger's path.
	db.SetMaxIdleConns(idleConns)
	s := &Store{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if s.appendLedger, err = db.PrepareContext(ctx, appendLedgerSQL); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: prepare ledger append: %w", err)
	}
	if s.replay, err = db.PrepareContext(ctx, replaySQL); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: prepare write key replay: %w", err)
	}
	if s.putKey, err = db.PrepareContext(ctx, putKeySQL); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: prepare write key record: %w", err)
	}
	s.group = store.NewGroup(writes{s}, store.GroupOptions{Lanes: 1, MaxWrites: groupMaxWrites})
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	ms, err := store.Migrations(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: one migrator at a time
	if err != nil {
		return fmt.Errorf("sqlite: begin migration: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: read schema_migrations: %w", err)
		}
		if n > 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("sqlite: apply %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, time.Now().UTC().Format(time.RFC3339)); err != nil {
			return fmt.Errorf("sqlite: record %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit migrations: %w", err)
	}
	return nil
}

// groupMaxWrites bounds one group: enough for every caller the server admits at once, and a
// transaction short enough that a reader's snapshot is never held up long.
const groupMaxWrites = 128

// Close answers or refuses every queued write, then closes the database.
func (s *Store) Close() error {
	s.group.Close()
	s.appendLedger.Close()
	s.replay.Close()
	s.putKey.Close()
	return s.db.Close()
}

const takeFreeSQL = `
INSERT INTO free_tier (caller_key, day, used, last_ms) VALUES (?1, ?2, 1, ?3)
ON CONFLICT (caller_key) DO UPDATE SET
    used    = CASE WHEN free_tier.day = excluded.day THEN free_tier.used + 1 ELSE 1 END,
    day     = excluded.day,
    last_ms = excluded.last_ms
WHERE excluded.last_ms - free_tier.last_ms >= ?4
  AND (free_tier.day <> excluded.day OR free_tier.used < ?5)
RETURNING used`

// TakeFree implements store.Store.
func (s *Store) TakeFree(ctx context.Context, key string, now time.Time, limits store.FreeLimits) (store.FreeDecision, error) {
	return s.TakeFreeOnce(ctx, key, "", now, limits)
}

// takeFree decides one free call in tx (not committed).
func takeFree(ctx context.Context, tx *sql.Tx, key string, now time.Time, limits store.FreeLimits) (store.FreeDecision, error) {
	day := store.Day(now)
	var used int
	err := tx.QueryRowContext(ctx, takeFreeSQL, key, day, now.UnixMilli(), limits.MinInterval.Milliseconds(), limits.PerDay).Scan(&used)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		var sday string
		var sused int
		var last int64
		if err := tx.QueryRowContext(ctx, `SELECT day, used, last_ms FROM free_tier WHERE caller_key = ?`, key).Scan(&sday, &sused, &last); err != nil {
			return store.FreeDecision{}, fmt.Errorf("sqlite: read free-tier state: %w", err)
		}
		return store.Decide(now, sday, sused, last, limits), nil
	case err != nil:
		return store.FreeDecision{}, fmt.Errorf("sqlite: free-tier check: %w", err)
	}
	if !limits.Uncounted {
		if _, err := tx.ExecContext(ctx, `INSERT INTO free_calls_daily (day, calls) VALUES (?, 1)
		ON CONFLICT (day) DO UPDATE SET calls = calls + 1`, day); err != nil {
			return store.FreeDecision{}, fmt.Errorf("sqlite: count free call: %w", err)
		}
	}
	return store.FreeDecision{Outcome: store.FreeAllowed, Used: used}, nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AppendLedger implements store.Store: the row is one write of a group commit.
func (s *Store) AppendLedger(ctx context.Context, e store.LedgerEntry) (int64, error) {
	return s.group.AppendLedger(ctx, e)
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// appendLedger writes e with the prepared ledger INSERT; a payment that already has its row gets
// that row's id (read through q).
func appendLedger(ctx context.Context, stmt *sql.Stmt, q queryRower, e store.LedgerEntry) (int64, error) {
	var fee, und any
	if e.SolanaFeeLamports != nil {
		fee = *e.SolanaFeeLamports
	}
	if e.UndeclaredClusters != nil {
		und = *e.UndeclaredClusters
	}
	ts := e.Timestamp.UTC()
	res, err := stmt.ExecContext(ctx,
		nullString(e.PayerWallet), ts.Format(tsLayout), store.Day(ts), e.PriceUSDCUnits,
		nullString(e.CAD.Rate), nullString(e.CAD.RateDate), nullString(e.CAD.Basis), boolInt(e.CAD.Pending), boolInt(e.CAD.Refund),
		nullString(e.PaymentTx), fee, e.CriteriaVersion, e.VerdictLine, e.Op, und, boolInt(e.House))
	if err != nil {
		return 0, fmt.Errorf("sqlite: append ledger: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		// The payment already has its row (idempotent append).
		var id int64
		if err := q.QueryRowContext(ctx, `SELECT id FROM ledger WHERE payment_tx = ?`, e.PaymentTx).Scan(&id); err != nil {
			return 0, fmt.Errorf("sqlite: ledger id: %w", err)
		}
		return id, nil
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("sqlite: ledger id: %w", err)
	}
	return id, nil
}

const appendLedgerSQL = `INSERT INTO ledger (payer_wallet, ts, day, price_usdc_units,
		cad_rate, cad_rate_date, cad_basis, cad_pending, refund, payment_tx, solana_fee_lamports,
		criteria_version, verdict_line, op, undeclared_clusters, house)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (payment_tx) WHERE payment_tx IS NOT NULL DO NOTHING`

// tsLayout keeps milliseconds and sorts lexically.
const tsLayout = "2006-01-02T15:04:05.000Z07:00"

// ListLedger implements store.Store.
func (s *Store) ListLedger(ctx context.Context, afterID int64, limit int) ([]store.LedgerEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, coalesce(payer_wallet, ''), ts, day, price_usdc_units,
		coalesce(cad_rate, ''), coalesce(cad_rate_date, ''), coalesce(cad_basis, ''), cad_pending, refund,
		coalesce(payment_tx, ''), solana_fee_lamports, criteria_version, verdict_line, op, undeclared_clusters, house
		FROM ledger WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list ledger: %w", err)
	}
	defer rows.Close()
	var out []store.LedgerEntry
	for rows.Next() {
		var e store.LedgerEntry
		var ts string
		var pending, refund, house int
		var fee sql.NullInt64
		var und sql.NullInt64
		if err := rows.Scan(&e.ID, &e.PayerWallet, &ts, &e.Day, &e.PriceUSDCUnits, &e.CAD.Rate, &e.CAD.RateDate,
			&e.CAD.Basis, &pending, &refund, &e.PaymentTx, &fee, &e.CriteriaVersion, &e.VerdictLine, &e.Op, &und, &house); err != nil {
			return nil, fmt.Errorf("sqlite: scan ledger: %w", err)
		}
		t, err := time.Parse(tsLayout, ts)
		if err != nil {
			return nil, fmt.Errorf("sqlite: ledger timestamp: %w", err)
		}
		e.Timestamp = t.UTC()
		e.CAD.Pending, e.CAD.Refund, e.House = pending == 1, refund == 1, house == 1
		if fee.Valid {
			v := fee.Int64
			e.SolanaFeeLamports = &v
		}
		if und.Valid {
			v := int(und.Int64)
			e.UndeclaredClusters = &v
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list ledger: %w", err)
	}
	return out, nil
}

// MarkRefund implements store.Store.
func (s *Store) MarkRefund(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, `UPDATE ledger SET refund = 1 WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("sqlite: mark refund: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Tripwires implements store.Store.
func (s *Store) Tripwires(ctx context.Context, now time.Time, window time.Duration) (store.Tripwires, error) {
	from := now.Add(-window).UTC()
	var t store.Tripwires
	err := s.db.QueryRowContext(ctx, `SELECT
		coalesce(sum(CASE WHEN house = 0 THEN 1 ELSE 0 END), 0),
		coalesce(sum(CASE WHEN house = 0 AND refund = 1 THEN 1 ELSE 0 END), 0),
		coalesce(sum(house), 0)
		FROM ledger WHERE op = ? AND ts >= ? AND ts <= ?`,
		store.OpAudit, from.Format(tsLayout), now.UTC().Format(tsLayout)).Scan(&t.PaidCalls, &t.Refunds, &t.HouseCalls)
	if err != nil {
		return t, fmt.Errorf("sqlite: tripwires: %w", err)
	}
	err = s.db.QueryRowContext(ctx, `SELECT coalesce(sum(calls), 0) FROM free_calls_daily WHERE day >= ? AND day <= ?`,
		store.Day(from), store.Day(now)).Scan(&t.FreeCalls)
	if err != nil {
		return t, fmt.Errorf("sqlite: free calls: %w", err)
	}
	return t, nil
}

// LedgerColumns implements store.Store.
func (s *Store) LedgerColumns(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM pragma_table_info('ledger') ORDER BY cid`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: ledger columns: %w", err)
	}
	return scanStrings(rows)
}

// Tables implements store.Store.
func (s *Store) Tables(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tables: %w", err)
	}
	return scanStrings(rows)
}

// DumpTable implements store.Store.
func (s *Store) DumpTable(ctx context.Context, table string) ([]string, error) {
	if err := store.HasTable(ctx, s.Tables, table); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: dump %s: %w", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("sqlite: dump %s: %w", table, err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("sqlite: dump %s: %w", table, err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprintf("%s=%v", cols[i], v)
			if b, ok := v.([]byte); ok {
				parts[i] = cols[i] + "=" + string(b)
			}
		}
		out = append(out, strings.Join(parts, "\t"))
	}
	return out, rows.Err()
}

func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("sqlite: scan: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
