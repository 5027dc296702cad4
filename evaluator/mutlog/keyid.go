package mutlog

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
)

// keys numbers one export's canonical slots and keeps one copy of each distinct raw key. A
// max-size log names a few hundred keys in a thousand events, so building each identity in one
// reused buffer and allocating it only the first time it is seen saves most of the work; the
// scratch is pooled (slabs.go) so that its buffers and tables are not rebuilt per audit.
type keys struct {
	buf   []byte // the identity being built
	arena []byte // where this export's identities are kept (str): the chunk being filled
	// chunks are the arena's chunks, kept from one log to the next: chunks[:next] hold this
	// log's identities, the rest are idle and zero. The identities were 60 of the 100 KB an
	// audit allocated, and what an audit allocates is what sets how often the collector runs.
	chunks [][]byte
	next   int
	spans  []int // the canonical values' [start, end) in buf, -1 for an absent dimension
	mems   []scopeMem
	slots  map[string]int32
	raws   map[string]string
}

// reset readies the scratch for the next log once nothing reads the last one's identities (the
// log's tables and events are given back with it, releaseTables): its chunks are cleared, so
// that an idle scratch holds no identity of the log, and written again by the next.
func (k *keys) reset() {
	clear(k.slots)
	clear(k.raws)
	k.buf, k.spans = k.buf[:0], k.spans[:0]
	for _, c := range k.chunks[:k.next] {
		clear(c[:cap(c)])
	}
	k.arena, k.next = nil, 0
}

// str keeps a copy of b in the arena: the identities of a log are written into a chunk at a
// time rather than allocated one by one. A chunk's bytes are written once in a log; they are
// written again only for a later log, after reset, when no string of the earlier one is read.
func (k *keys) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(k.arena)-len(k.arena) < len(b) {
		k.arena = k.chunk(len(b))
	}
	start := len(k.arena)
	k.arena = append(k.arena, b...)
	return unsafe.String(&k.arena[start], len(b))
}

// chunk is the next chunk of at least n bytes, empty: an idle one when it is large enough, else
// a new one. Chunks double from small, so that a small log costs little.
func (k *keys) chunk(n int) []byte {
	if k.next < len(k.chunks) && cap(k.chunks[k.next]) >= n {
		k.next++
		return k.chunks[k.next-1][:0]
	}
	c := make([]byte, 0, max(n, min(2*cap(k.arena), 16<<10), 512))
	k.chunks = slices.Insert(k.chunks, k.next, c)
	k.next++
	return c
}

// scopeMem is one member of a scope object as read: its name and its value, which is absent when
// the member is null.
type scopeMem struct {
	name, val string
	present   bool
}

// find is the value of dimension d in a scope's members.
func find(mems []scopeMem, d string) (string, bool) {
	for i := range mems {
		if mems[i].name == d {
			return mems[i].val, mems[i].present
		}
	}
	return "", false
}

// key reads the identities of a key of the value tree (the reader of a refused-then-accepted log,
// read.go): as keyOf, its scope's members read from the tree.
func (k *keys) key(l *log, steps []string, scope *jsontree.Value, name string, slotOnly bool) (raw string, slot int32) {
	mems := k.mems[:0]
	for _, m := range scope.Obj() {
		mems = append(mems, scopeMem{name: m.Name, val: m.Val.Str(), present: m.Val.Present()})
	}
	k.mems = mems
	raw, slot, _ = k.keyOf(l, steps, mems, name, slotOnly, true)
	clear(mems)
	return raw, slot
}

// keyOf reads a key's identities (FE-R-13): its raw identity, unless slotOnly, and the number of
// its canonical slot, numbering the slot and recording its canonical scope when it is new. named
// is how many of the scope's members name a dimension of the log: all of them in a valid key.
// Both identities are written alike, so a key that canonicalization leaves as it is (most of
// them) has its slot's identity as its raw one, with no second identity built or looked up.
//
// dedupe keeps one copy of each distinct raw identity: the tree path asks for every key as often
// as it is written, the one-pass reader once per distinct text (and two texts that differ share a
// raw identity only when they differ in member order, spacing or escapes, which it need not save on).
func (k *keys) keyOf(l *log, steps []string, mems []scopeMem, name string, slotOnly, dedupe bool) (raw string, slot int32, named int) {
	cs := stepsOf(steps)
	b, spans := k.buf[:0], k.spans[:0]
	same := true
	for _, d := range l.dims {
		i, there := findName(mems, d)
		if there {
			named++
		}
		if !there || !mems[i].present {
			b = append(b, '-')
			spans = append(spans, -1, -1)
			continue
		}
		var at int
		var un bool
		b, at, un = cs.appendLP(append(b, '+'), mems[i].val)
		same = same && un
		spans = append(spans, at, len(b))
	}
	b, _, un := cs.appendLP(b, name)
	same = same && un
	k.buf, k.spans = b, spans
	n, ok := k.slots[string(b)]
	if !ok {
		n = k.newSlot(l, b, spans)
	}
	switch {
	case slotOnly:
	case same:
		raw = l.slots[n]
	default:
		raw = k.rawOf(l, mems, name, dedupe)
	}
	return raw, n, named
}

