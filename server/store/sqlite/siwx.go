package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/settlement"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// ConsumeNonce implements siwx.NonceStore: one INSERT, so two replicas racing on one nonce
// cannot both win.
func (s *Store) ConsumeNonce(ctx context.Context, nonce string, expires time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO siwx_nonces (nonce, expires_ms) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING`,
		nonce, expires.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("sqlite: consume nonce: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite: consume nonce: %w", err)
	}
	return n == 1, nil
}

// Sweep implements store.Sweeper: at most batch expired nonces, batch free-tier rows whose day
// is over and whose interval has passed, and batch finished settlement rows past their retention.
func (s *Store) Sweep(ctx context.Context, now time.Time, minInterval time.Duration, batch int) (store.SweepResult, error) {
	var r store.SweepResult
	res, err := s.db.ExecContext(ctx, `DELETE FROM siwx_nonces WHERE nonce IN (SELECT nonce FROM siwx_nonces WHERE expires_ms <= ? LIMIT ?)`,
		now.UnixMilli(), batch)
	if err != nil {
		return r, fmt.Errorf("sqlite: sweep nonces: %w", err)
	}
	n, _ := res.RowsAffected()
	r.Nonces = n
	res, err = s.db.ExecContext(ctx, `DELETE FROM free_tier WHERE caller_key IN (SELECT caller_key FROM free_tier WHERE day < ? AND last_ms <= ? LIMIT ?)`,
		store.Day(now), now.Add(-minInterval).UnixMilli(), batch)
	if err != nil {
		return r, fmt.Errorf("sqlite: sweep free tier: %w", err)
	}
	n, _ = res.RowsAffected()
	r.FreeTier = n
	n, err = s.Settlements().Sweep(ctx, now, settlement.DefaultRetention, batch)
	if err != nil {
		return r, fmt.Errorf("sqlite: %w", err)
	}
	r.Settlements = n
	res, err = s.db.ExecContext(ctx, `DELETE FROM write_keys WHERE wkey IN (SELECT wkey FROM write_keys WHERE expires_ms <= ? LIMIT ?)`,
		now.UnixMilli(), batch)
	if err != nil {
		return r, fmt.Errorf("sqlite: sweep write keys: %w", err)
	}
	n, _ = res.RowsAffected()
	r.WriteKeys = n
	return r, nil
}
