package mutlog

import (
	"cmp"
	"runtime"
	"slices"
	"unsafe"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonlex"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The log reader of the request path: one pass over the bytes with a strict pull reader
// (evaluator/internal/jsonlex) that records each event's facts as it reads them, with no value
// tree. It reads only logs that pass every refusal check: at the first sign of one that fails (or
// of a text that is not strict JSON) it gives up, and read.go decodes the body into a tree and
// runs the checks in the criteria's order, so that a refusal is the one it always was. What it
// cannot check where it reads (the members of a scope name declared dimensions, a principal is in
// the table: both are written after the events when the members are sorted) it checks once the
// text is read, as it resolves each key.

// ref is a string the pull reader returned, by where it is: src[off:off+n] of the text, or
// esc[-off-1] when it had escapes (the reader unescaped it elsewhere). Offsets keep the scratch
// below free of pointers: recording a member costs no write barrier while the collector runs, the
// pooled scratch is never scanned, and giving it back needs no clearing.
type ref struct{ off, n int32 }

// memRef is one member of a scope object as read: its name and its value, absent when null.
type memRef struct {
	name, val ref
	present   bool
}

// span is one scope's members, mems[lo:hi] of the reader's pool.
type span struct{ lo, hi int32 }

// pendingKey is a key read before the log's dimensions are known: its name, its text as written
// (keys written alike are read alike, so each distinct text is resolved once) and its scope.
type pendingKey struct {
	name, text ref
	scope      span
}

// opInfo is what the mechanics read of one operation (rules.MutLogOps and the criteria's
// ops_events, which the criteria's validation keeps in step).
type opInfo struct {
	name string // the criteria's own string, so that no part of the body outlives the audit
	spec rules.OpSpec
}

// lexer is one read's scratch, pooled: the pull reader and what is recorded before it can be
// resolved.
type lexer struct {
	r        jsonlex.Reader
	src      string   // the text being read
	esc      []string // the strings refs name that had escapes
	mems     []memRef // the scopes' members as read
	dkeys    []pendingKey
	keys     []int32 // each keyed event's key, in text order, by its index in dkeys
	snaps    []int32 // each snapshot entry's key, likewise
	sessions []span  // each reassign's session
	tos      []string
	grants   []span  // the principals' grants
	grantsOf []int32 // where each principal's grants end in grants
	ids      []string
	ops      []opInfo
	envs     []string         // the envelopes' entries: the log keeps them, so this is not reused
	seen     map[string]int32 // the distinct key texts read so far, to their index in dkeys
	res      []readKey        // what resolve read of each of dkeys
	// space: the keys are numbered in a whole read's slots (whole_slots.go), nil otherwise.
	space *slotSpace
	// factsOnly: the keys are only checked to name dimensions, which costs less than finding
	// which of them are written alike.
	factsOnly bool
	// unordered: an event's seq was not above the one read before it (readEvent).
	unordered bool
	// princ holds each distinct principal the events name, to its copy in the log's arena
	// (principal): kept only for a log of its own (l.ids set), not for a whole log's chunk.
	princ map[string]string
}

var freeLexers = make(chan *lexer, runtime.GOMAXPROCS(0))

func getLexer() *lexer {
	select {
	case x := <-freeLexers:
		return x
	default:
		return &lexer{}
	}
}

// releaseLexer gives the scratch back once the log is read; it keeps no string of the body.
func releaseLexer(x *lexer) {
	x.r.Release()
	// Only what holds strings is cleared; the rest holds offsets and numbers.
	clear(x.esc)
	clear(x.tos)
	clear(x.ids)
	clear(x.seen)
	clear(x.res)
	x.space, x.unordered = nil, false
	clear(x.princ)
	x.src, x.esc, x.mems, x.dkeys, x.keys, x.snaps = "", x.esc[:0], x.mems[:0], x.dkeys[:0], x.keys[:0], x.snaps[:0]
	x.sessions, x.tos, x.grants, x.grantsOf, x.ids, x.envs, x.res = x.sessions[:0], x.tos[:0], x.grants[:0], x.grantsOf[:0], x.ids[:0], nil, x.res[:0]
	select {
	case freeLexers <- x:
	default:
	}
}

// lexRead reads a log that passes every refusal check, or returns nil: the caller then reads the
// body the checking way. factsOnly skips what only the audit reads (the keys' identities and
// slots, the grants' canonical values): the log then serves the log facts and the per-event
// decisions that read neither.
func lexRead(ms *rules.MutLogSet, body []byte, factsOnly bool) *log {
	return lexReadIn(ms, body, factsOnly, nil)
}

// lexReadIn is lexRead numbering the keys in sp when it is not nil.
func lexReadIn(ms *rules.MutLogSet, body []byte, factsOnly bool, sp *slotSpace) *log {
	x := getLexer()
	defer releaseLexer(x)
	x.space = sp
	crit := ms.Criteria()
	x.ops = x.ops[:0]
	for op, spec := range crit.OpsEvents {
		x.ops = append(x.ops, opInfo{name: op, spec: spec})
	}
	x.r.Reset(body, crit.Caps.JSONDepth)
	x.src, x.factsOnly = unsafe.String(unsafe.SliceData(body), len(body)), factsOnly
	if x.seen == nil {
		x.seen, x.princ = map[string]int32{}, map[string]string{}
	}
	l := &log{}
	if sp == nil {
		l.ids = getKeys() // its arena keeps the principals' copies, and then the keys' identities
	}
	if !x.readTop(ms, l) || !x.r.Done() || !x.resolve(ms, l, factsOnly) {
		if l.ids != nil { // the log is dropped: nothing reads its copies
			releaseKeys(l.ids)
		}
		return nil
	}
	l.envs = x.envs
	return l
}

// principal is the copy of an event's principal s in the log's arena: each distinct principal is
// copied once, the first time an event names it, and looked up again while its bytes are still
// in the cache. The events then name a few dozen strings that stay in the cache, where each
// pointed into the text where it was read: checking each against the principals table, and
// looking its grants up for each decision, read the text a second time, a cache miss an event.
func (x *lexer) principal(k *keys, s string) string {
	if p, ok := x.princ[s]; ok {
		return p
	}
	p := k.str(unsafe.Slice(unsafe.StringData(s), len(s)))
	x.princ[p] = p
	return p
}

// topSeen are the top-level members a valid log must have.
type topSeen struct{ format, mode, dims, events bool }

// readTop reads the top-level object; false means the log would be refused.
func (x *lexer) readTop(ms *rules.MutLogSet, l *log) bool {
	crit, r := ms.Criteria(), &x.r
	if r.Peek() != jsonlex.Object {
		return false
	}
	var seen topSeen
	for r.Object(); ; {
		name, ok := r.Member()
		if !ok {
			break
		}
		var good bool
		switch name {
		case "format":
			seen.format = true
			good = r.Peek() == jsonlex.String && r.Str() == crit.Format
			x.declare(ms, l, name, crit.Format)
		case "forget_mode":
			seen.mode = true
			good = x.readMode(ms, l)
		case "scope_dimensions":
			seen.dims = true
			good = x.readDims(ms, l)
		case "principals":
			good = x.readPrincipals(l)
		case "events":
			seen.events = true
			good = x.readEvents(ms, l)
		case "snapshot":
			good = x.readSnapshot(ms, l)
		default:
			good = true
			if r.Peek() == jsonlex.String {
				x.declare(ms, l, name, r.Str())
			} else {
				r.Skip()
			}
		}
		if !good || r.Failed() {
			return false
		}
	}
	return seen.format && seen.mode && seen.dims && seen.events
}

// declare records the criteria's declarations that a string member makes (FE-R-34, FE-R-38), in
// the criteria's order as readLog does.
func (x *lexer) declare(ms *rules.MutLogSet, l *log, name, val string) {
	for _, d := range ms.Declared() {
		if d.Member == name && d.Value == val {
			l.declared = append(l.declared, d)
		}
	}
	if len(l.declared) > 1 {
		// Members arrive in text order; the declarations are kept in the criteria's.
		order := ms.Declared()
		slices.SortStableFunc(l.declared, func(a, b rules.DeclaredFact) int {
			return cmp.Compare(slices.IndexFunc(order, func(d rules.DeclaredFact) bool { return d == a }),
				slices.IndexFunc(order, func(d rules.DeclaredFact) bool { return d == b }))
		})
	}
}

func (x *lexer) readMode(ms *rules.MutLogSet, l *log) bool {
	if x.r.Peek() != jsonlex.String {
		return false
	}
	m := x.r.Str()
	x.declare(ms, l, "forget_mode", m)
	for mode := range ms.Criteria().Replay.Modes {
		if mode == m {
			l.mode = mode // the criteria's string, not the body's: the report carries it
			return true
		}
	}
	return false
}

func (x *lexer) readDims(ms *rules.MutLogSet, l *log) bool {
	r := &x.r
	if r.Peek() != jsonlex.Array {
		return false
	}
	l.dims = make([]string, 0, 4)
	for r.Array(); r.More(); {
		if r.Peek() != jsonlex.String {
			return false
		}
		d := r.Str()
		if d == "" || slices.Contains(l.dims, d) || len(l.dims) == ms.Criteria().Caps.ScopeDimensions {
			return false
		}
		l.dims = append(l.dims, string([]byte(d))) // the report's coverage carries the names
	}
	return len(l.dims) > 0
}

// ref is where a string the reader returned is.
func (x *lexer) ref(s string) ref {
	if len(s) == 0 {
		return ref{}
	}
	at := uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(unsafe.StringData(x.src)))
	if at < uintptr(len(x.src)) {
		return ref{off: int32(at), n: int32(len(s))}
	}
	x.esc = append(x.esc, s)
	return ref{off: -int32(len(x.esc)), n: int32(len(s))}
}

