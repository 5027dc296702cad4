package mutlog

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// event is one validated event. Its fields are laid out widest first, so that a max-size log's
// thousand events take 96 bytes each rather than 112.
type event struct {
	seq          int64
	version      int64
	op           string
	principal    string
	raw          string   // opaque identity (FE-R-13); never printed
	envelope     []string // nil: no envelope recorded
	slot         int32    // the canonical slot's number in log.slots
	hasPrincipal bool
	keyed        bool // the op names a key: raw and slot are set
	checked      bool // authority_checked exactly true
}

// grantMember is one present member of a grant: the dimension's index in log.dims (-1 when the
// export names a dimension it did not declare, which then covers nothing) and its canonical value.
type grantMember struct {
	dim int
	val string
}

type principal struct {
	grants [][]grantMember
}

// dimVal is one dimension of a slot's canonical scope; ok is false when the key omits it.
type dimVal struct {
	val string
	ok  bool
}

// log is a validated export, its events in seq order.
type log struct {
	mode       string
	dims       []string
	table      map[string]*principal // nil when not declared
	principals int
	events     []event // seq order
	// slots are the canonical slots of the events and the snapshot, numbered in the order read;
	// scopes holds each one's canonical scope, len(dims) entries per slot.
	slots    []string
	scopes   []dimVal
	snapshot []snapEntry
	hasSnap  bool
	// factsOnly: read for the log facts only (lexRead), without the keys' slots and the grants.
	factsOnly bool
	// shared: a chunk of a whole log whose slot numbers are the whole read's (slotSpace), with
	// no slots of its own.
	shared bool
	// envs holds the events' envelopes (lexRead): given back with the events.
	envs []string
	// declared are the criteria's declarations the export makes (FE-R-34, FE-R-38).
	declared []rules.DeclaredFact
	// ids is the scratch whose arena holds the slots' and the events' identities; it goes back
	// to its pool with the tables (releaseTables), not before, since the identities are read
	// until the report is made.
	ids *keys
}

// scope is slot n's canonical scope, one entry per dimension.
func (l *log) scope(n int32) []dimVal {
	d := len(l.dims)
	return l.scopes[int(n)*d : int(n)*d+d : int(n)*d+d]
}

type snapEntry struct {
	slot    int32
	version int64
}

// canonical applies the criteria's steps in order (FE-R-12). Most values are already canonical,
// so a step that changes nothing returns its input (trimming returns a part of it) and costs no
// allocation. keyOf applies the same steps as it writes an identity (canonSteps).
func canonical(steps []string, s string) string {
	for _, st := range steps {
		switch st {
		case "trim_ascii_space":
			s = trimASCIISpace(s)
		case "ascii_lower":
			s = asciiLower(s)
		}
	}
	return s
}

func isASCIISpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimASCIISpace(s string) string {
	for s != "" && isASCIISpace(s[0]) {
		s = s[1:]
	}
	for s != "" && isASCIISpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func asciiLower(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

func appendLP(b []byte, s string) []byte {
	b = appendLen(b, len(s))
	b = append(b, ':')
	return append(b, s...)
}

// appendLen writes n in decimal: by hand below 100 (every key part of a real log), as
// strconv.AppendInt would.
func appendLen(b []byte, n int) []byte {
	switch {
	case n < 10:
		return append(b, byte('0'+n))
	case n < 100:
		return append(b, byte('0'+n/10), byte('0'+n%10))
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// readLog turns a validated export into a log.
func readLog(ms *rules.MutLogSet, top *jsontree.Value) *log {
	crit := ms.Criteria()
	l := &log{mode: top.Get("forget_mode").Str()}
	for _, d := range ms.Declared() {
		if v := top.Get(d.Member); v.Kind() == jsontree.String && v.Str() == d.Value {
			l.declared = append(l.declared, d)
		}
	}
	ds := top.Get("scope_dimensions").Arr()
	l.dims = make([]string, 0, len(ds))
	for i := range ds {
		l.dims = append(l.dims, ds[i].Str())
	}
	l.readPrincipals(top.Get("principals").Arr(), crit.Canonicalization)
	evs := top.Get("events").Arr()
	snap := top.Get("snapshot")
	k := getKeys()
	l.ids = k
	l.slots = make([]string, 0, len(evs)/2+len(snap.Arr()))
	l.scopes = make([]dimVal, 0, cap(l.slots)*len(l.dims))
	l.readEvents(crit, evs, k)
	if snap.Kind() == jsontree.Array {
		l.readSnapshot(snap.Arr(), crit.Canonicalization, k)
	}
	return l
}

// readPrincipals reads the principals table: each principal's grants, their values canonical.
func (l *log) readPrincipals(ps []jsontree.Value, steps []string) {
	if len(ps) == 0 {
		return
	}
	l.table = make(map[string]*principal, len(ps))
	l.principals = len(ps)
	for i := range ps {
		pr := &principal{}
		gs := ps[i].Get("grants").Arr()
		for j := range gs {
			var g []grantMember
			for _, mem := range gs[j].Obj() {
				if mem.Val.Present() {
					g = append(g, grantMember{dim: dimIndex(l.dims, mem.Name), val: canonical(steps, mem.Val.Str())})
				}
			}
			pr.grants = append(pr.grants, g)
		}
		l.table[ps[i].Get("id").Str()] = pr
	}
}

// readEvents reads the events, each by what its operation carries, and orders them by seq.
func (l *log) readEvents(crit *rules.MutLogCriteria, evs []jsontree.Value, k *keys) {
	// Every event's envelope is cut from one slice, sized by a first pass.
	envs := 0
	for i := range evs {
		if env := evs[i].Get("envelope"); env.Kind() == jsontree.Array && crit.OpsEvents[evs[i].Get("op").Str()].Envelope {
			envs += len(env.Arr())
		}
	}
	envPool := make([]string, 0, envs)
	l.events = make([]event, 0, len(evs))
	for i := range evs {
		e := &evs[i]
		ev := event{op: e.Get("op").Str()}
		ev.seq, _ = integer(e.Get("seq"), 1)
		if p := e.Get("principal"); p.Present() {
			ev.principal, ev.hasPrincipal = p.Str(), true
		}
		spec := crit.OpsEvents[ev.op]
		if spec.Target == "key" {
			key := e.Get("key")
			ev.keyed = true
			ev.raw, ev.slot = k.key(l, crit.Canonicalization, key.Get("scope"), key.Get("name").Str(), false)
		}
		if spec.Version {
			ev.version, _ = integer(e.Get("version"), 0)
		}
		if env := e.Get("envelope"); spec.Envelope && env.Kind() == jsontree.Array {
			es := env.Arr()
			start := len(envPool)
			for j := range es {
				envPool = append(envPool, es[j].Str())
			}
			ev.envelope = envPool[start:len(envPool):len(envPool)]
		}
		if spec.AuthorityCheck {
			a := e.Get("authority_checked")
			ev.checked = a.Kind() == jsontree.Bool && a.Bool()
		}
		l.events = append(l.events, ev)
	}
	// Seqs are unique (event_seq_duplicate), so an unstable sort orders them one way only.
	slices.SortFunc(l.events, func(a, b event) int { return cmp.Compare(a.seq, b.seq) })
}

// readSnapshot reads the snapshot's entries: each one's slot and version.
func (l *log) readSnapshot(es []jsontree.Value, steps []string, k *keys) {
	l.hasSnap = true
	l.snapshot = make([]snapEntry, 0, len(es))
	for i := range es {
		key := es[i].Get("key")
		_, slot := k.key(l, steps, key.Get("scope"), key.Get("name").Str(), true)
		v, _ := integer(es[i].Get("version"), 0)
		l.snapshot = append(l.snapshot, snapEntry{slot: slot, version: v})
	}
}

// covers reports whether a principal's grants cover a slot's canonical scope (FE-R-23).
func (p *principal) covers(scope []dimVal) bool {
	for _, g := range p.grants {
		ok := true
		for _, m := range g {
			if m.dim < 0 || !scope[m.dim].ok || scope[m.dim].val != m.val {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// slotState is one slot during replay.
type slotState struct {
	touched   bool // named by an event the replay reads
	status    string
	version   int64
	lastWrite int64
	forget    *event // the latest forget on the slot (the governing forget of a reinsert)
	raw       string // the first raw key that named it
	aliased   bool   // another raw key named it too
}

// replayed is the outcome of the replay: the events that are judged, in seq order.
type replayed struct {
	slots       []slotState // by slot number
	order       []int32     // the touched slots in first-seen order
	reinserts   []reinsert
	reopens     []*event // effective reopens
	forgotNotLv int
	reopenNoop  int
}

type reinsert struct {
	ev     *event
	forget *event
}

// replayer moves every slot through the criteria's transition table (FE-R-14..FE-R-19), an event
// at a time in seq order: the audit replays the events in prepare's pass over them
// (evaluate.go), which walks them for the log facts anyway.
type replayer struct {
	spec *rules.ReplaySpec
	// The mode's table, rows[:nrows] and moves[:nmoves] (a mode names a handful of operations and
	// statuses): held by value and cut at each event, so that the replayer holds no pointer into
	// itself and stays on its caller's stack.
	rows          [8]opRow
	moves         [48]string
	nrows, nmoves int
	// big is the table when it outgrows rows and moves (a larger table than a real one).
	big *transitions
	r   *replayed
}

func (p *replayer) start(ms *rules.MutLogSet, l *log) {
	p.spec = &ms.Criteria().Replay
	p.setTable(p.spec.Modes[l.mode])
	p.r = &replayed{slots: freeStates.get(len(l.slots))[:len(l.slots)], order: freeOrder.get(len(l.slots)),
		reinserts: freeReinserts.get(0), reopens: freeReopens.get(0)}
}

// setTable lays a mode's table out in rows and moves, or in big when it does not fit them.
func (p *replayer) setTable(mode map[string]map[string]string) {
	t := transitionsOf(mode, p.rows[:0], p.moves[:0])
	p.big = nil
	if len(t.rows) > len(p.rows) || len(t.pairs) > len(p.moves) {
		big := transitionsOf(mode, nil, nil)
		p.big = &big
	}
	p.nrows, p.nmoves = min(len(t.rows), len(p.rows)), min(len(t.pairs), len(p.moves))
}

// table is the mode's table, cut from the replayer where it fits.
func (p *replayer) table() transitions {
	if p.big != nil {
		return *p.big
	}
	return transitions{rows: p.rows[:p.nrows], pairs: p.moves[:p.nmoves]}
}

// event replays one event, the next in seq order.
func (p *replayer) event(ev *event) {
	if !ev.keyed { // a reassign names a session, not a slot (rules.MutLogOps)
		return
	}
	r := p.r
	table := p.table()
	s, act := r.step(p.spec, &table, ev, false)
	switch act {
	case reinsertWrite:
		r.reinserts = append(r.reinserts, reinsert{ev: ev, forget: s.forget})
	case governingForget:
		s.forget = ev
	case movedReopen:
		r.reopens = append(r.reopens, ev)
	}
}

// stepAction is what an event's step leaves to its caller: the audit collects reinserts and
// reopens and keeps the forget itself; the whole-log fold decides them at once and keeps a copy.
type stepAction uint8

const (
	noAction        stepAction = iota
	reinsertWrite              // a write out of a status the criteria's reinsert_from names
	governingForget            // a forget, which now governs its slot
	movedReopen                // a reopen the table moves
)

// step moves ev's slot through the mode's table (FE-R-14..FE-R-19), with the counts replay keeps,
// and says what is left to the caller. A slot's first event gives it its raw key, copied when
// clone is set (the whole-log fold's events live in chunks it reuses). The slot's forget is the
// one before ev.
func (r *replayed) step(rp *rules.ReplaySpec, table *transitions, ev *event, clone bool) (*slotState, stepAction) {
	s := &r.slots[ev.slot]
	if !s.touched {
		raw := ev.raw
		if clone {
			raw = strings.Clone(raw)
		}
		*s = slotState{touched: true, status: rp.Initial, raw: raw}
		r.order = append(r.order, ev.slot)
	} else if ev.raw != s.raw {
		s.aliased = true
	}
	from := s.status
	to, moves := table.move(ev.op, from)
	if moves {
		s.status = to
	}
	switch ev.op {
	case "write":
		s.version, s.lastWrite = ev.version, ev.seq
		if contains(rp.ReinsertFrom, from) {
			return s, reinsertWrite
		}
	case "forget":
		if from != rp.Live {
			r.forgotNotLv++
		}
		return s, governingForget
	case "reopen":
		if moves {
			return s, movedReopen
		}
		r.reopenNoop++
	}
	return s, noAction
}

// opRow is one operation's moves in a mode's transition table (the criteria's replay.modes):
// pairs[lo:hi] of the table, from and to in turn.
type opRow struct {
	op     string
	lo, hi int
}

// transitions is a mode's transition table in rows scanned in place: replay looks a move up for
// every event, and a few comparisons of short strings cost less than two lookups in maps of
// strings.
type transitions struct {
	rows  []opRow
	pairs []string
}

// transitionsOf lays a mode's table out in rows and pairs, growing them past their capacity only
// for a larger table than a real one.
func transitionsOf(mode map[string]map[string]string, rows []opRow, pairs []string) transitions {
	for op, moves := range mode {
		lo := len(pairs)
		for from, to := range moves {
			pairs = append(pairs, from, to)
		}
		rows = append(rows, opRow{op: op, lo: lo, hi: len(pairs)})
	}
	return transitions{rows: rows, pairs: pairs}
}

// move is where status from goes under op, and whether the table has that move (as a lookup in
// the criteria's maps answers).
func (t *transitions) move(op, from string) (string, bool) {
	for _, r := range t.rows {
		if r.op != op {
			continue
		}
		for j := r.lo; j < r.hi; j += 2 {
			if t.pairs[j] == from {
				return t.pairs[j+1], true
			}
		}
		return "", false
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
