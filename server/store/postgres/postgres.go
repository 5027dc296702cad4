// Package postgres is the Store for replicas that share one PostgreSQL database (pgx/v5 pool).
// Free-tier checks are one conditional upsert in one transaction, so every replica sees the
// same allowance.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the advisory-lock key that serialises migrators across replicas.
const migrationLock = 0x5c09e_4791

// Store is the PostgreSQL backend.
type Store struct {
	pool *pgxpool.Pool
}

var _ store.Store = (*Store)(nil)

// Open connects to dsn (a pgx connection string; search_path may be given as a parameter) and
// applies pending migrations.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("postgres: invalid connection string") // the DSN may carry a password
	}
	applyTimeouts(cfg, strings.Contains(dsn, "pool_max_conns"))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	s := &Store{pool: pool}
	// Start-up is bounded: a server that accepts and never answers fails the start, not hangs it.
	sctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	// One connection attempt is bounded by ConnectTimeout, shorter than the start: a server
	// that does not answer is tried again until StartTimeout has passed.
	err = s.migrate(sctx)
	for err != nil && sctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		err = s.migrate(sctx)
	}
	if err != nil {
		pool.Close()
		if sctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("postgres: the store did not answer within %s at %s:%d: %w",
				StartTimeout, cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
		}
		return nil, err
	}
	return s, nil
}

// Timeouts of every connection unless the connection string sets its own.
const (
	// StartTimeout bounds connecting and migrating at start.
	StartTimeout = 5 * time.Second
	// ConnectTimeout bounds one connection attempt (TCP, TLS and the start-up exchange).
	ConnectTimeout = time.Second
	// StatementTimeout bounds one statement on the server.
	StatementTimeout = 5 * time.Second
	// CallTimeout bounds one call of a request's path (a free-tier check, a ledger append, a
	// look-up, a probe) on this side, acquiring its connection included: a connection the
	// network black-holed fails the call and is dropped, instead of holding the request and its
	// pool slot until the request's own timeout.
	CallTimeout = time.Second
	// HealthCheckPeriod is how often idle pooled connections are checked; PingTimeout bounds
	// the ping of a connection idle for more than a second before it is handed out.
	HealthCheckPeriod = 500 * time.Millisecond
	PingTimeout       = 500 * time.Millisecond
	// MaxConns is the pool size unless the connection string sets pool_max_conns: room for
	// new requests while calls a black hole holds run out their CallTimeout.
	MaxConns = 16
)

// bound limits one request-path call to CallTimeout.
func bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, CallTimeout)
}

