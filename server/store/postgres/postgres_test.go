package postgres_test

import (
	"context"
	"testing"

	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/postgres"
	"github.com/scopehygiene/scope-hygiene/server/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		dsn := storetest.PostgresDSN(t)
		return func(t *testing.T) store.Store {
			s, err := postgres.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	})
}

// freshSchema is storetest.PostgresDSN (kept for the x402 settlement-store test).
func freshSchema(t *testing.T) string { return storetest.PostgresDSN(t) }

// BenchmarkWrites: the request path's durable writes at 1, 8 and 32 callers (storetest.Bench).
func BenchmarkWrites(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		s, err := postgres.Open(context.Background(), storetest.PostgresDSN(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}
