package mutlog

import (
	"slices"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// fold is the whole log's replay as a fold over its events in seq order: per canonical slot its
// replay state, and per factor the counts and seqs the report prints. Nothing of an event is kept
// once it is replayed but what a slot keeps (its first raw key, its governing forget).
type fold struct {
	st *state // over gl: the header's facts and the log's slots, no events
	gl *log
	// sp numbers the log's slots, gl's slots and scopes (sync): the chunks read in one pass
	// number theirs in it, the fold those of the chunks the tree path read.
	sp *slotSpace
	// local maps the chunk's slot numbers to the log's (-1: not yet looked up).
	local []int32
	// names interns the envelopes' principal names a slot's forget keeps: few, and repeated.
	names map[string]string
	rp    replayed
	table transitions // the log's mode's moves, looked up as replay looks them up
	d     *decided
	act   rules.EventActivation
	// pending orders the events by seq within a window of the event cap (a log under the cap is
	// ordered whole, as Audit orders it).
	pending pending
	window  int
	last    int64
	started bool
	// the counts prepare and coverage take over the events.
	events, unattributed, forgets, withEnvelope, reassigns int
	withoutEnvelope                                        []int64
	err                                                    error // the first rule that failed at run time
}

func newFold(ms *rules.MutLogSet) *fold {
	w := ms.Criteria().Words
	return &fold{sp: newSlotSpace(), names: map[string]string{}, window: ms.Criteria().Caps.EventsPerAudit, withoutEnvelope: seqs(),
		d: &decided{
			ri:          Reinserts{Status: w.Assessable, Seqs: seqs()},
			oe:          OutsideEnvelope{Status: w.Assessable, UnattributedSeqs: seqs()},
			al:          Aliases{Status: w.Assessable, Seqs: seqs()},
			ro:          Reopens{Status: w.Assessable, UncheckedSeqs: seqs(), RetiredWriteSeqs: seqs()},
			rs:          Reassignments{Status: w.Assessable, UncheckedSeqs: seqs()},
			outsideSeqs: seqs(), silentSeqs: seqs(),
		}}
}

// start takes the header's facts from the first chunk read: every chunk has the same header.
func (f *fold) start(ms *rules.MutLogSet, cl *log) {
	if f.gl != nil {
		return
	}
	f.gl = &log{mode: cl.mode, dims: cl.dims, table: cl.table, principals: cl.principals, declared: cl.declared}
	f.st = &state{ms: ms, l: f.gl, gates: map[string]*rules.GateProgram{}}
	f.table = transitionsOf(ms.Criteria().Replay.Modes[cl.mode], nil, nil)
}

// slot is the log's number of chunk cl's slot n, numbering it when it is new. The identity and
// the scope are copied: the chunk's strings are let go with the chunk. A shared chunk's slots are
// the log's already.
func (f *fold) slot(cl *log, n int32) int32 {
	if cl.shared {
		return n
	}
	sp := f.sp
	id := cl.slots[n]
	if g, ok := sp.k.slots[id]; ok {
		return g
	}
	g := int32(len(sp.slots))
	id = strings.Clone(id)
	sp.k.slots[id] = g
	sp.slots = append(sp.slots, id)
	for _, v := range cl.scope(n) {
		sp.scopes = append(sp.scopes, dimVal{val: strings.Clone(v.val), ok: v.ok})
	}
	f.sync()
	return g
}

// sync brings gl and the replay's states up to the slots numbered so far.
func (f *fold) sync() {
	f.gl.slots, f.gl.scopes = f.sp.slots, f.sp.scopes
	if n := len(f.sp.slots) - len(f.rp.slots); n > 0 {
		f.rp.slots = append(f.rp.slots, make([]slotState, n)...)
	}
}

// addEvents takes the events of chunk no and replays those that leave the window.
func (f *fold) addEvents(w *wholeRead, cl *log, no int32) error {
	f.start(w.ms, cl)
	f.sync()
	w.pendingIn(no, len(cl.events)) // before any is taken out again
	f.local = slices.Grow(f.local[:0], len(cl.slots))[:len(cl.slots)]
	for i := range f.local {
		f.local[i] = -1
	}
	for i := range cl.events {
		ev := cl.events[i]
		if ev.keyed && !cl.shared {
			if f.local[ev.slot] < 0 {
				f.local[ev.slot] = f.slot(cl, ev.slot)
			}
			ev.slot = f.local[ev.slot]
		}
		f.pending.push(pendingEvent{ev, no})
		if f.pending.len() > f.window {
			f.step(w, f.pop(w))
		}
	}
	return nil
}

// addSnapshot takes a chunk's snapshot entries, numbered as the log's slots.
func (f *fold) addSnapshot(ms *rules.MutLogSet, cl *log) {
	f.start(ms, cl)
	f.sync()
	f.gl.hasSnap = f.gl.hasSnap || cl.hasSnap
	for _, e := range cl.snapshot {
		f.gl.snapshot = append(f.gl.snapshot, snapEntry{slot: f.slot(cl, e.slot), version: e.version})
	}
}

// step replays one event, in seq order: the decisions prepare and decide make on it, and the
// replay's move of its slot (replay.go), in one pass.
func (f *fold) step(w *wholeRead, ev event) {
	if w.best != nil || f.err != nil {
		return // the answer is already a refusal or an error
	}
	if f.started && ev.seq <= f.last {
		s := ev.seq
		r := &WholeRefusal{Refusal: *newRefusal(WholeSeqOrder), Local: true, Seq: &s}
		w.refuse(r)
		return
	}
	f.last, f.started = ev.seq, true
	f.events++
	if !ev.hasPrincipal {
		f.unattributed++
	}
	st, ms := f.st, f.st.ms
	switch ev.op {
	case "forget":
		f.forgets++
		f.act.Event, f.act.Forget = st.eventFacts(&ev), nil
		v, err := ms.Decide("forget", &f.act)
		if err != nil {
			f.err = err
			return
		}
		if v[0] {
			f.withEnvelope++
		} else {
			f.withoutEnvelope = append(f.withoutEnvelope, ev.seq)
		}
	case "reassign":
		f.reassigns++
		f.err = st.tallyUnchecked(&f.act, "reassign", &ev, &f.d.rs.Reassignments, &f.d.rs.Unchecked, &f.d.rs.UncheckedSeqs)
	}
	if ev.keyed && f.err == nil {
		f.err = f.replay(&ev)
	}
}

// replay moves the event's slot through the criteria's transition table, as replay does.
func (f *fold) replay(ev *event) error {
	rp := f.st.ms.Criteria().Replay
	s, act := f.rp.step(&rp, &f.table, ev, true)
	switch act {
	case reinsertWrite:
		return f.st.decideReinsert(&f.act, reinsert{ev: ev, forget: s.forget}, f.d)
	case governingForget:
		s.forget = f.keptForget(s, ev)
	case movedReopen:
		return f.st.tallyUnchecked(&f.act, "reopen", ev, &f.d.ro.Reopens, &f.d.ro.Unchecked, &f.d.ro.UncheckedSeqs)
	}
	return nil
}

// keptForget is what slot s keeps of its governing forget ev, copied out of its chunk: what a
// reinsert's decisions read of it (forgetFacts). The slot's previous forget is reused, its raw
// key is the slot's own when they are equal, and the envelope's names are interned.
func (f *fold) keptForget(s *slotState, ev *event) *event {
	k := s.forget
	if k == nil {
		k = &event{}
	}
	env := k.envelope[:0]
	*k = event{seq: ev.seq, op: ev.op, raw: s.raw, keyed: true, slot: ev.slot}
	if ev.raw != s.raw {
		k.raw = strings.Clone(ev.raw)
	}
	if ev.envelope != nil {
		if env == nil {
			env = make([]string, 0, len(ev.envelope))
		}
		for _, n := range ev.envelope {
			in, ok := f.names[n]
			if !ok {
				in = strings.Clone(n)
				f.names[in] = in
			}
			env = append(env, in)
		}
		k.envelope = env
	}
	return k
}

// finish replays what is left in the window, then makes the report as AuditWith does from the
// log facts, the gates and the factors.
func (f *fold) finish(w *wholeRead, checkEnd time.Time) (*Report, *WholeRefusal, error) {
	for f.pending.len() > 0 {
		f.step(w, f.pop(w))
	}
	if w.best != nil {
		return nil, w.best, nil
	}
	if f.err != nil {
		return nil, nil, f.err
	}
	f.sync()
	st, ms := f.st, f.st.ms
	fa := &st.facts
	fa.ForgetMode, fa.Events, fa.Principals, fa.Snapshot = f.gl.mode, int64(f.events), int64(f.gl.principals), f.gl.hasSnap
	fa.Forgets, fa.ForgetsWithEnvelope, fa.Reassigns = int64(f.forgets), int64(f.withEnvelope), int64(f.reassigns)
	for _, d := range f.gl.declared {
		d.Set(fa)
	}
	if err := st.decideGates(&rules.LogActivation{Log: fa}); err != nil {
		return nil, nil, err
	}
	rep := st.newReport()
	rep.Events = f.events
	f.fillForgetEnvelopes(rep)
	if err := st.fillDecided(rep, f.d); err != nil {
		return nil, nil, err
	}
	live := liveSlots(&f.rp, ms.Criteria().Replay.Live)
	rv := st.replayFactor(&f.rp, live)
	st.setFactor(rep, "replay", rv, &rep.Factors.Replay, map[string]int{"mismatches": rv.Mismatches})
	rep.Coverage = st.coverage(&f.rp, live)
	rep.Coverage.UnattributedEvents = f.unattributed
	Stamp(ms, rep, checkEnd)
	return rep, nil, nil
}

// fillForgetEnvelopes is factor (1) from the fold's counts, as the function of audit.go.
func (f *fold) fillForgetEnvelopes(rep *Report) {
	st := f.st
	if st.gate("forget_envelopes") != nil {
		rep.Factors.ForgetEnvelopes = st.status("forget_envelopes")
		return
	}
	fe := ForgetEnvelopes{Status: st.ms.Criteria().Words.Assessable, Forgets: f.forgets, WithEnvelope: f.withEnvelope,
		WithoutEnvelope: f.withoutEnvelope, Rate: rate(f.withEnvelope, f.forgets)}
	rep.Factors.ForgetEnvelopes = fe
	rep.verdict["with_envelope"] = fe.Rate.Value
}

// pop takes the next event to replay out of the window; its chunk's buffer may then be reused.
func (f *fold) pop(w *wholeRead) event {
	pe := f.pending.pop()
	w.pendingIn(pe.chunk, -1)
	return pe.ev
}

// pendingEvent is an event not yet replayed and the chunk it was read from, whose buffer its
// strings point into.
type pendingEvent struct {
	ev    event
	chunk int32
}

// pending holds the events not yet replayed, sorted by seq from head on. A log in seq order (the
// usual case) only appends; an event out of order is inserted in its place.
type pending struct {
	evs  []pendingEvent
	head int
}

func (p *pending) len() int { return len(p.evs) - p.head }

func (p *pending) push(ev pendingEvent) {
	if n := len(p.evs); n == p.head || p.evs[n-1].ev.seq <= ev.ev.seq {
		p.evs = append(p.evs, ev)
		return
	}
	at, _ := slices.BinarySearchFunc(p.evs[p.head:], ev.ev.seq, func(e pendingEvent, s int64) int {
		if e.ev.seq <= s { // after the equal ones: a repeated seq stays in the order read
			return -1
		}
		return 1
	})
	p.evs = slices.Insert(p.evs, p.head+at, ev)
}

func (p *pending) pop() pendingEvent {
	ev := p.evs[p.head]
	p.evs[p.head] = pendingEvent{}
	p.head++
	if p.head == len(p.evs) {
		p.evs, p.head = p.evs[:0], 0
	} else if p.head >= 4096 && p.head*2 >= len(p.evs) {
		// Slide the live events down once the dead head is as long as they are.
		n := copy(p.evs, p.evs[p.head:])
		clear(p.evs[n:])
		p.evs, p.head = p.evs[:n], 0
	}
	return ev
}
