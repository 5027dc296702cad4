package mutlog

import (
	"cmp"
	"runtime"
	"slices"

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

// pendingKey is a key read before the log's dimensions are known: its name and its scope's
// members, mems[lo:hi] of the reader's pool.
type pendingKey struct {
	name   string
	text   string // the key object as written: keys written alike are read alike
	lo, hi int32
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
	mems     []scopeMem   // the scopes' members as read
	keys     []pendingKey // each keyed event's key, in text order
	snaps    []pendingKey // each snapshot entry's key
	sessions []pendingKey // each reassign's session (name unused)
	tos      []string     // each event's "to" ("" when absent), checked against the table
	grants   []pendingKey // the principals' grants (name unused)
	grantsOf []int32      // where each principal's grants end in grants
	ids      []string     // the principals' ids
	ops      []opInfo
	envs     []string           // the envelopes' entries: the log keeps them, so this is not reused
	seen     map[string]readKey // the keys read so far, by their text
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
	clear(x.mems)
	clear(x.keys)
	clear(x.snaps)
	clear(x.sessions)
	clear(x.tos)
	clear(x.grants)
	clear(x.ids)
	clear(x.seen)
	x.mems, x.keys, x.snaps, x.sessions, x.tos = x.mems[:0], x.keys[:0], x.snaps[:0], x.sessions[:0], x.tos[:0]
	x.grants, x.grantsOf, x.ids, x.envs = x.grants[:0], x.grantsOf[:0], x.ids[:0], nil
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
	x := getLexer()
	defer releaseLexer(x)
	crit := ms.Criteria()
	x.ops = x.ops[:0]
	for op, spec := range crit.OpsEvents {
		x.ops = append(x.ops, opInfo{name: op, spec: spec})
	}
	x.r.Reset(body, crit.Caps.JSONDepth)
	l := &log{}
	top := x.readTop(ms, l)
	if !top || !x.r.Done() {
		return nil
	}
	if !x.resolve(ms, l, factsOnly) {
		return nil
	}
	return l
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

// readScope reads a scope object's members into the pool: false when it is not an object or a
// value is neither a string nor null. Whether each name is a declared dimension is checked later.
func (x *lexer) readScope() (lo, hi int32, ok bool) {
	r := &x.r
	if r.Peek() != jsonlex.Object {
		r.Skip()
		return 0, 0, false
	}
	lo = int32(len(x.mems))
	ok = true
	for r.Object(); ; {
		name, more := r.Member()
		if !more {
			break
		}
		switch r.Peek() {
		case jsonlex.String:
			x.mems = append(x.mems, scopeMem{name: name, val: r.Str(), present: true})
		case jsonlex.Null:
			r.Null()
			x.mems = append(x.mems, scopeMem{name: name})
		default:
			ok = false
			r.Skip()
		}
	}
	return lo, int32(len(x.mems)), ok
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
				k.name = r.Str()
			} else {
				r.Skip()
			}
		case "scope":
			scoped = true
			var good bool
			k.lo, k.hi, good = x.readScope()
			ok = ok && good
		default:
			r.Skip()
		}
	}
	k.text = r.Text(start, r.Offset())
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
		lo, hi, ok := x.readScope()
		if !ok {
			return false
		}
		x.grants = append(x.grants, pendingKey{lo: lo, hi: hi})
	}
	return true
}

func (x *lexer) readSnapshot(ms *rules.MutLogSet, l *log) bool {
	r := &x.r
	if list, ok := x.optionalArray(); !list {
		return ok
	}
	l.hasSnap = true
	l.snapshot = make([]snapEntry, 0, 16)
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
		x.snaps = append(x.snaps, k)
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
