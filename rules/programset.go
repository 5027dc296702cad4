package rules

import (
	"time"

	"cel.dev/cel-go/interpreter"
)

// Factors are the five factors in report order.
var Factors = []string{"scope_presence", "unscoped_rate", "cross_scope_clusters", "scope_conflicts", "duplicates"}

func factorIndex(f string) int {
	for i, x := range Factors {
		if x == f {
			return i
		}
	}
	return -1
}

// The per-record predicates the evaluator reads, in the phases the criteria file groups them.
var (
	recordSlots = []string{"split_state", "contested", "template", "source_passage", "eligible", "m1", "m3",
		"cycle_anchor", "malformed_marker", "non_sharing"}
	markSlots = []string{"covered", "contradiction"}
)

// Slot names one per-record predicate.
type Slot int

// The slots, by name. Their expressions live in criteria.yaml (record.predicates, record.marks).
const (
	SplitState Slot = iota
	Contested
	Template
	SourcePassage
	Eligible
	M1
	M3
	CycleAnchor
	MalformedMarker
	NonSharing
	Covered
	Contradiction
	numSlots
)

func slotName(s Slot) string {
	if int(s) < len(recordSlots) {
		return recordSlots[s]
	}
	return markSlots[int(s)-len(recordSlots)]
}

// ProgramSet is a compiled criteria revision: immutable, safe for concurrent use, identified by
// criteria id, revision and the SHA-256 of the criteria file.
type ProgramSet struct {
	c      *Criteria
	name   string
	source []byte
	digest string

	liveness    []*Program
	recordPreds []*Program // phase 1 then marks, in file order
	phase1      int        // recordPreds[:phase1] are record.predicates
	slotIndex   map[string]int
	slotOf      [numSlots]int // Slot -> index into recordPreds

	conflicts       []ConflictProgram
	clusterForms    *Program
	templateLineage *Program
	b5Runs          *Program
	precedence      []PrecedenceProgram
	gates           [5][]GateProgram

	fast fastPrograms
}

// ConflictProgram is one compiled conflict sub-check.
type ConflictProgram struct {
	ID       string
	Applies  *Program
	Conflict *Program
}

// PrecedenceProgram is one compiled step of the cluster decision precedence.
type PrecedenceProgram struct {
	ID string
	// Name is the step's published name ("" when the criteria give none).
	Name string
	// Refer lists the copies of a cluster this rule decides under scope_conflicts.
	Refer     bool
	Class     string
	Reason    string
	Statement string
	When      *Program
}

// GateProgram is one compiled assessability gate.
type GateProgram struct {
	Reason     string
	KeepCounts bool
	When       *Program
}

// Criteria returns the decoded criteria. Callers must not modify it.
func (ps *ProgramSet) Criteria() *Criteria { return ps.c }

// ID is the criteria id.
func (ps *ProgramSet) ID() string { return ps.c.CriteriaID }

// Revision is the criteria revision.
func (ps *ProgramSet) Revision() string { return ps.c.CriteriaRevision }

// Digest is "sha256:<hex>" of the criteria file's bytes.
func (ps *ProgramSet) Digest() string { return ps.digest }

// Source is the criteria file's bytes.
func (ps *ProgramSet) Source() []byte { return append([]byte(nil), ps.source...) }

// Name is the file name the criteria were loaded from.
func (ps *ProgramSet) Name() string { return ps.name }

// BodyCap is the published request-body cap in bytes.
func (ps *ProgramSet) BodyCap() int { return ps.c.Caps.BodyBytes }

// FreeTier returns the free pre-check allowance.
func (ps *ProgramSet) FreeTier() (perDay int, minInterval time.Duration) {
	return ps.c.FreeTier.PerDay, time.Duration(ps.c.FreeTier.MinIntervalMS) * time.Millisecond
}

// PriceUnits is the price of one audit in USDC base units.
func (ps *ProgramSet) PriceUnits() int64 { return ps.c.Price.USDCUnitsPerCall }

// PriceLabel is the published price label.
func (ps *ProgramSet) PriceLabel() string { return ps.c.Price.Label }

// Liveness are the liveness conditions in file order.
func (ps *ProgramSet) Liveness() []*Program { return ps.liveness }

// RecordPredicates are the per-record predicates in file order (record.predicates, then marks).
func (ps *ProgramSet) RecordPredicates() []*Program { return ps.recordPreds }

// PredicateCount is how many of RecordPredicates are record.predicates; the rest are record.marks.
func (ps *ProgramSet) PredicateCount() int { return ps.phase1 }

