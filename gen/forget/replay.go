package forget

import "sort"

type slotState struct {
	status    string
	version   int64
	lastWrite int64
	forgetRaw string
	forgetEnv []string
	forgetRec bool
	rawKeys   map[string]bool
}

const (
	stAbsent    = "absent"
	stLive      = "live"
	stForgotten = "forgotten"
	stRetired   = "retired"
)

// transition is the criteria's replay table (FE-R-15); a missing entry leaves the
// status unchanged.
var transition = map[string]map[string]map[string]string{
	ModeTransitional: {
		OpWrite:  {stAbsent: stLive, stLive: stLive, stForgotten: stLive},
		OpForget: {stAbsent: stForgotten, stLive: stForgotten, stForgotten: stForgotten},
		OpReopen: {},
	},
	ModeTerminal: {
		OpWrite:  {stAbsent: stLive, stLive: stLive, stRetired: stLive},
		OpForget: {stAbsent: stRetired, stLive: stRetired, stRetired: stRetired},
		OpReopen: {stRetired: stAbsent},
	},
}

// replayed is the state of every slot after replay and the tallies the factors read.
type replayed struct {
	slots     map[string]*slotState
	slotOrder []string

	forgets, withEnv                       int
	withoutEnv                             []int64
	reinserts                              []int64
	checked, unattributed, outside, silent int
	outsideSeqs, silentSeqs, unattrSeqs    []int64
	aliasSeqs                              []int64
	reopens, reopensUnchecked              int
	reopenUncheckedSeqs, retiredWriteSeqs  []int64
	reassigns, reassignUnchecked           int
	reassignUncheckedSeqs                  []int64
	forgetsOfNotLive, reopensIneffective   int
	unattributedEvents                     int

	grantsOf map[string][][]part
	inTable  map[string]bool
}

// replay runs the events in seq order through the mode's transition table
// (FE-R-14 … FE-R-19).
func (x *export) replay() *replayed {
	order := append([]event{}, x.events...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].seq < order[j].seq })

	r := &replayed{slots: map[string]*slotState{}, grantsOf: map[string][][]part{}, inTable: map[string]bool{}}
	for _, p := range x.principals {
		r.grantsOf[p.id] = p.grants
		r.inTable[p.id] = true
	}
	table := transition[x.mode]
	for _, e := range order {
		if !e.hasPrincipal {
			r.unattributedEvents++
		}
		if e.op == OpReassign {
			r.reassigns++
			if !e.authorityChecked {
				r.reassignUnchecked++
				r.reassignUncheckedSeqs = append(r.reassignUncheckedSeqs, e.seq)
			}
			continue
		}
		id := ident(e.key, true)
		raw := ident(e.key, false)
		s := r.slots[id]
		if s == nil {
			s = &slotState{status: stAbsent, rawKeys: map[string]bool{}}
			r.slots[id] = s
			r.slotOrder = append(r.slotOrder, id)
		}
		s.rawKeys[raw] = true
		before := s.status
		if next, ok := table[e.op][before]; ok {
			s.status = next
		}
		switch e.op {
		case OpWrite:
			r.write(e, s, before, raw)
		case OpForget:
			r.forget(e, s, before, raw)
		case OpReopen:
			if x.mode == ModeTerminal && before == stRetired {
				r.reopens++
				if !e.authorityChecked {
					r.reopensUnchecked++
					r.reopenUncheckedSeqs = append(r.reopenUncheckedSeqs, e.seq)
				}
			} else {
				r.reopensIneffective++
			}
		}
	}
	return r
}

// write tallies one write: a write into a forgotten or retired slot is a reinsert,
// judged against the envelope of the slot's governing forget.
func (r *replayed) write(e event, s *slotState, before, raw string) {
	s.version, s.lastWrite = e.version, e.seq
	if before != stForgotten && before != stRetired {
		return
	}
	r.reinserts = append(r.reinserts, e.seq)
	if before == stRetired {
		r.retiredWriteSeqs = append(r.retiredWriteSeqs, e.seq)
	}
	// The governing forget is the last forget replayed on this slot (FE-R-19).
	if s.forgetRec {
		r.checked++
		switch {
		case !e.hasPrincipal:
			r.unattributed++
			r.unattrSeqs = append(r.unattrSeqs, e.seq)
		case !contains(s.forgetEnv, e.principal):
			r.outside++
			r.outsideSeqs = append(r.outsideSeqs, e.seq)
			if r.inTable[e.principal] && anyCovers(r.grantsOf[e.principal], e.key) {
				r.silent++
				r.silentSeqs = append(r.silentSeqs, e.seq)
			}
		}
	}
	if raw != s.forgetRaw {
		r.aliasSeqs = append(r.aliasSeqs, e.seq)
	}
}

// forget tallies one forget and makes it the slot's governing forget.
func (r *replayed) forget(e event, s *slotState, before, raw string) {
	r.forgets++
	if e.envelopeRecorded {
		r.withEnv++
	} else {
		r.withoutEnv = append(r.withoutEnv, e.seq)
	}
	if before != stLive {
		r.forgetsOfNotLive++
	}
	s.forgetRaw = raw
	s.forgetEnv, s.forgetRec = e.envelope, e.envelopeRecorded
}