// str is the string a ref names.
func (x *lexer) str(r ref) string {
	if r.off < 0 {
		return x.esc[-r.off-1]
	}
	return x.src[r.off : r.off+r.n]
}

// readScope reads a scope object's members into the pool: false when it is not an object or a
// value is neither a string nor null. Whether each name is a declared dimension is checked later.
func (x *lexer) readScope() (sp span, ok bool) {
	r := &x.r
	if r.Peek() != jsonlex.Object {
		r.Skip()
		return span{}, false
	}
	sp.lo = int32(len(x.mems))
	ok = true
	for r.Object(); ; {
		name, more := r.Member()
		if !more {
			break
		}
		switch r.Peek() {
		case jsonlex.String:
			x.mems = append(x.mems, memRef{name: x.ref(name), val: x.ref(r.Str()), present: true})
		case jsonlex.Null:
			r.Null()
			x.mems = append(x.mems, memRef{name: x.ref(name)})
		default:
			ok = false
			r.Skip()
		}
	}
	sp.hi = int32(len(x.mems))
	return sp, ok
}

// distinct is the index in dkeys of a key read last (its members the last of the pool): a key
// written as one before it is that one, and its members are dropped again (unless factsOnly).
func (x *lexer) distinct(k pendingKey) int32 {
	if x.factsOnly {
		x.dkeys = append(x.dkeys, k)
		return int32(len(x.dkeys) - 1)
	}
	text := x.str(k.text)
	if i, ok := x.seen[text]; ok {
		if k.scope.hi == int32(len(x.mems)) {
			x.mems = x.mems[:k.scope.lo]
		}
		return i
	}
	i := int32(len(x.dkeys))
	x.dkeys = append(x.dkeys, k)
	x.seen[text] = i
	return i
}

