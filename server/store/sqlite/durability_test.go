package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSynchronousFullOnEveryConnection holds several pooled connections at once and reads the
// synchronous pragma back on each: 2 is FULL (a commit is on disk before the answer).
func TestSynchronousFullOnEveryConnection(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 6
	for i := range n {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close() // held until the end, so each iteration gets a new connection
		var sync int
		var mode string
		if err := conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if sync != 2 || mode != "wal" {
			t.Fatalf("connection %d: synchronous=%d journal_mode=%s, want 2 (FULL) and wal", i, sync, mode)
		}
	}
	if st := s.db.Stats(); st.OpenConnections < n {
		t.Fatalf("only %d connections were opened, want %d", st.OpenConnections, n)
	}
}

// TestReadyMigratesARecreatedDatabase drops every table (a database recreated under a running
// service): Ready applies the migrations again and the store works.
func TestReadyMigratesARecreatedDatabase(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("fresh store not ready: %v", err)
	}
	tables, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if strings.HasPrefix(tb, "sqlite_") {
			continue
		}
		if _, err := s.db.ExecContext(ctx, `DROP TABLE "`+tb+`"`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ListLedger(ctx, 0, 1); err == nil {
		t.Fatal("ledger readable after its table was dropped")
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready after drop: %v", err)
	}
	if _, err := s.ListLedger(ctx, 0, 1); err != nil {
		t.Fatalf("ledger after Ready: %v", err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future', 'x')`); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err == nil || !strings.Contains(err.Error(), "ahead") {
		t.Fatalf("a schema ahead of the binary must not be ready, got %v", err)
	}
}

func TestOpenExistingCreatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "var", "db.sqlite")
	if _, err := OpenExisting(context.Background(), path); err == nil {
		t.Fatal("OpenExisting opened a store that does not exist")
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenExisting created %s", filepath.Dir(path))
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatalf("existing store: %v", err)
	}
	s.Close()
}
