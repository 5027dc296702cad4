package settlement

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// SQLDB is the minimal database surface SQLStore needs; each backend of server/store adapts
// its driver (database/sql for SQLite, pgx for PostgreSQL) to it.
type SQLDB interface {
	// Exec runs a statement and returns the number of rows affected.
	Exec(ctx context.Context, q string, args ...any) (int64, error)
	// QueryRows runs a query and calls each once per row with that row's Scan.
	QueryRows(ctx context.Context, q string, each func(scan func(dest ...any) error) error, args ...any) error
	// IsUniqueViolation reports whether err is a unique-constraint violation.
	IsUniqueViolation(err error) bool
}

// SQLStore is the Store over the x402_settlements table (created by the numbered
// migrations of both backends). Times are stored as Unix milliseconds so both dialects compare
// them identically.
type SQLStore struct {
	db     SQLDB
	dollar bool
}

// NewSQLStore returns a SQLStore; dollar selects $N placeholders (PostgreSQL) over ?N (SQLite).
func NewSQLStore(db SQLDB, dollar bool) *SQLStore { return &SQLStore{db: db, dollar: dollar} }

func (s *SQLStore) q(sql string) string {
	if s.dollar {
		return strings.ReplaceAll(sql, "?", "$")
	}
	return sql
}

const settlementCols = `tx_sig, challenge, challenge_expiry_ms, payer, network, blockhash, expiry_height,
status, reason, fee_lamports, slot, claims, ledger_id, created_ms, updated_ms, settled_ms, amount_units`

func ms(t time.Time) int64 { return t.UnixMilli() }

func msPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := t.UnixMilli()
	return &v
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func args(r *Settlement) []any {
	return []any{r.TxSig, r.Challenge, ms(r.ChallengeExpiry), r.Payer, r.Network, r.Blockhash, int64(r.ExpiryHeight),
		string(r.Status), r.Reason, r.FeeLamports, int64(r.Slot), r.Claims, r.LedgerID, ms(r.CreatedAt), ms(r.UpdatedAt), msPtr(r.SettledAt),
		int64(r.AmountUnits)}
}

// Reserve implements Store.
func (s *SQLStore) Reserve(ctx context.Context, r *Settlement) (*Settlement, error) {
	n, err := s.db.Exec(ctx, s.q(`INSERT INTO x402_settlements (`+settlementCols+`)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
ON CONFLICT (tx_sig) DO NOTHING`), args(r)...)
	if err != nil {
		if s.db.IsUniqueViolation(err) {
			return nil, s.whichUnique(ctx, r)
		}
		return nil, fmt.Errorf("settlement: reserve settlement: %w", err)
	}
	if n == 1 {
		return nil, nil
	}
	ex, err := s.Get(ctx, r.TxSig)
	if err != nil {
		return nil, err
	}
	return ex, nil
}

// whichUnique names the unique rule a write of r broke: the payer's one in-flight payment
// (index of migration 0091) or the challenge's one live payment.
func (s *SQLStore) whichUnique(ctx context.Context, r *Settlement) error {
	busy := false
	err := s.db.QueryRows(ctx, s.q(`SELECT tx_sig FROM x402_settlements WHERE payer = ?1 AND tx_sig <> ?2
AND status IN ('reserved', 'submitted') LIMIT 1`), func(scan func(dest ...any) error) error {
		busy = true
		return nil
	}, r.Payer, r.TxSig)
	if err == nil && busy && inFlight(r.Status) {
		return ErrPayerBusy
	}
	return ErrChallengeUsed
}

// Update implements Store.
func (s *SQLStore) Update(ctx context.Context, r *Settlement, from Status) (bool, error) {
	a := args(r)
	a = append(a, string(from))
	n, err := s.db.Exec(ctx, s.q(`UPDATE x402_settlements SET challenge = ?2, challenge_expiry_ms = ?3, payer = ?4,
network = ?5, blockhash = ?6, expiry_height = ?7, status = ?8, reason = ?9, fee_lamports = ?10, slot = ?11,
claims = ?12, ledger_id = ?13, created_ms = ?14, updated_ms = ?15, settled_ms = ?16, amount_units = ?17
WHERE tx_sig = ?1 AND status = ?18`), a...)
	if err != nil {
		if s.db.IsUniqueViolation(err) {
			return false, s.whichUnique(ctx, r)
		}
		return false, fmt.Errorf("settlement: update settlement: %w", err)
	}
	return n == 1, nil
}

