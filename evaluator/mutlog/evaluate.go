// Package mutlog is the evaluator mechanics of criteria of kind mutation-log
// (docs/forget-envelope.md): it turns (a compiled rules.MutLogSet, one mutation-log export) into a
// pre-check result, an audit report or a refusal. It is pure: no I/O, no clock (the caller passes
// the time), safe for concurrent use. Go keeps the mechanics only: strict decoding, the refusal
// checks in the criteria's order, canonicalizing keys by the criteria's steps, ordering events by
// sequence, replaying the log through the criteria's transition table, matching grants, and
// arithmetic. Every decision (per-event predicates, assessability gates) is a CEL program of the
// criteria.
package mutlog

import (
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// Options change how an evaluation is observed, never what it decides.
type Options struct {
	// Observer sees every rule evaluation (coverage); nil on the request path.
	Observer rules.Observer
	// explain, when set, collects why each decision and gate came out as it did (Explain).
	explain *Explanation
}

// state is one evaluation in progress.
type state struct {
	ms    *rules.MutLogSet
	opts  Options
	l     *log
	facts rules.LogFacts
	gates map[string]*rules.GateProgram
	// dna is the does_not_apply gate that holds (nil: the rules apply, FE-R-38).
	dna *rules.GateProgram
	// counts are the counts the fact gates read (nil until computed).
	counts *rules.LogCounts
	// withoutEnvelope are the seqs of the forgets whose forget.with_envelope decision is false,
	// reassigns the reassign events (both for the audit only), unattributed the events with no
	// principal: each is taken in prepare's one pass over the events, so that the audit does not
	// walk the thousand events (96 KB, twice the first-level cache) once more for each.
	withoutEnvelope []int64
	reassigns       []*event
	unattributed    int
	// ev and fg are the facts of the event being decided, reused: the programs read them only
	// while they run.
	ev rules.LogEvent
	fg rules.LogForget
}

// read reads a body under FE-R-3: in one pass (lexread.go) when the log passes every refusal
// check, else by decoding it into a value tree and running the refusal checks in the criteria's
// order; the tree lives only here, its slabs back in the pool before the log is evaluated.
// factsOnly is lexRead's: a log for the pre-check.
func read(ms *rules.MutLogSet, body []byte, factsOnly bool) (*log, *Refusal) {
	return readIn(ms, body, factsOnly, nil)
}

// readIn is read numbering the keys of a log read in one pass in sp, when it is not nil (a whole
// log's chunk); a log of the tree path has slots of its own.
func readIn(ms *rules.MutLogSet, body []byte, factsOnly bool, sp *slotSpace) (*log, *Refusal) {
	if l := lexReadIn(ms, body, factsOnly, sp); l != nil {
		return l, nil
	}
	return treeRead(ms, body)
}

// treeRead is read's tree path: the body decoded into a value tree, the refusal checks run in the
// criteria's order, and the log read off the tree.
func treeRead(ms *rules.MutLogSet, body []byte) (*log, *Refusal) {
	s := getSlabs()
	defer releaseSlabs(s)
	top, err := jsontree.Decode(body, jsontree.Options{MaxDepth: ms.Criteria().Caps.JSONDepth}, s)
	if err != nil {
		return nil, newRefusal("export_required")
	}
	if r := validate(ms, &top); r != nil {
		return nil, r
	}
	return readLog(ms, &top), nil
}

// prepare reads a log and computes what both the pre-check and the audit need: the log facts, the
// forget decisions and the gates. factsOnly is set by the pre-check when the forget decisions read
// nothing of the keys' identities; rp, by the audit, replays the log in the same pass over its
// events (a pass over a thousand events misses the first-level cache a thousand times).
func prepare(ms *rules.MutLogSet, body []byte, opts Options, factsOnly bool, rp *replayer) (*state, *Refusal, error) {
	if r := CheckBodySize(ms, len(body)); r != nil {
		return nil, r, nil
	}
	l, r := read(ms, body, factsOnly)
	if r != nil {
		return nil, r, nil
	}
	st := &state{ms: ms, opts: opts, l: l, gates: map[string]*rules.GateProgram{}, withoutEnvelope: seqs()}
	f := &st.facts
	f.ForgetMode, f.Events, f.Principals, f.Snapshot = st.l.mode, int64(len(st.l.events)), int64(st.l.principals), st.l.hasSnap
	for _, d := range st.l.declared {
		d.Set(f)
	}
	act := &rules.EventActivation{Obs: opts.Observer}
	if rp != nil { // the lists only the audit reads
		rp.start(ms, l)
		st.reassigns = freeReopens.get(0)
	}
	for i := range st.l.events {
		ev := &st.l.events[i]
		if rp != nil {
			rp.event(ev)
		}
		if !ev.hasPrincipal {
			st.unattributed++
		}
		switch ev.op {
		case "forget":
			f.Forgets++
			act.Event, act.Forget = st.eventFacts(ev), nil
			v, err := ms.Decide("forget", act)
			if err != nil {
				return nil, nil, err
			}
			st.explainEvent(ev, "forget", v)
			if v[0] {
				f.ForgetsWithEnvelope++
			} else if rp != nil {
				st.withoutEnvelope = append(st.withoutEnvelope, ev.seq)
			}
		case "reassign":
			f.Reassigns++
			if rp != nil {
				st.reassigns = append(st.reassigns, ev)
			}
		}
	}
	if err := st.decideGates(&rules.LogActivation{Log: f, Obs: opts.Observer}); err != nil {
		return nil, nil, err
	}
	return st, nil, nil
}

// decideGates decides, over the log's facts, whether the rules apply (the does_not_apply gate)
// and which gate holds for each factor.
func (st *state) decideGates(la *rules.LogActivation) error {
	dna, err := st.ms.DoesNotApply(la)
	if err != nil {
		return err
	}
	st.dna = dna
	for _, name := range rules.MutLogFactors {
		g, err := st.ms.Gate(name, la)
		if err != nil {
			return err
		}
		st.gates[name] = g
	}
	return nil
}

// eventFacts are the CEL facts of one event.
func (st *state) eventFacts(ev *event) *rules.LogEvent {
	e := &st.ev
	*e = rules.LogEvent{Seq: ev.seq, Op: ev.op, EnvelopeRecorded: ev.envelope != nil, AuthorityChecked: ev.checked, RawKey: ev.raw}
	if ev.hasPrincipal {
		e.HasPrincipal, e.Principal = true, ev.principal
		if p := st.l.table[ev.principal]; p != nil && ev.keyed && !st.l.factsOnly {
			e.GrantsCover = p.covers(st.l.scope(ev.slot))
		}
	}
	return e
}

func (st *state) forgetFacts(ev *event) *rules.LogForget {
	f := &st.fg
	if ev == nil {
		*f = rules.LogForget{}
		return f
	}
	*f = rules.LogForget{Seq: ev.seq, EnvelopeRecorded: ev.envelope != nil, Envelope: ev.envelope, RawKey: ev.raw}
	return f
}

// gate is the gate that makes a factor NOT ASSESSABLE: a does_not_apply gate first (FE-R-38), then
// the factor's own; nil when it is ASSESSABLE.
func (st *state) gate(factor string) *rules.GateProgram {
	if st.dna != nil {
		return st.dna
	}
	return st.gates[factor]
}

func (st *state) status(factor string) Status {
	w := st.ms.Criteria().Words
	if g := st.gate(factor); g != nil {
		return Status{Status: w.NotAssessable, Reason: g.Reason}
	}
	return Status{Status: w.Assessable}
}

// Precheck validates a log and resolves each factor's assessability, computing no factor. A
// refusal is returned for a malformed or over-cap log; an error means a rule failed at run time
// (errors.Is(err, rules.ErrRuleFailed)).
func Precheck(ms *rules.MutLogSet, body []byte, now time.Time) (*PrecheckResult, *Refusal, error) {
	return PrecheckWith(ms, body, now, Options{})
}

// PrecheckWith is Precheck with options.
func PrecheckWith(ms *rules.MutLogSet, body []byte, now time.Time, opts Options) (*PrecheckResult, *Refusal, error) {
	st, ref, err := prepare(ms, body, opts, !ms.ReadsKeys("forget"), nil)
	if ref != nil || err != nil {
		return nil, ref, err
	}
	c := ms.Criteria()
	res := &PrecheckResult{Kind: "precheck_result", Service: c.Service, CriteriaID: c.CriteriaID,
		CriteriaRevision: c.CriteriaRevision, CriteriaDigest: ms.Digest(), Op: "precheck",
		ForgetMode: st.l.mode, Events: len(st.l.events), Factors: map[string]Status{}, CheckedAt: timestamp(now)}
	for _, f := range rules.MutLogFactors {
		res.Factors[f] = st.status(f)
	}
	releaseEvents(st.l)
	releaseTables(st.l, nil)
	return res, nil, nil
}
