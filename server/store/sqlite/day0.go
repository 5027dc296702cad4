package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Day0 implements store.Store: the day0 row the ledger's trigger wrote (migration 0130_day0).
func (s *Store) Day0(ctx context.Context) (store.Day0, bool, error) {
	var d store.Day0
	var ts string
	err := s.db.QueryRowContext(ctx, `SELECT ts, payment_tx, ledger_id FROM day0 WHERE id = 1`).Scan(&ts, &d.PaymentTx, &d.LedgerID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Day0{}, false, nil
	case err != nil:
		return store.Day0{}, false, fmt.Errorf("sqlite: read day0: %w", err)
	}
	at, err := time.Parse(tsLayout, ts)
	if err != nil {
		return store.Day0{}, false, fmt.Errorf("sqlite: day0 timestamp: %w", err)
	}
	d.At = at.UTC()
	return d, true, nil
}

// TripwireDays implements store.Store.
func (s *Store) TripwireDays(ctx context.Context, fromDay, toDay string) ([]store.DayCounts, error) {
	ledger, err := s.dayCounts(ctx, `SELECT day,
		coalesce(sum(CASE WHEN house = 0 THEN 1 ELSE 0 END), 0),
		coalesce(sum(CASE WHEN house = 0 AND refund = 1 THEN 1 ELSE 0 END), 0),
		coalesce(sum(house), 0), 0
		FROM ledger WHERE op = ? AND day >= ? AND day <= ? GROUP BY day ORDER BY day`, store.OpAudit, fromDay, toDay)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tripwire days: %w", err)
	}
	free, err := s.dayCounts(ctx, `SELECT day, 0, 0, 0, calls FROM free_calls_daily
		WHERE day >= ? AND day <= ? ORDER BY day`, fromDay, toDay)
	if err != nil {
		return nil, fmt.Errorf("sqlite: free calls by day: %w", err)
	}
	return store.MergeDays(ledger, free), nil
}

// dayCounts reads rows of (day, paid, refunds, house, free).
func (s *Store) dayCounts(ctx context.Context, query string, args ...any) ([]store.DayCounts, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return store.ScanDays(rows)
}