// canonSteps are the criteria's canonicalization steps as keyOf applies them. Both steps are
// idempotent and commute (trimming never touches a letter, lowering never a space), so applying
// each that is listed once, in one pass, is what canonical does for any order and repeats.
type canonSteps struct{ trim, lower bool }

func stepsOf(steps []string) (c canonSteps) {
	for _, st := range steps {
		switch st {
		case "trim_ascii_space":
			c.trim = true
		case "ascii_lower":
			c.lower = true
		}
	}
	return c
}

// appendLP writes canonical(s) as appendLP does s, straight into b: it returns where the value
// starts in b and whether canonicalization left s as it was.
func (c canonSteps) appendLP(b []byte, s string) ([]byte, int, bool) {
	lo, hi := 0, len(s)
	if c.trim {
		for lo < hi && isASCIISpace(s[lo]) {
			lo++
		}
		for hi > lo && isASCIISpace(s[hi-1]) {
			hi--
		}
	}
	b = append(appendLen(b, hi-lo), ':')
	at := len(b)
	b = append(b, s[lo:hi]...)
	same := hi-lo == len(s)
	if c.lower && lowerASCII(b[at:]) {
		same = false
	}
	return b, at, same
}

// Masks for lowerASCII's eight bytes at a time.
const (
	lowBits  = 0x7f7f7f7f7f7f7f7f
	highBits = 0x8080808080808080
	byteOnes = 0x0101010101010101
)

// lowerASCII lowers the ASCII capitals of b in place, eight bytes at a time, and reports whether
// it changed any: most key parts are lower case already, and a word with no capital costs a few
// operations. In a word, a byte's high bit after adding 0x80-'A' says it is at least 'A', after
// adding 0x80-'Z'-1 that it is past 'Z' (on the low seven bits, so that no sum carries into the
// next byte); bytes of 0x80 and above are not ASCII and are left alone. A capital's mark, 0x80,
// shifted right twice is 0x20, the bit that lowers it.
func lowerASCII(b []byte) bool {
	changed := false
	i := 0
	for ; i+8 <= len(b); i += 8 {
		changed = lowerWord(b[i:]) || changed
	}
	if i < len(b) && len(b) >= 8 {
		// The last eight bytes as one word: those it shares with the word before are lowered
		// already, so only the tail's capitals are marked (a byte loop cost a max-size log's
		// keys as much as the words did).
		return lowerWord(b[len(b)-8:]) || changed
	}
	for ; i < len(b); i++ {
		if ch := b[i]; 'A' <= ch && ch <= 'Z' {
			b[i] = ch + ('a' - 'A')
			changed = true
		}
	}
	return changed
}

// lowerWord lowers the ASCII capitals among b's first eight bytes at once and says whether there
// were any.
func lowerWord(b []byte) bool {
	w := binary.LittleEndian.Uint64(b)
	low := w & lowBits
	caps := (low + byteOnes*(0x80-'A')) &^ (low + byteOnes*(0x80-'Z'-1)) &^ w & highBits
	if caps == 0 {
		return false
	}
	binary.LittleEndian.PutUint64(b, w|caps>>2)
	return true
}

// newSlot numbers the slot whose identity is b and records its canonical scope.
func (k *keys) newSlot(l *log, b []byte, spans []int) int32 {
	id := k.str(b)
	slot := int32(len(l.slots))
	k.slots[id] = slot
	l.slots = append(l.slots, id)
	for i := range l.dims {
		if spans[2*i] < 0 {
			l.scopes = append(l.scopes, dimVal{})
			continue
		}
		// The canonical value is a part of the slot's identity: no copy of its own.
		l.scopes = append(l.scopes, dimVal{val: id[spans[2*i]:spans[2*i+1]], ok: true})
	}
	return slot
}

// rawOf is the raw identity of a key that canonicalization changes, kept once per distinct key
// when dedupe is set.
func (k *keys) rawOf(l *log, mems []scopeMem, name string, dedupe bool) string {
	b := k.buf[:0]
	for _, d := range l.dims {
		v, ok := find(mems, d)
		if !ok {
			b = append(b, '-')
			continue
		}
		b = appendLP(append(b, '+'), v)
	}
	b = appendLP(b, name)
	k.buf = b
	if !dedupe {
		return k.str(b)
	}
	raw, ok := k.raws[string(b)]
	if !ok {
		raw = k.str(b)
		k.raws[raw] = raw
	}
	return raw
}

// findName reports whether a scope has a member named d, null or not.
func findName(mems []scopeMem, d string) (int, bool) {
	for i := range mems {
		if mems[i].name == d {
			return i, true
		}
	}
	return -1, false
}

func dimIndex(dims []string, name string) int {
	for i, d := range dims {
		if d == name {
			return i
		}
	}
	return -1
}
