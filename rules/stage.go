package rules

// The record stage's memo. Before an audit, every record runs three fused programs in turn
// (liveness, predicates, conflict applicability); each was memoized on its own projection, so a
// record built three keys and made three lookups. `live` and the predicate values the later two
// read are themselves functions of the record's facts, so one key over the union of the facts the
// three read decides all three: a record of a class already seen is one key and one lookup, and
// CEL runs once per class.
//
// The union of projections is a refinement of each: two records with the same union key agree on
// every field each program reads, and, when every program compares strings for equality only, on
// the equality relation among all those strings and on the verbatim value of every string equal
// to a literal of any of them; that fixes each program's own key.

// stageResult is what the record stage decides for one class of records.
type stageResult struct {
	live    bool
	vals    SlotValues
	applies uint32
}

// unionProjection is the projection reading every input of ps; live and the slots are left out
// (the stage computes them). ok is false when one of them reads the whole record (no memo).
func unionProjection(ps ...*projection) (projection, bool) {
	u := projection{literals: map[string]bool{}, canon: true}
	at := map[int]int{}
	for _, p := range ps {
		if p.whole {
			return projection{}, false
		}
		u.canon = u.canon && p.canon
		for s := range p.literals {
			u.literals[s] = true
		}
		u.litLens |= p.litLens
		for _, f := range p.fields {
			if k, ok := at[f.index]; ok {
				u.fields[k].subs |= f.subs
				continue
			}
			at[f.index] = len(u.fields)
			u.fields = append(u.fields, f)
		}
	}
	u.indexLiterals()
	return u, true
}

// stageProjection builds the record stage's key once the fused programs are compiled.
func (ps *ProgramSet) stageProjection() {
	r := &ps.fast.record
	for _, k := range []int{fusedLive, fusedPreds, fusedApplies} {
		if r[k].prg == nil {
			return
		}
	}
	ps.fast.stage, ps.fast.stageOK = unionProjection(&r[fusedLive].proj, &r[fusedPreds].proj, &r[fusedApplies].proj)
}

// EvalRecordStage runs the record stage for a.Record: it sets a.Live and the predicate values
// (EvalLiveness, then EvalRecord) and returns the conflict applicability mask (EvalApplies).
// Records of a class already met in this export are answered from the stage's memo. With an
// observer every program runs (coverage sees each).
func (ps *ProgramSet) EvalRecordStage(a *RecordActivation) (uint32, error) {
	var key string
	memo := a.Obs == nil && ps.fast.stageOK
	if memo {
		k := ps.fast.stage.key(a)
		if r, ok := a.stage[string(k)]; ok {
			a.Live, a.vals = r.live, r.vals
			return r.applies, nil
		}
		key = string(k) // the fused programs below reuse the key buffer
	}
	if _, err := ps.EvalLiveness(a); err != nil {
		return 0, err
	}
	if err := ps.EvalRecord(a); err != nil {
		return 0, err
	}
	m, err := ps.EvalApplies(a)
	if err != nil {
		return 0, err
	}
	if memo {
		if a.stage == nil {
			a.stage = map[string]stageResult{}
		}
		a.stage[key] = stageResult{live: a.Live, vals: a.vals, applies: m}
	}
	return m, nil
}