// Claim implements Store (same condition as ClaimRule.Allows, in one statement).
func (s *SQLStore) Claim(ctx context.Context, txSig string, rule ClaimRule) (bool, error) {
	n, err := s.db.Exec(ctx, s.q(`UPDATE x402_settlements SET claims = claims + 1, updated_ms = ?2, reason = ''
WHERE tx_sig = ?1 AND status = 'settled' AND claims < ?3 AND settled_ms IS NOT NULL AND settled_ms >= ?4
  AND (claims = 0 OR updated_ms <= ?5 OR reason = ?6)`),
		txSig, ms(rule.Now), rule.MaxClaims, ms(rule.SettledAfter), ms(rule.IdleBefore), ReasonUndelivered)
	if err != nil {
		return false, fmt.Errorf("settlement: claim settlement: %w", err)
	}
	return n == 1, nil
}

func (s *SQLStore) query(ctx context.Context, where string, a ...any) ([]*Settlement, error) {
	var out []*Settlement
	each := func(scan func(dest ...any) error) error {
		var r Settlement
		var status string
		var chExp, eh, slot, created, updated, amount int64
		var settled *int64
		if err := scan(&r.TxSig, &r.Challenge, &chExp, &r.Payer, &r.Network, &r.Blockhash, &eh, &status, &r.Reason,
			&r.FeeLamports, &slot, &r.Claims, &r.LedgerID, &created, &updated, &settled, &amount); err != nil {
			return err
		}
		r.AmountUnits = uint64(amount)
		r.Status, r.ChallengeExpiry, r.ExpiryHeight, r.Slot = Status(status), fromMS(chExp), uint64(eh), uint64(slot)
		r.CreatedAt, r.UpdatedAt = fromMS(created), fromMS(updated)
		if settled != nil {
			t := fromMS(*settled)
			r.SettledAt = &t
		}
		out = append(out, &r)
		return nil
	}
	if err := s.db.QueryRows(ctx, s.q(`SELECT `+settlementCols+` FROM x402_settlements `+where), each, a...); err != nil {
		return nil, fmt.Errorf("settlement: read settlements: %w", err)
	}
	return out, nil
}

// Get implements Store.
func (s *SQLStore) Get(ctx context.Context, txSig string) (*Settlement, error) {
	rows, err := s.query(ctx, `WHERE tx_sig = ?1`, txSig)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	return rows[0], nil
}

// List implements Store.
func (s *SQLStore) List(ctx context.Context, status Status, limit int) ([]*Settlement, error) {
	if limit <= 0 {
		limit = 1000
	}
	return s.query(ctx, `WHERE status = ?1 ORDER BY updated_ms, tx_sig LIMIT ?2`, string(status), limit)
}

// FailedFees implements Store.
func (s *SQLStore) FailedFees(ctx context.Context, payer string, since time.Time, limit int) ([]FailedFee, error) {
	if limit <= 0 {
		limit = 1000
	}
	var out []FailedFee
	err := s.db.QueryRows(ctx, s.q(`SELECT fee_lamports, updated_ms FROM x402_settlements
WHERE status = 'failed' AND updated_ms > ?1 AND (?2 = '' OR payer = ?2) AND reason <> ?3 ORDER BY updated_ms LIMIT ?4`),
		func(scan func(dest ...any) error) error {
			var f FailedFee
			var at int64
			if err := scan(&f.Lamports, &at); err != nil {
				return err
			}
			f.At = fromMS(at)
			out = append(out, f)
			return nil
		}, ms(since), payer, ReasonRefunded, limit)
	if err != nil {
		return nil, fmt.Errorf("settlement: read failed fees: %w", err)
	}
	return out, nil
}

// Sweep implements Store: one bounded DELETE with the condition of Retention.Sweepable.
func (s *SQLStore) Sweep(ctx context.Context, now time.Time, rt Retention, batch int) (int64, error) {
	done, failed := ms(now.Add(-rt.Done)), ms(now.Add(-rt.Failed))
	n, err := s.db.Exec(ctx, s.q(`DELETE FROM x402_settlements WHERE tx_sig IN (SELECT tx_sig FROM x402_settlements
WHERE updated_ms <= ?1 AND challenge_expiry_ms <= ?1
  AND (status IN ('delivered', 'released') OR (status = 'failed' AND (reason = ?2 OR updated_ms <= ?3)))
LIMIT ?4)`), done, ReasonRefunded, failed, batch)
	if err != nil {
		return 0, fmt.Errorf("settlement: sweep settlements: %w", err)
	}
	return n, nil
}