// Conflicts are the conflict sub-checks in file order.
func (ps *ProgramSet) Conflicts() []ConflictProgram { return ps.conflicts }

// ClusterForms, TemplateLineage and B5Runs are the named cluster predicates.
func (ps *ProgramSet) ClusterForms() *Program    { return ps.clusterForms }
func (ps *ProgramSet) TemplateLineage() *Program { return ps.templateLineage }
func (ps *ProgramSet) B5Runs() *Program          { return ps.b5Runs }

// Precedence is the cluster decision precedence in order.
func (ps *ProgramSet) Precedence() []PrecedenceProgram { return ps.precedence }

// Gates are the gates of one factor in order.
func (ps *ProgramSet) Gates(factor string) []GateProgram {
	i := factorIndex(factor)
	if i < 0 {
		return nil
	}
	return ps.gates[i]
}

// Programs lists every compiled program of the set, in file order within each section.
func (ps *ProgramSet) Programs() []*Program {
	var out []*Program
	out = append(out, ps.liveness...)
	out = append(out, ps.recordPreds...)
	for _, c := range ps.conflicts {
		out = append(out, c.Applies, c.Conflict)
	}
	out = append(out, ps.clusterForms, ps.templateLineage, ps.b5Runs)
	for _, p := range ps.precedence {
		out = append(out, p.When)
	}
	for _, gs := range ps.gates {
		for _, g := range gs {
			out = append(out, g.When)
		}
	}
	return out
}

// Scope identifies an evaluation's family, form and variant.
type Scope struct {
	Family, Form, Variant string
}

// resolve answers the variables every criteria expression may use.
func (s *Scope) resolve(name string) (any, bool) {
	switch name {
	case "family":
		return s.Family, true
	case "form":
		return s.Form, true
	case "variant":
		return s.Variant, true
	}
	return nil, false
}

// RecordActivation is the input of the per-record programs. One is reused per record to keep the
// request path free of per-record maps.
type RecordActivation struct {
	Scope
	// Obs, when set, sees every evaluation (coverage, explain).
	Obs    Observer
	Record *Record
	Live   bool
	vals   SlotValues
	index  map[string]int
	ps     *ProgramSet
	memo   [numFused]memo // this export's fused results, by input projection
	stage  map[string]stageResult
	elem   map[string]bool // each program's results (elemmemo.go)
	ks     keyState
}

// NewRecordActivation returns an activation bound to this program set.
func (ps *ProgramSet) NewRecordActivation(s Scope) *RecordActivation {
	return &RecordActivation{Scope: s, index: ps.slotIndex, ps: ps}
}

// ResolveName implements interpreter.Activation.
func (a *RecordActivation) ResolveName(name string) (any, bool) {
	switch name {
	case "record":
		return a.Record, true
	case "live":
		return a.Live, true
	}
	if i, ok := a.index[name]; ok {
		return a.vals[i], true
	}
	return a.Scope.resolve(name)
}

// Parent implements interpreter.Activation.
func (a *RecordActivation) Parent() interpreter.Activation { return nil }

// SlotValues holds one record's predicate values, indexed like ProgramSet.RecordPredicates.
type SlotValues [numSlots]bool

// Values returns the current record's predicate values.
func (a *RecordActivation) Values() SlotValues { return a.vals }

// Restore makes a record current again: its facts, liveness and predicate values.
func (a *RecordActivation) Restore(r *Record, live bool, v SlotValues) {
	a.Record, a.Live, a.vals = r, live, v
}

// Get returns a slot's value after EvalRecord / EvalMarks.
func (a *RecordActivation) Get(s Slot) bool { return a.vals[a.ps.slotOf[s]] }

// EvalLiveness evaluates the liveness conditions for a.Record and sets a.Live. It stops at the
// first condition that holds; fired receives its index (or -1 when the record is live).
func (ps *ProgramSet) EvalLiveness(a *RecordActivation) (fired int, err error) {
	var anyCond [1]bool
	if ps.evalWhole(fusedLive, a, anyCond[:]) && !anyCond[0] {
		a.Live = true
		return -1, nil
	}
	hit, key, memo := ps.fusedLookup(fusedLive, a, anyCond[:])
	if hit && !anyCond[0] {
		a.Live = true
		return -1, nil
	}
	// A record that is not live, or no answer yet: the individual conditions say which.
	fired = -1
	for i, p := range ps.liveness {
		b, err := a.memoBool(p)
		if err != nil {
			return -1, err
		}
		if b {
			fired = i
			break
		}
	}
	a.Live = fired < 0
	if memo && !hit {
		anyCond[0] = fired >= 0
		ps.fusedStore(fusedLive, a, key, anyCond[:])
	}
	return fired, nil
}

