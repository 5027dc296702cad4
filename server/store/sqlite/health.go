package sqlite

import (
	"context"
	"fmt"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

var _ store.Checker = (*Store)(nil)

// Ready implements store.Checker.
func (s *Store) Ready(ctx context.Context) error {
	ms, err := store.Migrations(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return store.CheckSchema(ctx, "sqlite", store.MigrationVersion(ms), s.schemaVersion, s.migrate)
}

func (s *Store) schemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: read schema version: %w", err)
	}
	return v, nil
}
