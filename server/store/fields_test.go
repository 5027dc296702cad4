package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// TestLedgerFieldsAreTheCriteriaList checks the ledger's field labels against the serving
// criteria's custody.ledger_closed_fields, entry for entry. The backends' conformance suites check
// the columns against LedgerFields.
func TestLedgerFieldsAreTheCriteriaList(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, f := range store.LedgerFields {
		labels = append(labels, f.Label)
	}
	if d := cmp.Diff(ps.Criteria().LedgerClosedFields, labels); d != "" {
		t.Fatalf("store.LedgerFields differs from the criteria's closed list (-criteria +store):\n%s", d)
	}
}
