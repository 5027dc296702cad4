package mutlog

import (
	"sort"
	"strconv"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// Audit computes the seven factors, the coverage block and the verdict line.
func Audit(ms *rules.MutLogSet, body []byte, checkEnd time.Time) (*Report, *Refusal, error) {
	return AuditWith(ms, body, checkEnd, Options{})
}

// AuditWith is Audit with options. Its steps: decode and prepare (the log facts and the gates),
// replay, the per-event decisions, the factors from them, the replay factor, the coverage and the
// verdict line.
func AuditWith(ms *rules.MutLogSet, body []byte, checkEnd time.Time, opts Options) (*Report, *Refusal, error) {
	var p replayer
	st, ref, err := prepare(ms, body, opts, false, &p)
	if ref != nil || err != nil {
		return nil, ref, err
	}
	rp := p.r
	rep := st.newReport()
	st.fillForgetEnvelopes(rep)
	d, err := st.decide(rp)
	if err != nil {
		return nil, nil, err
	}
	if err := st.fillDecided(rep, d); err != nil {
		return nil, nil, err
	}
	live := liveSlots(rp, ms.Criteria().Replay.Live)
	rv := st.replayFactor(rp, live)
	st.setFactor(rep, "replay", rv, &rep.Factors.Replay, map[string]int{"mismatches": rv.Mismatches})
	rep.Coverage = st.coverage(rp, live)
	Stamp(ms, rep, checkEnd)
	if opts.explain != nil {
		if err := st.explainGates(); err != nil {
			return nil, nil, err
		}
	}
	releaseEvents(st.l)
	releaseTables(st.l, rp)
	freeReopens.put(st.reassigns) // as the reopens: pointers into the events, cleared
	st.reassigns = nil
	return rep, nil, nil
}

func seqs() []int64 { return []int64{} }

// newReport is the report's head: the criteria, the log's counts and the published texts.
func (st *state) newReport() *Report {
	c := st.ms.Criteria()
	rep := &Report{Kind: "audit_report", Service: c.Service, CriteriaID: c.CriteriaID,
		CriteriaRevision: c.CriteriaRevision, CriteriaDigest: st.ms.Digest(), Op: "audit",
		ForgetMode: st.l.mode, Events: len(st.l.events), Forgets: int(st.facts.Forgets),
		ScopeStatement: c.Texts["scope_text"], HonestyLine: c.Texts["honesty_line"], verdict: map[string]string{}}
	if st.dna != nil {
		rep.doesNotApply = st.dna.Reason
	}
	return rep
}

// setFactor puts a factor in its slot: its Status when a gate makes it NOT ASSESSABLE, else the
// computed factor, whose figures then fill the verdict.
func (st *state) setFactor(rep *Report, name string, computed any, slot *any, figures map[string]int) {
	if st.gate(name) != nil {
		*slot = st.status(name)
		return
	}
	*slot = computed
	for k, n := range figures {
		rep.verdict[k] = strconv.Itoa(n)
	}
}

// fillForgetEnvelopes computes factor (1) from the forget decisions prepare made.
func (st *state) fillForgetEnvelopes(rep *Report) {
	fe := ForgetEnvelopes{Status: st.ms.Criteria().Words.Assessable, Forgets: int(st.facts.Forgets),
		WithEnvelope: int(st.facts.ForgetsWithEnvelope), WithoutEnvelope: st.withoutEnvelope}
	if st.gate("forget_envelopes") != nil {
		rep.Factors.ForgetEnvelopes = st.status("forget_envelopes")
		return
	}
	fe.Rate = rate(fe.WithEnvelope, fe.Forgets)
	rep.Factors.ForgetEnvelopes = fe
	rep.verdict["with_envelope"] = fe.Rate.Value
}

// decided are factors (2) to (6) as the per-event decisions count them, before the gates.
type decided struct {
	ri Reinserts
	oe OutsideEnvelope
	al Aliases
	ro Reopens
	rs Reassignments
	// outside and silent are the facts of (3) a fact gate may hold back; judged are the checked
	// reinserts that carry a principal (FE-R-37).
	outside, silent, judged int
	outsideSeqs, silentSeqs []int64
}

// decide runs the criteria's decisions over the reinserts, the reopens and the reassignments, in
// that order.
func (st *state) decide(rp *replayed) (*decided, error) {
	w := st.ms.Criteria().Words
	// Each list of seqs holds at most one seq per event it is decided on: they are cut from one
	// array at their most, so that none grows by copying (the copies were a tenth of what an
	// audit allocated).
	n, nro, nrs := len(rp.reinserts), len(rp.reopens), len(st.reassigns)
	all := make([]int64, 0, 6*n+nro+nrs)
	cut := func(m int) []int64 {
		s := all[len(all) : len(all) : len(all)+m]
		all = all[:len(all)+m]
		return s
	}
	d := &decided{
		ri:          Reinserts{Status: w.Assessable, Seqs: cut(n)},
		oe:          OutsideEnvelope{Status: w.Assessable, UnattributedSeqs: cut(n)},
		al:          Aliases{Status: w.Assessable, Seqs: cut(n)},
		ro:          Reopens{Status: w.Assessable, UncheckedSeqs: cut(nro), RetiredWriteSeqs: cut(n)},
		rs:          Reassignments{Status: w.Assessable, UncheckedSeqs: cut(nrs)},
		outsideSeqs: cut(n), silentSeqs: cut(n),
	}
	act := &rules.EventActivation{Obs: st.opts.Observer}
	for _, r := range rp.reinserts {
		if err := st.decideReinsert(act, r, d); err != nil {
			return nil, err
		}
	}
	for _, ev := range rp.reopens {
		if err := st.tallyUnchecked(act, "reopen", ev, &d.ro.Reopens, &d.ro.Unchecked, &d.ro.UncheckedSeqs); err != nil {
			return nil, err
		}
	}
	for _, ev := range st.reassigns {
		if err := st.tallyUnchecked(act, "reassign", ev, &d.rs.Reassignments, &d.rs.Unchecked, &d.rs.UncheckedSeqs); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// decideReinsert counts one reinsert in factors (2) to (4) and as a retired write of (5).
func (st *state) decideReinsert(act *rules.EventActivation, r reinsert, d *decided) error {
	act.Event, act.Forget = st.eventFacts(r.ev), st.forgetFacts(r.forget)
	v, err := st.ms.Decide("reinsert", act)
	if err != nil {
		return err
	}
	st.explainEvent(r.ev, "reinsert", v)
	checked, unattributed, isOutside, isSilent, alias := v[0], v[1], v[2], v[3], v[4]
	seq := r.ev.seq
	d.ri.Reinserts++
	d.ri.Seqs = append(d.ri.Seqs, seq)
	d.ro.RetiredWrites++
	d.ro.RetiredWriteSeqs = append(d.ro.RetiredWriteSeqs, seq)
	d.oe.Reinserts++
	if checked {
		d.oe.Checked++
	} else {
		d.oe.NoEnvelope++
	}
	if unattributed {
		d.oe.Unattributed++
		d.oe.UnattributedSeqs = append(d.oe.UnattributedSeqs, seq)
	}
	if checked && !unattributed {
		d.judged++
	}
	if isOutside {
		d.outside++
		d.outsideSeqs = append(d.outsideSeqs, seq)
	}
	if isSilent {
		d.silent++
		d.silentSeqs = append(d.silentSeqs, seq)
	}
	d.al.Reinserts++
	if alias {
		d.al.Aliases++
		d.al.Seqs = append(d.al.Seqs, seq)
	}
	return nil
}

// tallyUnchecked runs a subject whose one predicate says the event went unchecked (reopen,
// reassign): the event counts in total, and in unchecked and seqs when it went unchecked.
func (st *state) tallyUnchecked(act *rules.EventActivation, subject string, ev *event, total, unchecked *int, seqs *[]int64) error {
	act.Event, act.Forget = st.eventFacts(ev), nil
	v, err := st.ms.Decide(subject, act)
	if err != nil {
		return err
	}
	st.explainEvent(ev, subject, v)
	*total++
	if v[0] {
		*unchecked++
		*seqs = append(*seqs, ev.seq)
	}
	return nil
}

// fillDecided puts factors (2) to (6) in the report; the fact gates of (3) run when it is
// ASSESSABLE.
func (st *state) fillDecided(rep *Report, d *decided) error {
	f := &rep.Factors
	st.setFactor(rep, "reinserts_after_forget", d.ri, &f.ReinsertsAfterForget, map[string]int{"reinserts": d.ri.Reinserts})
	if st.gate("reinserts_outside_envelope") == nil {
		if err := st.gateOutsideFacts(rep, d); err != nil {
			return err
		}
	}
	st.setFactor(rep, "reinserts_outside_envelope", d.oe, &f.ReinsertsOutsideEnvelope, nil)
	st.setFactor(rep, "alias_reinserts", d.al, &f.AliasReinserts, map[string]int{"aliases": d.al.Aliases})
	st.setFactor(rep, "reopens", d.ro, &f.Reopens, map[string]int{"unchecked_reopens": d.ro.Unchecked, "retired_writes": d.ro.RetiredWrites})
	st.setFactor(rep, "reassignments", d.rs, &f.Reassignments, map[string]int{"unchecked_reassignments": d.rs.Unchecked})
	return nil
}

// gateOutsideFacts runs the fact gates of (3) over its counts (FE-R-35, FE-R-37): a fact a gate
// holds is NOT ASSESSABLE and its seqs are left out.
func (st *state) gateOutsideFacts(rep *Report, d *decided) error {
	w := st.ms.Criteria().Words
	oe := &d.oe
	unjudged := oe.Reinserts - d.judged
	if len(st.ms.FactGates("reinserts_outside_envelope.outside"))+len(st.ms.FactGates("reinserts_outside_envelope.silent")) > 0 {
		oe.Judged, oe.Unjudged = &d.judged, &unjudged
	}
	counts := &rules.LogCounts{Reinserts: int64(oe.Reinserts), Checked: int64(oe.Checked), NoEnvelope: int64(oe.NoEnvelope),
		Unattributed: int64(oe.Unattributed), Judged: int64(d.judged), Unjudged: int64(unjudged)}
	st.counts = counts
	fa := &rules.LogActivation{Log: &st.facts, Counts: counts, Obs: st.opts.Observer}
	og, err := st.ms.FactGate("reinserts_outside_envelope.outside", fa)
	if err != nil {
		return err
	}
	sg, err := st.ms.FactGate("reinserts_outside_envelope.silent", fa)
	if err != nil {
		return err
	}
	if og != nil {
		oe.Outside = Status{Status: w.NotAssessable, Reason: og.Reason}
	} else {
		oe.Outside, oe.OutsideSeqs = d.outside, &d.outsideSeqs
		rep.verdict["outside"] = strconv.Itoa(d.outside)
	}
	if sg != nil {
		oe.Silent = Status{Status: w.NotAssessable, Reason: sg.Reason}
	} else {
		oe.Silent, oe.SilentSeqs = d.silent, &d.silentSeqs
	}
	return nil
}

// liveSlots counts the slots replay left in the live status.
func liveSlots(rp *replayed, live string) int {
	n := 0
	for _, k := range rp.order {
		if rp.slots[k].status == live {
			n++
		}
	}
	return n
}

// replayFactor computes factor (7): the replayed slots against the snapshot.
func (st *state) replayFactor(rp *replayed, live int) Replay {
	c, l := st.ms.Criteria(), st.l
	rv := Replay{Status: c.Words.Assessable, LiveSlots: live, SnapshotEntries: len(l.snapshot), MissingSeqs: seqs(),
		ExtraIndexes: []int{}, VersionIndexes: []int{}, DuplicateIndexes: []int{}}
	seen := make([]bool, len(l.slots))
	for i, e := range l.snapshot {
		s := &rp.slots[e.slot]
		switch {
		case seen[e.slot]:
			rv.DuplicateIndexes = append(rv.DuplicateIndexes, i)
		case !s.touched || s.status != c.Replay.Live:
			rv.ExtraIndexes = append(rv.ExtraIndexes, i)
		case s.version != e.version:
			rv.VersionIndexes = append(rv.VersionIndexes, i)
		}
		seen[e.slot] = true
	}
	for _, k := range rp.order {
		if s := &rp.slots[k]; s.status == c.Replay.Live && !seen[k] {
			rv.MissingSeqs = append(rv.MissingSeqs, s.lastWrite)
		}
	}
	sort.Slice(rv.MissingSeqs, func(i, j int) bool { return rv.MissingSeqs[i] < rv.MissingSeqs[j] })
	rv.Missing, rv.Extra, rv.Version, rv.Duplicate = len(rv.MissingSeqs), len(rv.ExtraIndexes), len(rv.VersionIndexes), len(rv.DuplicateIndexes)
	rv.Mismatches = rv.Missing + rv.Extra + rv.Version + rv.Duplicate
	return rv
}

// coverage is what the log held beside the factors (FE-R-33).
func (st *state) coverage(rp *replayed, live int) Coverage {
	l := st.l
	cov := Coverage{ScopeDimensions: l.dims, Canonicalization: append([]string{}, st.ms.Criteria().Canonicalization...),
		Slots: len(rp.order), ForgetsOfNotLive: rp.forgotNotLv, ReopensIneffective: rp.reopenNoop,
		Principals: l.principals, LiveSlots: live, UnattributedEvents: st.unattributed}
	for _, n := range rp.order {
		if rp.slots[n].aliased {
			cov.AliasedSlots++
		}
	}
	return cov
}
