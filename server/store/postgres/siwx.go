package postgres

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
	ctx, cancel := bound(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `INSERT INTO siwx_nonces (nonce, expires_ms) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING`,
		nonce, expires.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("postgres: consume nonce: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Sweep implements store.Sweeper: at most batch expired nonces, batch free-tier rows whose day
// is over and whose interval has passed, and batch finished settlement rows past their retention.
func (s *Store) Sweep(ctx context.Context, now time.Time, minInterval time.Duration, batch int) (store.SweepResult, error) {
	var r store.SweepResult
	tag, err := s.pool.Exec(ctx, `DELETE FROM siwx_nonces WHERE nonce IN (SELECT nonce FROM siwx_nonces WHERE expires_ms <= $1 LIMIT $2)`,
		now.UnixMilli(), batch)
	if err != nil {
		return r, fmt.Errorf("postgres: sweep nonces: %w", err)
	}
	r.Nonces = tag.RowsAffected()
	tag, err = s.pool.Exec(ctx, `DELETE FROM free_tier WHERE caller_key IN (SELECT caller_key FROM free_tier WHERE day < $1::date AND last_ms <= $2 LIMIT $3)`,
		store.Day(now), now.Add(-minInterval).UnixMilli(), batch)
	if err != nil {
		return r, fmt.Errorf("postgres: sweep free tier: %w", err)
	}
	r.FreeTier = tag.RowsAffected()
	n, err := s.Settlements().Sweep(ctx, now, settlement.DefaultRetention, batch)
	if err != nil {
		return r, fmt.Errorf("postgres: %w", err)
	}
	r.Settlements = n
	tag, err = s.pool.Exec(ctx, `DELETE FROM write_keys WHERE wkey IN (SELECT wkey FROM write_keys WHERE expires_ms <= $1 LIMIT $2)`,
		now.UnixMilli(), batch)
	if err != nil {
		return r, fmt.Errorf("postgres: sweep write keys: %w", err)
	}
	r.WriteKeys = tag.RowsAffected()
	return r, nil
}
