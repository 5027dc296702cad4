package evaluator

import (
	"github.com/scopehygiene/scope-hygiene/rules"
)

// records runs the liveness conditions, the record predicates and the conflict applicability of
// every record. It also completes each record's facts from the manifest first (manifestOf), and
// counts what the gates need of it after (resolveGates): one walk over the records, not three.
func (st *state) records() error {
	ps, x, act := st.ps, st.x, st.act
	st.slots = sized(x.b.slots, len(x.records))[:len(x.records)]
	st.applies = sized(x.b.applies, len(x.records))[:len(x.records)]
	// Distinct tuples, by their interned number: bit 0 seen, bit 1 seen live and not global.
	seen := make([]uint8, len(x.interned))
	st.scopes, st.liveScopes, st.checked = 0, 0, 0
	for i := range x.records {
		r := &x.records[i]
		x.manifestOf(r)
		act.Record = &r.facts
		m, err := ps.EvalRecordStage(act)
		if err != nil {
			return err
		}
		if st.opts.explain != nil {
			if err := st.explainRecord(i); err != nil {
				return err
			}
		}
		r.live = act.Live
		r.template, r.eligible, r.contested = act.Get(rules.Template), act.Get(rules.Eligible), act.Get(rules.Contested)
		r.m1, r.m3, r.anchor = act.Get(rules.M1), act.Get(rules.M3), act.Get(rules.CycleAnchor)
		r.malformed, r.nonSharing = act.Get(rules.MalformedMarker), act.Get(rules.NonSharing)
		st.slots[i] = act.Values()
		if r.live {
			st.live++
		}
		if act.Get(rules.SplitState) {
			x.cov.SplitState++
		}
		if r.contested {
			x.cov.Contested++
		}
		switch {
		case r.eligible:
			st.eligible++
			if r.facts.Scoped {
				st.scopedEligible++
			}
		case r.template:
			st.templates++
		default:
			st.sourcePassages++
		}
		st.applies[i] = m
		if r.facts.Scoped {
			if seen[r.tid]&1 == 0 {
				seen[r.tid] |= 1
				st.scopes++
			}
			if r.live && !r.facts.Global && seen[r.tid]&2 == 0 {
				seen[r.tid] |= 2
				st.liveScopes++
			}
		}
		if m != 0 {
			st.checked++
		}
	}
	return nil
}

// resolveGates runs the assessability gates on the counts records made.
func (st *state) resolveGates() error {
	x := st.x
	keys := x.keys
	if x.letta {
		keys = []string{"attached_to"}
	}
	st.sub = rules.Submission{
		ScopeKeys: append([]string{}, keys...), ScopeKeysSource: x.keySource,
		Records: int64(len(x.records)), Live: int64(st.live), Eligible: int64(st.eligible),
		DistinctScopes: int64(st.scopes), LiveNonGlobalScopes: int64(st.liveScopes), ScopeFiltered: x.manifest.scopeFiltered,
		MultiScope: x.manifest.multiScope, ManifestPresent: x.manifest.present,
		ConflictCheckedRecords: int64(st.checked),
	}
	act := &rules.SubmissionActivation{Scope: x.scope, Submission: &st.sub, Obs: st.opts.Observer}
	var err error
	st.gates, err = st.ps.EvalGates(act)
	return err
}

func (st *state) status(factor string) Status {
	w := st.ps.Criteria().Words
	if g := st.gateFor(factor); g != nil {
		return Status{Status: w.NotAssessable, Reason: g.Reason}
	}
	return Status{Status: w.Assessable}
}

func (st *state) gateFor(f string) *rules.GateProgram {
	for i, x := range rules.Factors {
		if x == f {
			return st.gates[i]
		}
	}
	return nil
}

// clusterSize counts, per content key, the live scoped records the M4 depth limit counts
// (R-21, R-33; clusters.m4_depth: members leaves out the Letta templates L-4 keeps out).
func (st *state) clusterSize() []int {
	members := st.ps.Criteria().Clusters.M4Depth == rules.M4DepthMembers
	size := make([]int, st.x.contents.len())
	for i := range st.x.records {
		r := &st.x.records[i]
		if r.live && r.facts.Scoped && !(members && r.template) {
			size[r.cid]++
		}
	}
	return size
}

// marks runs the M4 walk, then the mark predicates, for every live record (a marker on a non-live
// record is inert; whether an unscoped record can be covered is the criteria's call, P0).
func (st *state) marks() error {
	x, ps, act := st.x, st.ps, st.act
	size := st.clusterSize()
	anchor := func(j int) bool { return x.records[j].anchor }
	for i := range x.records {
		r := &x.records[i]
		if !r.live {
			continue
		}
		if r.facts.OriginClaimID.Present { // the member, read once with the facts
			r.hasPointer = true
			r.facts.M4Resolves = x.walk(i, size[r.cid], anchor, st.pointerTrace(i))
		}
		act.Restore(&r.facts, r.live, st.slots[i])
		if err := ps.EvalMarks(act); err != nil {
			return err
		}
		r.covered, r.contradiction = act.Get(rules.Covered), act.Get(rules.Contradiction)
	}
	return nil
}
