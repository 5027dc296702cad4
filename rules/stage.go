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

// The union may also take in what the two later programs read (the marks, the conflict checks),
// all but M4Resolves, which the walk sets after the stage: the records of one class then agree on
// every input of those too, except that bit, and their answers are kept per class and bit in
// plain arrays. A record whose class is known (Restore brings it back with its predicate values)
// is then answered by the marks and the conflict checks without building a key, so an audit builds
// one key per record where it built three.

// stageResult is what the record stage decides for one class of records.
type stageResult struct {
	live    bool
	vals    [numSlots]bool
	applies uint32
}

// classes is an activation's record-stage memo: the class of every key met, what the stage
// decided for it, and the later programs' answers per class and M4Resolves.
type classes struct {
	stage   map[string]int32
	results []stageResult
	// marks and conflicts hold, at 2*class + M4Resolves, known | the answer's bits.
	marks, conflicts []uint64
	// class is the current record's class + 1 (0: none), rec the record it was given for;
	// epoch numbers the activation.
	class int32
	rec   *Record
	epoch uint32
}

// known marks an answer held in classes.marks or classes.conflicts.
const known = 1 << 63

// late returns where the current record's answer sits in one of the later programs' arrays (by
// its class and its M4Resolves), growing the array, or nil when the record has no class.
func (a *RecordActivation) late(in *[]uint64) *uint64 {
	if a.class == 0 || a.rec != a.Record || a.Obs != nil {
		return nil
	}
	i := 2 * int(a.class-1)
	if a.Record.M4Resolves {
		i++
	}
	for len(*in) <= i {
		*in = append(*in, 0)
	}
	return &(*in)[i]
}

// unpack writes the low bits of m into out, bit j into out[j].
func unpack(m uint64, out []bool) {
	for j := range out {
		out[j] = m&(1<<j) != 0
	}
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

// stageProjection builds the record stage's key once the fused programs are compiled: over the
// later programs' inputs too when they can be memoized (classOK).
func (ps *ProgramSet) stageProjection() {
	r := &ps.fast.record
	for _, k := range []int{fusedLive, fusedPreds, fusedApplies} {
		if r[k].prg == nil {
			return
		}
	}
	if r[fusedMarks].prg != nil && r[fusedConflicts].prg != nil && len(ps.recordPreds)-ps.phase1 < 63 {
		ps.fast.stage, ps.fast.classOK = unionProjection(&r[fusedLive].proj, &r[fusedPreds].proj, &r[fusedApplies].proj,
			&r[fusedMarks].proj, &r[fusedConflicts].proj)
		ps.fast.stageOK = ps.fast.classOK
	}
	if !ps.fast.classOK {
		ps.fast.stage, ps.fast.stageOK = unionProjection(&r[fusedLive].proj, &r[fusedPreds].proj, &r[fusedApplies].proj)
	}
}

// EvalRecordStage runs the record stage for a.Record: it sets a.Live and the predicate values
// (EvalLiveness, then EvalRecord) and returns the conflict applicability mask (EvalApplies).
// Records of a class already met in this export are answered from the stage's memo. With an
// observer every program runs (coverage sees each).
func (ps *ProgramSet) EvalRecordStage(a *RecordActivation) (uint32, error) {
	var key string
	a.class = 0
	memo := a.Obs == nil && ps.fast.stageOK
	if memo {
		k := ps.fast.stage.key(a)
		if c, ok := a.stage[string(k)]; ok {
			r := &a.results[c]
			a.Live, a.vals = r.live, r.vals
			if ps.fast.classOK {
				a.class, a.rec = c+1, a.Record
			}
			return r.applies, nil
		}
		key = string(k) // the programs below reuse the key buffer
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
			a.stage = map[string]int32{}
		}
		c := int32(len(a.results))
		a.stage[key] = c
		a.results = append(a.results, stageResult{live: a.Live, vals: a.vals, applies: m})
		if ps.fast.classOK {
			a.class, a.rec = c+1, a.Record
		}
	}
	return m, nil
}
