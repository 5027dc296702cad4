package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/scopehygiene/scope-hygiene/server/settlement"
)

// x402DB adapts the pgx pool to settlement.SQLDB (settlement table of migration 0010).
type x402DB struct{ s *Store }

func (d x402DB) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := d.s.pool.Exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("postgres: %w", err)
	}
	return tag.RowsAffected(), nil
}

func (d x402DB) QueryRows(ctx context.Context, q string, each func(scan func(dest ...any) error) error, args ...any) error {
	rows, err := d.s.pool.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return fmt.Errorf("postgres: scan: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

func (d x402DB) IsUniqueViolation(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

// Settlements returns the x402 settlement store over this database.
func (s *Store) Settlements() settlement.Store { return settlement.NewSQLStore(x402DB{s}, true) }

// SetLedgerCAD fixes the CAD block (rate, rate date, basis, pending) of one ledger row; the
// refund flag is left alone. Used by `ledger reconcile-cad`.
func (s *Store) SetLedgerCAD(ctx context.Context, id int64, rate, rateDate, basis string, pending bool) error {
	tag, err := s.pool.Exec(ctx, `UPDATE ledger SET cad_rate = $1::numeric, cad_rate_date = $2::date, cad_basis = $3, cad_pending = $4 WHERE id = $5`,
		nullString(rate), nullString(rateDate), nullString(basis), pending, id)
	if err != nil {
		return fmt.Errorf("postgres: set ledger cad: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("postgres: set ledger cad: %d rows", tag.RowsAffected())
	}
	return nil
}

var _ = pgx.ErrNoRows