// applyTimeouts sets the connect and statement timeouts the connection string leaves unset, so
// a store that stops answering fails a request instead of holding it, and checks pooled
// connections often and within a bound, so the pool recovers soon after the network does.
func applyTimeouts(cfg *pgxpool.Config, maxConnsSet bool) {
	cfg.HealthCheckPeriod = min(cfg.HealthCheckPeriod, HealthCheckPeriod)
	if cfg.PingTimeout == 0 || cfg.PingTimeout > PingTimeout {
		cfg.PingTimeout = PingTimeout
	}
	if !maxConnsSet && cfg.MaxConns < MaxConns {
		cfg.MaxConns = MaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > ConnectTimeout {
		cfg.ConnConfig.ConnectTimeout = ConnectTimeout
	}
	rp := cfg.ConnConfig.RuntimeParams
	if rp["statement_timeout"] == "" {
		rp["statement_timeout"] = strconv.FormatInt(StatementTimeout.Milliseconds(), 10)
	}
	if rp["lock_timeout"] == "" {
		rp["lock_timeout"] = strconv.FormatInt(StatementTimeout.Milliseconds(), 10)
	}
	if rp["idle_in_transaction_session_timeout"] == "" {
		rp["idle_in_transaction_session_timeout"] = strconv.FormatInt(2*StatementTimeout.Milliseconds(), 10)
	}
}

func (s *Store) migrate(ctx context.Context) error {
	ms, err := store.Migrations(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return fmt.Errorf("postgres: migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("postgres: create schema_migrations: %w", err)
		}
		for _, m := range ms {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, m.Version).Scan(&n); err != nil {
				return fmt.Errorf("postgres: read schema_migrations: %w", err)
			}
			if n > 0 {
				continue
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("postgres: apply %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
				return fmt.Errorf("postgres: record %s: %w", m.Name, err)
			}
		}
		return nil
	})
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

const takeFreeSQL = `
INSERT INTO free_tier AS f (caller_key, day, used, last_ms) VALUES ($1, $2::date, 1, $3)
ON CONFLICT (caller_key) DO UPDATE SET
    used    = CASE WHEN f.day = excluded.day THEN f.used + 1 ELSE 1 END,
    day     = excluded.day,
    last_ms = excluded.last_ms
WHERE excluded.last_ms - f.last_ms >= $4
  AND (f.day <> excluded.day OR f.used < $5)
RETURNING used`

// TakeFree implements store.Store.
func (s *Store) TakeFree(ctx context.Context, key string, now time.Time, limits store.FreeLimits) (store.FreeDecision, error) {
	return s.TakeFreeOnce(ctx, key, "", now, limits)
}

// takeFree decides one free call in tx (not committed).
func takeFree(ctx context.Context, tx pgx.Tx, key string, now time.Time, limits store.FreeLimits) (store.FreeDecision, error) {
	day := store.Day(now)
	var used int
	err := tx.QueryRow(ctx, takeFreeSQL, key, day, now.UnixMilli(), limits.MinInterval.Milliseconds(), limits.PerDay).Scan(&used)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// The conflicting row is locked by the statement above; read it for the reason.
		var sday string
		var sused int
		var last int64
		if err := tx.QueryRow(ctx, `SELECT to_char(day, 'YYYY-MM-DD'), used, last_ms FROM free_tier WHERE caller_key = $1`, key).Scan(&sday, &sused, &last); err != nil {
			return store.FreeDecision{}, fmt.Errorf("postgres: read free-tier state: %w", err)
		}
		return store.Decide(now, sday, sused, last, limits), nil
	case err != nil:
		return store.FreeDecision{}, fmt.Errorf("postgres: free-tier check: %w", err)
	}
	if !limits.Uncounted {
		if _, err := tx.Exec(ctx, `INSERT INTO free_calls_daily AS d (day, calls) VALUES ($1::date, 1)
		ON CONFLICT (day) DO UPDATE SET calls = d.calls + 1`, day); err != nil {
			return store.FreeDecision{}, fmt.Errorf("postgres: count free call: %w", err)
		}
	}
	return store.FreeDecision{Outcome: store.FreeAllowed, Used: used}, nil
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// AppendLedger implements store.Store: one statement, committed on its own. An error after
// which the server cannot have seen the statement is marked store.NotApplied.
func (s *Store) AppendLedger(ctx context.Context, e store.LedgerEntry) (int64, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	id, err := appendLedger(ctx, s.pool, e)
	if err != nil && pgconn.SafeToRetry(err) {
		return 0, store.NotApplied(err)
	}
	return id, err
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// appendLedger writes e through q; a payment that already has its row gets that row's id.
func appendLedger(ctx context.Context, q querier, e store.LedgerEntry) (int64, error) {
	ts := e.Timestamp.UTC().Truncate(time.Millisecond)
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO ledger (payer_wallet, ts, day, price_usdc_units,
		cad_rate, cad_rate_date, cad_basis, cad_pending, refund, payment_tx, solana_fee_lamports,
		criteria_version, verdict_line, op, undeclared_clusters, house)
		VALUES ($1, $2, $3::date, $4, $5::text::numeric, $6::text::date, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		ON CONFLICT (payment_tx) WHERE payment_tx IS NOT NULL DO NOTHING
		RETURNING id`,
		nullString(e.PayerWallet), ts, store.Day(ts), e.PriceUSDCUnits,
		nullString(e.CAD.Rate), nullString(e.CAD.RateDate), nullString(e.CAD.Basis), e.CAD.Pending, e.CAD.Refund,
		nullString(e.PaymentTx), e.SolanaFeeLamports, e.CriteriaVersion, e.VerdictLine, e.Op, e.UndeclaredClusters, e.House).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		// The payment already has its row (idempotent append).
		err = q.QueryRow(ctx, `SELECT id FROM ledger WHERE payment_tx = $1`, e.PaymentTx).Scan(&id)
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: append ledger: %w", err)
	}
	return id, nil
}

// ListLedger implements store.Store.
func (s *Store) ListLedger(ctx context.Context, afterID int64, limit int) ([]store.LedgerEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, coalesce(payer_wallet, ''), ts, to_char(day, 'YYYY-MM-DD'), price_usdc_units,
		coalesce(cad_rate::text, ''), coalesce(to_char(cad_rate_date, 'YYYY-MM-DD'), ''), coalesce(cad_basis, ''), cad_pending, refund,
		coalesce(payment_tx, ''), solana_fee_lamports, criteria_version, verdict_line, op, undeclared_clusters, house
		FROM ledger WHERE id > $1 ORDER BY id LIMIT $2`, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list ledger: %w", err)
	}
	defer rows.Close()
	var out []store.LedgerEntry
	for rows.Next() {
		var e store.LedgerEntry
		if err := rows.Scan(&e.ID, &e.PayerWallet, &e.Timestamp, &e.Day, &e.PriceUSDCUnits, &e.CAD.Rate, &e.CAD.RateDate,
			&e.CAD.Basis, &e.CAD.Pending, &e.CAD.Refund, &e.PaymentTx, &e.SolanaFeeLamports, &e.CriteriaVersion,
			&e.VerdictLine, &e.Op, &e.UndeclaredClusters, &e.House); err != nil {
			return nil, fmt.Errorf("postgres: scan ledger: %w", err)
		}
		e.Timestamp = e.Timestamp.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list ledger: %w", err)
	}
	return out, nil
}

// MarkRefund implements store.Store.
func (s *Store) MarkRefund(ctx context.Context, id int64) error {
	tag, err := s.pool.Exec(ctx, `UPDATE ledger SET refund = TRUE WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("postgres: mark refund: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Tripwires implements store.Store.
func (s *Store) Tripwires(ctx context.Context, now time.Time, window time.Duration) (store.Tripwires, error) {
	from := now.Add(-window).UTC()
	var t store.Tripwires
	err := s.pool.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE NOT house),
		count(*) FILTER (WHERE NOT house AND refund),
		count(*) FILTER (WHERE house)
		FROM ledger WHERE op = $1 AND ts >= $2 AND ts <= $3`, store.OpAudit, from, now.UTC()).Scan(&t.PaidCalls, &t.Refunds, &t.HouseCalls)
	if err != nil {
		return t, fmt.Errorf("postgres: tripwires: %w", err)
	}
	err = s.pool.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM free_calls_daily WHERE day >= $1::date AND day <= $2::date`,
		store.Day(from), store.Day(now)).Scan(&t.FreeCalls)
	if err != nil {
		return t, fmt.Errorf("postgres: free calls: %w", err)
	}
	return t, nil
}

// LedgerColumns implements store.Store.
func (s *Store) LedgerColumns(ctx context.Context) ([]string, error) {
	return s.strings(ctx, `SELECT column_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'ledger' ORDER BY ordinal_position`)
}

// Tables implements store.Store.
func (s *Store) Tables(ctx context.Context) ([]string, error) {
	return s.strings(ctx, `SELECT table_name::text FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
}

// DumpTable implements store.Store.
func (s *Store) DumpTable(ctx context.Context, table string) ([]string, error) {
	if err := store.HasTable(ctx, s.Tables, table); err != nil {
		return nil, err
	}
	rows, err := s.strings(ctx, `SELECT row_to_json(t)::text FROM `+pgx.Identifier{table}.Sanitize()+` t`)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (s *Store) strings(ctx context.Context, q string) ([]string, error) {
	rows, err := s.pool.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("postgres: query: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: query: %w", err)
	}
	return out, nil
}
