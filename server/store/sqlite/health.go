package sqlite

import (
	"context"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

var _ store.Checker = (*Store)(nil)

// Ready implements store.Checker.
func (s *Store) Ready(ctx context.Context) error {
	return store.Ready(ctx, "sqlite", migrations, func(ctx context.Context, query string, v *int) error {
		return s.db.QueryRowContext(ctx, query).Scan(v)
	}, s.migrate)
}
