package store

import (
	"context"
	"fmt"
)

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
