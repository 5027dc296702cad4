package mutlog

import (
	"cmp"
	"slices"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonlex"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// readEvents reads the events array (FE-R-6, FE-R-7), each event as it comes.
func (x *lexer) readEvents(ms *rules.MutLogSet, l *log) bool {
	r := &x.r
	if r.Peek() != jsonlex.Array {
		return false
	}
	capEvents := ms.Criteria().Caps.EventsPerAudit
	// Sized once, by the most events the rest of the text could hold: growing a slice of a
	// thousand events by copying is most of what reading them would otherwise allocate.
	l.events = getEvents(min(capEvents, x.r.Remaining()/minEventBytes+1))
	x.envs = freeEnvs.get(64) // never nil: an empty envelope is a recorded one
	for r.Array(); r.More(); {
		if r.Peek() != jsonlex.Object || len(l.events) == capEvents {
			return false
		}
		if len(l.events) == cap(l.events) {
			l.events = slices.Grow(l.events, 1) // more than the estimate: a refused log's
		}
		if !x.readEvent(l) {
			return false
		}
	}
	return len(l.events) > 0
}

// minEventBytes is the fewest bytes an event the checks accept takes in the text, its comma
// included: {"op":"reassign","seq":1,"session":{}}, (no key op is shorter).
const minEventBytes = 39

// eventRead is what readEvent has seen of one event beside the event itself.
type eventRead struct {
	op                                        *opInfo
	key                                       pendingKey
	session                                   span
	seqOK, keyOK, sessionOK, versionOK, envOK bool
	envSeen                                   bool // an envelope that is not null
	to                                        string
	toSeen, toOK                              bool
}

// readEvent reads one event object (FE-R-9..FE-R-11); what a check needs of the rest of the log
// (the dimensions, the table) is recorded for resolve.
func (x *lexer) readEvent(l *log) bool {
	r := &x.r
	// The event is read in place, where append would put it: no copy of it afterwards, and no
	// clearing either: past its length the slice is as make and slices.Grow left it, zero.
	n := len(l.events)
	l.events = l.events[:n+1]
	ev := &l.events[n]
	var s eventRead
	envLo := len(x.envs)
	for r.Object(); ; {
		name, more := r.Member()
		if !more {
			break
		}
		if !x.eventMember(l, name, ev, &s) || r.Failed() {
			return false
		}
	}
	if !s.seqOK || s.op == nil {
		return false
	}
	spec := s.op.spec
	ev.op = s.op.name
	switch spec.Target {
	case "key":
		if !s.keyOK {
			return false
		}
		ev.keyed = true
		x.keys = append(x.keys, x.distinct(s.key))
	case "session":
		if !s.sessionOK {
			return false
		}
		x.sessions = append(x.sessions, s.session)
	}
	if ev.op == "reassign" && s.toSeen {
		if !s.toOK {
			return false
		}
		x.tos = append(x.tos, s.to)
	}
	if !spec.Version {
		ev.version = 0
	} else if !s.versionOK {
		return false
	}
	if spec.Envelope && s.envSeen {
		if !s.envOK {
			return false
		}
		ev.envelope = x.envs[envLo:len(x.envs):len(x.envs)]
	} else {
		clear(x.envs[envLo:])
		x.envs = x.envs[:envLo]
	}
	ev.checked = ev.checked && spec.AuthorityCheck
	if n > 0 && ev.seq <= l.events[n-1].seq {
		x.unordered = true
	}
	return true
}

// eventMember reads one member of an event; false means the event would be refused whatever its
// operation.
func (x *lexer) eventMember(l *log, name string, ev *event, s *eventRead) bool {
	r := &x.r
	switch name {
	case "seq":
		ev.seq, s.seqOK = x.integer(1)
		return s.seqOK
	case "op":
		if r.Peek() != jsonlex.String {
			return false
		}
		s.op = x.op(r.Str())
		return s.op != nil
	case "key":
		s.key, s.keyOK = x.readKey()
	case "session":
		s.session, s.sessionOK = x.readScope()
	case "principal":
		switch r.Peek() {
		case jsonlex.Null:
			r.Null()
		case jsonlex.String:
			ev.principal, ev.hasPrincipal = r.Str(), true
			if ev.principal == "" {
				return false
			}
			if l.ids != nil {
				ev.principal = x.principal(l.ids, ev.principal)
			}
		default:
			return false
		}
	case "to":
		switch r.Peek() {
		case jsonlex.Null:
			r.Null()
		case jsonlex.String:
			s.to = r.Str()
			s.toSeen, s.toOK = true, s.to != ""
		default:
			s.toSeen = true
			r.Skip()
		}
	case "version":
		ev.version, s.versionOK = x.integer(0)
	case "envelope":
		x.readEnvelope(s)
	case "authority_checked":
		if r.Peek() == jsonlex.Bool {
			ev.checked = r.Bool()
		} else {
			r.Skip()
		}
	default:
		r.Skip()
	}
	return true
}

// readEnvelope reads an envelope (FE-R-10): an array of strings, kept in the log's one pool.
func (x *lexer) readEnvelope(s *eventRead) {
	r := &x.r
	switch r.Peek() {
	case jsonlex.Null:
		r.Null()
		return
	case jsonlex.Array:
	default:
		s.envSeen = true
		r.Skip()
		return
	}
	s.envSeen, s.envOK = true, true
	for r.Array(); r.More(); {
		if r.Peek() != jsonlex.String {
			s.envOK = false
			r.Skip()
			continue
		}
		x.envs = append(x.envs, r.Str())
	}
}

// op is the operation named s, nil when it is none of the mechanics'.
func (x *lexer) op(s string) *opInfo {
	for i := range x.ops {
		if x.ops[i].name == s {
			return &x.ops[i]
		}
	}
	return nil
}

// named reports whether every member of a scope names one of the log's dimensions.
func (x *lexer) named(l *log, sp span) bool {
	for _, m := range x.mems[sp.lo:sp.hi] {
		if !slices.Contains(l.dims, x.str(m.name)) {
			return false
		}
	}
	return true
}

// resolve checks what needed the whole text (dimensions, table, unique seqs) and reads the keys'
// identities, numbering slots in text order as readLog does: the events', then the snapshot's.
func (x *lexer) resolve(ms *rules.MutLogSet, l *log, factsOnly bool) bool {
	for _, s := range x.sessions {
		if !x.named(l, s) {
			return false
		}
	}
	if !x.resolvePrincipals(l, ms.Criteria().Canonicalization, factsOnly) {
		return false
	}
	if factsOnly {
		l.factsOnly = true
		for _, k := range x.dkeys {
			if !x.named(l, k.scope) {
				return false
			}
		}
	} else if x.space != nil {
		if !x.resolveShared(ms, l) {
			return false
		}
	} else if !x.resolveKeys(ms, l) {
		return false
	}
	// Seqs must be unique (event_seq_duplicate). A log is mostly written in strictly increasing
	// seq order, which readEvent saw as it read each event beside the one before: such a log is
	// sorted and has no repeat, with no further pass over its events. Else, sorted, a repeat is a
	// neighbour; it is sorted only when it is not in order, since sorting moves events by value
	// (and each move of their strings is a write barrier while the collector runs).
	if !x.unordered {
		return true
	}
	if !inSeqOrder(l.events) {
		slices.SortFunc(l.events, func(a, b event) int { return cmp.Compare(a.seq, b.seq) })
	}
	for i := 1; i < len(l.events); i++ {
		if l.events[i].seq == l.events[i-1].seq {
			return false
		}
	}
	return true
}

// inSeqOrder reports whether the events are in non-decreasing seq order.
func inSeqOrder(evs []event) bool {
	for i := 1; i < len(evs); i++ {
		if evs[i].seq < evs[i-1].seq {
			return false
		}
	}
	return true
}

func (x *lexer) resolveKeys(ms *rules.MutLogSet, l *log) bool {
	steps := ms.Criteria().Canonicalization
	k := l.ids // its arena holds the identities: given back with the tables
	if k == nil {
		k = getKeys()
		l.ids = k
	}
	// Keys repeat: a max-size log names a few hundred slots in two thousand keys. A larger log of
	// slots grows the slices once or twice.
	l.slots = freeSlotIDs.get(len(x.dkeys) + 8)
	l.scopes = freeScopes.get(cap(l.slots) * len(l.dims))
	x.res = slices.Grow(x.res[:0], len(x.dkeys))[:len(x.dkeys)] // zero: releaseLexer cleared it
	ki := 0
	for i := range l.events {
		ev := &l.events[i]
		if !ev.keyed {
			continue
		}
		r := x.key(k, l, steps, x.keys[ki], false)
		ki++
		if !r.ok {
			return false
		}
		ev.raw, ev.slot = r.raw, r.slot
	}
	for i, d := range x.snaps {
		r := x.key(k, l, steps, d, true)
		if !r.ok {
			return false
		}
		l.snapshot[i].slot = r.slot
	}
	return true
}

// key is the identities of distinct key d as keyOf reads them, and whether its scope names only
// the log's dimensions, read the first time it is asked for. The events' keys are all asked for
// before the snapshot's, so a raw identity is never asked for after only the slot was read.
func (x *lexer) key(k *keys, l *log, steps []string, d int32, slotOnly bool) *readKey {
	r := &x.res[d]
	if r.read {
		return r
	}
	pk := &x.dkeys[d]
	mems := k.mems[:0]
	for _, m := range x.mems[pk.scope.lo:pk.scope.hi] {
		mems = append(mems, scopeMem{name: x.str(m.name), val: x.str(m.val), present: m.present})
	}
	k.mems = mems
	raw, slot, named := k.keyOf(l, steps, mems, x.str(pk.name), slotOnly, false)
	clear(mems)
	*r = readKey{raw: raw, slot: slot, ok: named == len(mems), read: true}
	return r
}

// readKey is what x.key read of one distinct key.
type readKey struct {
	raw      string
	slot     int32
	ok, read bool
}

// resolvePrincipals builds the table (its ids unique, its grants naming dimensions, their values
// canonical unless factsOnly) and checks that every acting principal is in it (FE-R-8).
func (x *lexer) resolvePrincipals(l *log, steps []string, factsOnly bool) bool {
	if len(x.ids) == 0 {
		return true
	}
	l.table = make(map[string]*principal, len(x.ids))
	// The principals, their grants and the grants' members are cut from three slices.
	prs := make([]principal, len(x.ids))
	var grants [][]grantMember
	var members []grantMember
	if !factsOnly {
		n := 0
		for _, g := range x.grants {
			n += int(g.hi - g.lo)
		}
		grants, members = make([][]grantMember, 0, len(x.grants)), make([]grantMember, 0, n)
	}
	lo := int32(0)
	for i, id := range x.ids {
		if _, dup := l.table[id]; dup {
			return false
		}
		pr := &prs[i]
		gStart := len(grants)
		for _, g := range x.grants[lo:x.grantsOf[i]] {
			if !x.named(l, g) {
				return false
			}
			if factsOnly {
				continue
			}
			mStart := len(members)
			for _, m := range x.mems[g.lo:g.hi] {
				if m.present {
					members = append(members, grantMember{dim: dimIndex(l.dims, x.str(m.name)), val: canonical(steps, x.str(m.val))})
				}
			}
			var gm []grantMember // nil when no member is present, as readPrincipals leaves it
			if len(members) > mStart {
				gm = members[mStart:len(members):len(members)]
			}
			grants = append(grants, gm)
		}
		if len(grants) > gStart {
			pr.grants = grants[gStart:len(grants):len(grants)]
		}
		lo = x.grantsOf[i]
		l.table[id] = pr
	}
	if l.ids != nil { // the events named the principals of x.princ, and only those
		for p := range x.princ {
			if l.table[p] == nil {
				return false
			}
		}
	} else {
		for i := range l.events {
			if ev := &l.events[i]; ev.hasPrincipal && l.table[ev.principal] == nil {
				return false
			}
		}
	}
	for _, to := range x.tos {
		if l.table[to] == nil {
			return false
		}
	}
	return true
}
