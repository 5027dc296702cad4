package sqlite

import (
	"context"
	"errors"
	"fmt"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/scopehygiene/scope-hygiene/server/settlement"
)

// x402DB adapts the SQLite handle to settlement.SQLDB (settlement table of migration 0010).
type x402DB struct{ s *Store }

func (d x402DB) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := d.s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlite: rows affected: %w", err)
	}
	return n, nil
}

func (d x402DB) QueryRows(ctx context.Context, q string, each func(scan func(dest ...any) error) error, args ...any) error {
	rows, err := d.s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return fmt.Errorf("sqlite: scan: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

func (d x402DB) IsUniqueViolation(err error) bool {
	var e *sqlite3.Error
	if errors.As(err, &e) {
		return e.Code() == sqlite3lib.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3lib.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// Settlements returns the x402 settlement store over this database.
func (s *Store) Settlements() settlement.Store { return settlement.NewSQLStore(x402DB{s}, false) }

// SetLedgerCAD fixes the CAD block (rate, rate date, basis, pending) of one ledger row; the
// refund flag is left alone. Used by `ledger reconcile-cad`.
func (s *Store) SetLedgerCAD(ctx context.Context, id int64, rate, rateDate, basis string, pending bool) error {
	res, err := s.db.ExecContext(ctx, `UPDATE ledger SET cad_rate = ?1, cad_rate_date = ?2, cad_basis = ?3, cad_pending = ?4 WHERE id = ?5`,
		nullStr(rate), nullStr(rateDate), nullStr(basis), pending, id)
	if err != nil {
		return fmt.Errorf("sqlite: set ledger cad: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("sqlite: set ledger cad: %d rows", n)
	}
	return nil
}

func nullStr(v string) any {
	if v == "" {
		return nil
	}
	return v
}
