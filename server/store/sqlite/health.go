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
	want := store.MigrationVersion(ms)
	v, err := s.schemaVersion(ctx)
	if err != nil || v < want {
		// A missing or older schema: apply the migrations again, then read back.
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
		return fmt.Errorf("sqlite: schema at migration %d, want %d", v, want)
	}
	return nil
}

func (s *Store) schemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: read schema version: %w", err)
	}
	return v, nil
}