// readKey reads a key object (FE-R-11): a string name and a scope.
func (x *lexer) readKey() (k pendingKey, ok bool) {
	r := &x.r
	if r.Peek() != jsonlex.Object {
		r.Skip()
		return k, false
	}
	var named, scoped bool
	ok = true
	start := r.Offset()
	for r.Object(); ; {
		name, more := r.Member()
		if !more {
			break
		}
		switch name {
		case "name":
			named = r.Peek() == jsonlex.String
			if named {
				k.name = x.ref(r.Str())
			} else {
				r.Skip()
			}
		case "scope":
			scoped = true
			var good bool
			k.scope, good = x.readScope()
			ok = ok && good
		default:
			r.Skip()
		}
	}
	k.text = ref{off: int32(start), n: int32(r.Offset() - start)}
	return k, ok && named && scoped
}

// optionalArray starts reading a member that may be null or an array: a null is consumed (list
// false, ok true), an array is opened (list true); any other kind is not read (ok false).
func (x *lexer) optionalArray() (list, ok bool) {
	r := &x.r
	switch r.Peek() {
	case jsonlex.Null:
		r.Null()
		return false, true
	case jsonlex.Array:
		r.Array()
		return true, true
	}
	return false, false
}

// readPrincipals reads the principals table (FE-R-8); the grants' dimensions are checked later.
func (x *lexer) readPrincipals(l *log) bool {
	r := &x.r
	if list, ok := x.optionalArray(); !list {
		return ok
	}
	for r.More() {
		if r.Peek() != jsonlex.Object {
			return false
		}
		var id bool
		for r.Object(); ; {
			name, more := r.Member()
			if !more {
				break
			}
			switch name {
			case "id":
				if r.Peek() != jsonlex.String {
					return false
				}
				s := r.Str()
				id = s != ""
				x.ids = append(x.ids, s)
			case "grants":
				if !x.readGrants() {
					return false
				}
			default:
				r.Skip()
			}
		}
		if !id {
			return false
		}
		x.grantsOf = append(x.grantsOf, int32(len(x.grants)))
	}
	l.principals = len(x.ids)
	return true
}

func (x *lexer) readGrants() bool {
	r := &x.r
	if list, ok := x.optionalArray(); !list {
		return ok
	}
	for r.More() {
		sp, ok := x.readScope()
		if !ok {
			return false
		}
		x.grants = append(x.grants, sp)
	}
	return true
}

func (x *lexer) readSnapshot(ms *rules.MutLogSet, l *log) bool {
	r := &x.r
	if list, ok := x.optionalArray(); !list {
		return ok
	}
	l.hasSnap = true
	l.snapshot = freeSnaps.get(16)
	for r.More() {
		if r.Peek() != jsonlex.Object || len(l.snapshot) == ms.Criteria().Caps.SnapshotEntries {
			return false
		}
		var k pendingKey
		var keyed, versioned bool
		var e snapEntry
		for r.Object(); ; {
			name, more := r.Member()
			if !more {
				break
			}
			switch name {
			case "key":
				k, keyed = x.readKey()
			case "version":
				e.version, versioned = x.integer(0)
			default:
				r.Skip()
			}
		}
		if !keyed || !versioned {
			return false
		}
		x.snaps = append(x.snaps, x.distinct(k))
		l.snapshot = append(l.snapshot, e)
	}
	return true
}

// integer reads an integer under FE-R-9 (refuse.go's integer, on the literal as read).
func (x *lexer) integer(lo int64) (int64, bool) {
	if x.r.Peek() != jsonlex.Number {
		x.r.Skip()
		return 0, false
	}
	return integerLit(x.r.Num(), lo)
}
