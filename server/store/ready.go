package store

import (
	"context"
	"fmt"
	"io/fs"
)

// Ready is the Checker.Ready both backends share: it reads the migrations under "migrations"
// in fsys, reads the schema version with scan (which runs query and scans its one int into v)
// and hands both to CheckSchema with migrate. name prefixes the errors.
func Ready(ctx context.Context, name string, fsys fs.FS, scan func(ctx context.Context, query string, v *int) error, migrate func(context.Context) error) error {
	ms, err := Migrations(fsys, "migrations")
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	version := func(ctx context.Context) (int, error) {
		var v int
		if err := scan(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`, &v); err != nil {
			return 0, fmt.Errorf("%s: read schema version: %w", name, err)
		}
		return v, nil
	}
	return CheckSchema(ctx, name, MigrationVersion(ms), version, migrate)
}

// CheckSchema is the readiness check both backends share: it reads the schema version, applies
// the migrations again when the schema is missing or older (a database dropped and recreated),
// and reports a schema still behind or ahead of want. name prefixes the errors.
func CheckSchema(ctx context.Context, name string, want int, version func(context.Context) (int, error), migrate func(context.Context) error) error {
	v, err := version(ctx)
	if err != nil || v < want {
		if err := migrate(ctx); err != nil {
			return err
		}
		if v, err = version(ctx); err != nil {
			return err
		}
	}
	switch {
	case v > want:
		return ErrSchemaAhead
	case v < want:
		return fmt.Errorf("%s: schema at migration %d, want %d", name, v, want)
	}
	return nil
}

// HasTable is the check DumpTable starts with in both backends: the error of tables, or
// ErrNotFound unless table is among the tables it lists.
func HasTable(ctx context.Context, tables func(context.Context) ([]string, error), table string) error {
	ts, err := tables(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, t := range ts {
		found = found || t == table
	}
	if !found {
		return ErrNotFound
	}
	return nil
}