// evalPreds evaluates recordPreds[from:to] in file order into a.vals, from the fused program k's
// memo when it can.
func (ps *ProgramSet) evalPreds(k int, a *RecordActivation, from, to int) error {
	out := a.vals[from:to]
	if ps.evalWhole(k, a, out) {
		return nil
	}
	hit, key, memo := ps.fusedLookup(k, a, out)
	if hit {
		return nil
	}
	for i := from; i < to; i++ {
		b, err := a.memoBool(ps.recordPreds[i])
		if err != nil {
			return err
		}
		a.vals[i] = b
	}
	if memo {
		ps.fusedStore(k, a, key, out)
	}
	return nil
}

// EvalRecord evaluates record.predicates (phase 1) in file order.
func (ps *ProgramSet) EvalRecord(a *RecordActivation) error {
	return ps.evalPreds(fusedPreds, a, 0, ps.phase1)
}

// EvalMarks evaluates record.marks (after the M4 walk has set a.Record.M4Resolves).
func (ps *ProgramSet) EvalMarks(a *RecordActivation) error {
	return ps.evalPreds(fusedMarks, a, ps.phase1, len(ps.recordPreds))
}

// EvalApplies reports, as a bit mask over Conflicts(), which conflict sub-checks apply to the
// current record.
func (ps *ProgramSet) EvalApplies(a *RecordActivation) (uint32, error) {
	var buf [32]bool
	out := buf[:len(ps.conflicts)]
	if ps.evalWhole(fusedApplies, a, out) {
		return mask(out), nil
	}
	hit, key, memo := ps.fusedLookup(fusedApplies, a, out)
	if hit {
		return mask(out), nil
	}
	for j, c := range ps.conflicts {
		b, err := a.memoBool(c.Applies)
		if err != nil {
			return 0, err
		}
		out[j] = b
	}
	if memo {
		ps.fusedStore(fusedApplies, a, key, out)
	}
	return mask(out), nil
}

// EvalConflicts reports, as a bit mask over Conflicts(), which conflict sub-checks the current
// record fails among those in applies (its EvalApplies mask).
func (ps *ProgramSet) EvalConflicts(a *RecordActivation, applies uint32) (uint32, error) {
	var buf [32]bool
	out := buf[:len(ps.conflicts)]
	if ps.evalWhole(fusedConflicts, a, out) {
		return mask(out) & applies, nil
	}
	hit, key, memo := ps.fusedLookup(fusedConflicts, a, out)
	if hit {
		return mask(out) & applies, nil
	}
	if !memo {
		for j, c := range ps.conflicts {
			if applies&(1<<j) == 0 {
				continue
			}
			b, err := c.Conflict.Bool(a)
			if err != nil {
				return 0, err
			}
			out[j] = b
		}
		return mask(out), nil
	}
	// What the memo keeps is the fused program's own answer, applies && conflict per sub-check,
	// whatever mask this caller passed: the sub-check's applicability is read from its own
	// (memoized) program, and the conflict runs only where it applies, as && does.
	for j, c := range ps.conflicts {
		b, err := a.memoBool(c.Applies)
		if err != nil {
			return 0, err
		}
		if b {
			if b, err = a.memoBool(c.Conflict); err != nil {
				return 0, err
			}
		}
		out[j] = b
	}
	ps.fusedStore(fusedConflicts, a, key, out)
	return mask(out) & applies, nil
}

func mask(bs []bool) uint32 {
	var m uint32
	for j, b := range bs {
		if b {
			m |= 1 << j
		}
	}
	return m
}

// ClusterActivation is the input of the cluster programs.
type ClusterActivation struct {
	Scope
	Obs     Observer
	Cluster *Cluster
	// Facts is room for the cluster being decided, that Cluster may point at: one per export
	// instead of one allocation per cluster.
	Facts Cluster
	B5    bool
	// memo holds the decisions already made for this export: the cluster programs are a pure
	// function of the Cluster facts (and of family, form and variant, fixed in one export), so
	// clusters with equal facts are decided once. Reuse one activation per export to use it.
	memo map[Cluster]ClusterDecision
	// memoCode is memo keyed by the order key's code when the programs have one (clusterkey.go).
	memoCode map[clusterCode]ClusterDecision
	// elem and elemCode hold each program's results (elemmemo.go).
	elem     map[clusterElemKey]bool
	elemCode map[clusterElemCode]bool
}

