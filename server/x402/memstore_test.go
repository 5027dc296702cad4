package x402_test

import (
	"testing"

	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/server/x402/x402test"
)

func TestMemStoreConformance(t *testing.T) {
	x402test.RunStoreSuite(t, func(*testing.T) x402.SettlementStore { return x402.NewMemStore() })
}
