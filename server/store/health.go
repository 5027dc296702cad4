package store

import (
	"context"
	"errors"
	"net"
	"strconv"
)

// Checker is implemented by every backend: the readiness probe and the schema re-check.
type Checker interface {
	// Ready makes one round trip to the database and checks that the schema is at the
	// expected migration. A schema that is behind (a database dropped and recreated) is
	// migrated again first, so the service recovers without a restart.
	Ready(ctx context.Context) error
}

// ErrSchemaAhead means the database holds migrations this binary does not know.
var ErrSchemaAhead = errors.New("store: schema is ahead of this binary")

// MigrationVersion is the highest version among ms (0 when empty): the version a ready
// schema is at.
func MigrationVersion(ms []Migration) int {
	v := 0
	for _, m := range ms {
		v = max(v, m.Version)
	}
	return v
}

// Cause names the kind of a store error for a log line: a fixed word, a database error code or
// a number, never the error's text (which can quote values).
func Cause(err error) string {
	var sqlState interface{ SQLState() string }
	var coded interface{ Code() int }
	var netErr net.Error
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, ErrSchemaAhead):
		return "schema_ahead"
	case errors.As(err, &sqlState):
		return "sqlstate_" + sqlState.SQLState()
	case errors.As(err, &coded):
		return "sqlite_" + strconv.Itoa(coded.Code())
	case errors.As(err, &netErr):
		if netErr.Timeout() {
			return "timeout"
		}
		return "connection"
	}
	return "other"
}
