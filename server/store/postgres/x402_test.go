package postgres_test

import (
	"context"
	"testing"

	"github.com/scopehygiene/scope-hygiene/server/store/postgres"
	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/server/x402/x402test"
)

func TestX402SettlementStore(t *testing.T) {
	x402test.RunStoreSuite(t, func(t *testing.T) x402.SettlementStore {
		s, err := postgres.Open(context.Background(), freshSchema(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s.Settlements()
	})
}