// ResolveName implements interpreter.Activation.
func (a *ClusterActivation) ResolveName(name string) (any, bool) {
	switch name {
	case "cluster":
		return a.Cluster, true
	case "b5_runs":
		return a.B5, true
	}
	return a.Scope.resolve(name)
}

// Parent implements interpreter.Activation.
func (a *ClusterActivation) Parent() interpreter.Activation { return nil }

// SubmissionActivation is the input of the gates.
type SubmissionActivation struct {
	Scope
	Obs        Observer
	Submission *Submission
}

// ResolveName implements interpreter.Activation.
func (a *SubmissionActivation) ResolveName(name string) (any, bool) {
	if name == "submission" {
		return a.Submission, true
	}
	return a.Scope.resolve(name)
}

// Parent implements interpreter.Activation.
func (a *SubmissionActivation) Parent() interpreter.Activation { return nil }

// Gate resolves a factor's status: the first gate that holds, or nil (ASSESSABLE).
func (ps *ProgramSet) Gate(factor string, a *SubmissionActivation) (*GateProgram, error) {
	gs := ps.Gates(factor)
	for i := range gs {
		b, err := gs[i].When.Bool(a)
		if err != nil {
			return nil, err
		}
		if b {
			return &gs[i], nil
		}
	}
	return nil, nil
}

// EvalGates resolves every factor's status (in Factors order): the first gate that holds, or nil.
func (ps *ProgramSet) EvalGates(a *SubmissionActivation) ([5]*GateProgram, error) {
	var out [5]*GateProgram
	n := 0
	for _, gs := range ps.gates {
		n += len(gs)
	}
	vals := make([]bool, n)
	if a.Obs == nil && evalList(ps.fast.gates, a, vals) {
		k := 0
		for f, gs := range ps.gates {
			for i := range gs {
				if vals[k] && out[f] == nil {
					out[f] = &ps.gates[f][i]
				}
				k++
			}
		}
		return out, nil
	}
	for f, name := range Factors {
		g, err := ps.Gate(name, a)
		if err != nil {
			return out, err
		}
		out[f] = g
	}
	return out, nil
}

// ClusterDecision is what the cluster rules say of one content key's records.
type ClusterDecision struct {
	Forms, TemplateLineage, B5Runs bool
	// Rule is the precedence rule that decided, nil when the key forms no cluster or a
	// template-lineage one.
	Rule *PrecedenceProgram
}

// EvalCluster runs the cluster rules: forms, template_lineage, b5_runs, then the precedence in
// order. It sets a.B5. A precedence with no rule that holds is a rule failure.
func (ps *ProgramSet) EvalCluster(a *ClusterActivation) (ClusterDecision, error) {
	a.B5 = false
	if a.Obs != nil {
		return ps.evalCluster(a)
	}
	eval := func() (ClusterDecision, error) { return ps.evalCluster(a) }
	var d ClusterDecision
	var err error
	if ps.fast.clusterKey.ok {
		d, err = remember(&a.memoCode, ps.fast.clusterKey.code(a.Cluster), eval)
	} else {
		d, err = remember(&a.memo, *a.Cluster, eval)
	}
	if err == nil {
		a.B5 = d.B5Runs // as evalCluster set it, for a remembered decision too
	}
	return d, err
}

// evalCluster runs the author's cluster programs in their order, each memoized on what it
// compares (memoBool; with an observer each runs).
func (ps *ProgramSet) evalCluster(a *ClusterActivation) (ClusterDecision, error) {
	var d ClusterDecision
	var err error
	if d.Forms, err = a.memoBool(ps.clusterForms); err != nil || !d.Forms {
		return d, err
	}
	if d.TemplateLineage, err = a.memoBool(ps.templateLineage); err != nil || d.TemplateLineage {
		return d, err
	}
	if d.B5Runs, err = a.memoBool(ps.b5Runs); err != nil {
		return d, err
	}
	a.B5 = d.B5Runs
	for i := range ps.precedence {
		ok, err := a.memoBool(ps.precedence[i].When)
		if err != nil {
			return d, err
		}
		if ok {
			d.Rule = &ps.precedence[i]
			return d, nil
		}
	}
	return d, &RuleError{Rule: "clusters.precedence", Path: "clusters.precedence", Err: ErrRuleFailed}
}

func (a *RecordActivation) observer() Observer     { return a.Obs }
func (a *ClusterActivation) observer() Observer    { return a.Obs }
func (a *SubmissionActivation) observer() Observer { return a.Obs }

func slotByName(name string) Slot {
	for s := Slot(0); s < numSlots; s++ {
		if slotName(s) == name {
			return s
		}
	}
	return numSlots
}
