package rules

import (
	"time"
)

// MutLogSet is a compiled mutation-log criteria revision: immutable and safe for concurrent use.
type MutLogSet struct {
	c         *MutLogCriteria
	digest    string
	source    []byte
	name      string
	decisions map[string][]*Program
	uses      map[string]*eventUse // what each subject's predicates read (mutlog_memo.go)
	gates     map[string][]GateProgram
	dna       []GateProgram
	facts     map[string][]GateProgram
	declared  []DeclaredFact
}

// Criteria is the criteria as written.
func (ms *MutLogSet) Criteria() *MutLogCriteria { return ms.c }

// ID is the criteria id.
func (ms *MutLogSet) ID() string { return ms.c.CriteriaID }

// Revision is the criteria revision.
func (ms *MutLogSet) Revision() string { return ms.c.CriteriaRevision }

// Digest is "sha256:<hex>" of the criteria file's bytes.
func (ms *MutLogSet) Digest() string { return ms.digest }

// Kind is KindMutationLog.
func (ms *MutLogSet) Kind() string { return KindMutationLog }

// Source is a copy of the criteria file's bytes.
func (ms *MutLogSet) Source() []byte { return append([]byte(nil), ms.source...) }

// Name is the file name the set was loaded from.
func (ms *MutLogSet) Name() string { return ms.name }

// BodyCap is the request body cap in bytes.
func (ms *MutLogSet) BodyCap() int { return ms.c.Caps.BodyBytes }

// FreeTier is the free allowance per caller.
func (ms *MutLogSet) FreeTier() (perDay int, minInterval time.Duration) {
	return ms.c.FreeTier.PerDay, time.Duration(ms.c.FreeTier.MinIntervalMS) * time.Millisecond
}

// PriceUnits is the price of one audit in USDC base units (0: unpriced, served free).
func (ms *MutLogSet) PriceUnits() int64 { return ms.c.Price.USDCUnitsPerCall }

// PriceLabel is the price as printed.
func (ms *MutLogSet) PriceLabel() string { return ms.c.Price.Label }

// Decisions are the compiled predicates of one subject, in order (DecisionSlots).
func (ms *MutLogSet) Decisions(subject string) []*Program { return ms.decisions[subject] }

// Gates are the gates of one factor in order.
func (ms *MutLogSet) Gates(factor string) []GateProgram { return ms.gates[factor] }

// Programs lists every compiled program of the set.
func (ms *MutLogSet) Programs() []*Program {
	var out []*Program
	for _, s := range MutLogSubjects {
		out = append(out, ms.decisions[s]...)
	}
	for _, g := range ms.dna {
		out = append(out, g.When)
	}
	for _, f := range MutLogFactors {
		for _, g := range ms.gates[f] {
			out = append(out, g.When)
		}
	}
	for _, f := range MutLogGatedFacts {
		for _, g := range ms.facts[f] {
			out = append(out, g.When)
		}
	}
	return out
}

// FactGates are the gates of one gated fact (MutLogGatedFacts) in order.
func (ms *MutLogSet) FactGates(fact string) []GateProgram { return ms.facts[fact] }

// Declared are the compiled declarations, by fact name.
func (ms *MutLogSet) Declared() []DeclaredFact { return ms.declared }

// DoesNotApplyGates are the does_not_apply gates in order.
func (ms *MutLogSet) DoesNotApplyGates() []GateProgram { return ms.dna }

// Document is the published criteria document: every member of the file as JSON, the decisions
// with their expressions in order, and the criteria digest.
func (ms *MutLogSet) Document() (map[string]any, error) {
	doc, err := documentOf(ms.c, ms.digest)
	if err != nil {
		return nil, err
	}
	dec := map[string]any{}
	for _, s := range MutLogSubjects {
		var list []documentedRule
		for i, p := range ms.decisions[s] {
			list = append(list, documentedRule{mutLogSlots[s][i], p.Expr.Text})
		}
		dec[s] = list
	}
	doc["decisions"] = dec
	return doc, nil
}
