package mutlog

import (
	"slices"
	"strings"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// slotSpace is a whole-log read's canonical slots, shared by every chunk it reads. A chunk read
// in one pass numbers its keys straight in it, so that the fold takes the events' slots as they
// are; a chunk the tree path read is numbered in it by the fold (fold.slot). The same key texts
// come back chunk after chunk, each chunk under the same header (the same dimensions and steps),
// so a text's identities are resolved once for the whole log rather than once a chunk: the
// profile of a 10⁵-event log had the chunks' key resolution at 16% of the audit.
type slotSpace struct {
	// k numbers the slots (k.slots: a canonical identity to its number in slots) and keeps the
	// identities in its arena; it is the read's own and never reset.
	k      keys
	slots  []string
	scopes []dimVal // len(dims) a slot
	// byText is what a key's text as written resolved to, up to maxTexts texts: a log of
	// distinct keys past that resolves each as a chunk would, with no copy of its text kept.
	byText map[string]readKey
}

// maxTexts bounds the texts a slot space keeps: a few hundred in any log whose keys repeat, and
// a few MB at most for one whose keys are all distinct.
const maxTexts = 1 << 15

func newSlotSpace() *slotSpace {
	return &slotSpace{k: keys{slots: map[string]int32{}, raws: map[string]string{}}, byText: map[string]readKey{}}
}

// resolveShared is resolveKeys numbering the chunk's keys in x.space: the log's events and
// snapshot entries carry the whole read's slot numbers, and the log has no slots of its own.
func (x *lexer) resolveShared(ms *rules.MutLogSet, l *log) bool {
	steps := ms.Criteria().Canonicalization
	x.res = slices.Grow(x.res[:0], len(x.dkeys))[:len(x.dkeys)] // zero: releaseLexer cleared it
	l.shared = true
	ki := 0
	for i := range l.events {
		ev := &l.events[i]
		if !ev.keyed {
			continue
		}
		r := x.sharedKey(l, steps, x.keys[ki])
		ki++
		if !r.ok {
			return false
		}
		ev.raw, ev.slot = r.raw, r.slot
	}
	for i, d := range x.snaps {
		r := x.sharedKey(l, steps, d)
		if !r.ok {
			return false
		}
		l.snapshot[i].slot = r.slot
	}
	return true
}

// sharedKey is x.key in the slot space: the raw identity is always read (a text a snapshot entry
// names first may name an event's key in a later chunk), and kept in the space's arena.
func (x *lexer) sharedKey(l *log, steps []string, d int32) *readKey {
	r := &x.res[d]
	if r.read {
		return r
	}
	sp := x.space
	pk := &x.dkeys[d]
	text := x.str(pk.text)
	if c, ok := sp.byText[text]; ok {
		*r = c
		return r
	}
	k := &sp.k
	mems := k.mems[:0]
	for _, m := range x.mems[pk.scope.lo:pk.scope.hi] {
		mems = append(mems, scopeMem{name: x.str(m.name), val: x.str(m.val), present: m.present})
	}
	k.mems = mems
	in := log{dims: l.dims, slots: sp.slots, scopes: sp.scopes}
	raw, slot, named := k.keyOf(&in, steps, mems, x.str(pk.name), false, false)
	sp.slots, sp.scopes = in.slots, in.scopes
	clear(mems)
	*r = readKey{raw: raw, slot: slot, ok: named == len(mems), read: true}
	if len(sp.byText) < maxTexts {
		sp.byText[strings.Clone(text)] = *r
	}
	return r
}
