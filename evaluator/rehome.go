package evaluator

import (
	"strings"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// rehome moves the strings of the export that an answer keeps (record ids, family, form,
// variant, declared scope keys) out of the caller's body they alias, which Audit and Precheck read
// where it lies and the caller may reuse once the call returns: the ids into one new string, the
// rest cloned. Scope strings are the export's own already (intern).
func (x *export) rehome() {
	x.scope = rules.Scope{Family: strings.Clone(x.scope.Family), Form: strings.Clone(x.scope.Form), Variant: strings.Clone(x.scope.Variant)}
	if x.keySource == "manifest" {
		for i, k := range x.keys {
			x.keys[i] = strings.Clone(k)
		}
	}
	if x.idsOwned {
		return // the read-once path copied them as it read them
	}
	n := 0
	for i := range x.records {
		n += len(x.records[i].id)
	}
	var sb strings.Builder
	sb.Grow(n)
	for i := range x.records {
		sb.WriteString(x.records[i].id)
	}
	ids := sb.String()
	at := 0
	for i := range x.records {
		r := &x.records[i]
		r.id = ids[at : at+len(r.id)]
		at += len(r.id)
	}
}
