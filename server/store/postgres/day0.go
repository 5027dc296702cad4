package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Day0 implements store.Store: the day0 row the ledger's trigger wrote (migration 0130_day0).
func (s *Store) Day0(ctx context.Context) (store.Day0, bool, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	var d store.Day0
	err := s.pool.QueryRow(ctx, `SELECT ts, payment_tx, ledger_id FROM day0 WHERE id = 1`).Scan(&d.At, &d.PaymentTx, &d.LedgerID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Day0{}, false, nil
	case err != nil:
		return store.Day0{}, false, fmt.Errorf("postgres: read day0: %w", err)
	}
	d.At = d.At.UTC()
	return d, true, nil
}

// TripwireDays implements store.Store.
func (s *Store) TripwireDays(ctx context.Context, fromDay, toDay string) ([]store.DayCounts, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	ledger, err := s.dayCounts(ctx, `SELECT to_char(day, 'YYYY-MM-DD'),
		count(*) FILTER (WHERE NOT house), count(*) FILTER (WHERE NOT house AND refund), count(*) FILTER (WHERE house), 0::bigint
		FROM ledger WHERE op = $1 AND day >= $2::date AND day <= $3::date GROUP BY day ORDER BY day`, store.OpAudit, fromDay, toDay)
	if err != nil {
		return nil, fmt.Errorf("postgres: tripwire days: %w", err)
	}
	free, err := s.dayCounts(ctx, `SELECT to_char(day, 'YYYY-MM-DD'), 0::bigint, 0::bigint, 0::bigint, calls::bigint
		FROM free_calls_daily WHERE day >= $1::date AND day <= $2::date ORDER BY day`, fromDay, toDay)
	if err != nil {
		return nil, fmt.Errorf("postgres: free calls by day: %w", err)
	}
	return store.MergeDays(ledger, free), nil
}

// dayCounts reads rows of (day, paid, refunds, house, free).
func (s *Store) dayCounts(ctx context.Context, query string, args ...any) ([]store.DayCounts, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.ScanDays(rows)
}
