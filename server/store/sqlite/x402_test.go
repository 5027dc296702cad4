package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/server/x402/x402test"
)

func TestX402SettlementStore(t *testing.T) {
	x402test.RunStoreSuite(t, func(t *testing.T) x402.SettlementStore {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s.Settlements()
	})
}
