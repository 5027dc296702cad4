package postgres

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
		return fmt.Errorf("postgres: %w", err)
	}
	want := store.MigrationVersion(ms)
	v, err := s.schemaVersion(ctx)
	if err != nil || v < want {
		// A missing or older schema (a database dropped and recreated): migrate again.
		if err := s.migrate(ctx); err != nil {
			return err
		}
		if v, err = s.schemaVersion(ctx); err != nil {
			return err
		}
	}
	switch {
	case v > want:
		return store.ErrSchemaAhead
	case v < want:
		return fmt.Errorf("postgres: schema at migration %d, want %d", v, want)
	}
	return nil
}

func (s *Store) schemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: read schema version: %w", err)
	}
	return v, nil
}
