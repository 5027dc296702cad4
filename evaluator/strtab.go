package evaluator

import (
	"hash/maphash"
)

// strTable numbers strings: an open-addressing table that finds or adds a string with one hash,
// where a Go map's lookup followed by its store hashes the string twice. The reading stage does
// that for every record's id and content key and every scope tuple; the table also empties
// without freeing, so a pooled export keeps it.
//
// The hash is the runtime's seeded one (hash/maphash, a random seed per process), so a caller
// cannot choose strings that collide any more than it can against a Go map.
type strTable struct {
	slots []strSlot
	n     int
}

// strSlot is one string with its number; tag is the hash's high half with the low bit set, so
// that 0 marks an empty slot and most probes are settled without comparing strings.
type strSlot struct {
	s   string
	tag uint32
	v   int32
}

var strSeed = maphash.MakeSeed()

// strTableMin is a table's first size in slots.
const strTableMin = 64

// probe is where s's search starts, and its tag.
func (t *strTable) probe(s string) (int, uint32) {
	h := maphash.String(strSeed, s)
	return int(h) & (len(t.slots) - 1), uint32(h>>32) | 1
}

// add finds s, or adds it numbered v; it returns s's number and whether s was there already.
func (t *strTable) add(s string, v int32) (int32, bool) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	mask := len(t.slots) - 1
	i, tag := t.probe(s)
	for ; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.tag == 0 {
			*sl = strSlot{s: s, tag: tag, v: v}
			t.n++
			return v, false
		}
		if sl.tag == tag && sl.s == s {
			return sl.v, true
		}
	}
}

// get is s's number; false when s was never added.
func (t *strTable) get(s string) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	i, tag := t.probe(s)
	for ; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.tag == 0 {
			return 0, false
		}
		if sl.tag == tag && sl.s == s {
			return sl.v, true
		}
	}
}

// len is the number of strings added.
func (t *strTable) len() int { return t.n }

// reset empties the table and keeps its slots, forgetting the strings (a pooled export's table
// must not hold the last export's text).
func (t *strTable) reset() {
	if t.n > 0 {
		clear(t.slots)
	}
	t.n = 0
}

// grow doubles the table, placing every string again.
func (t *strTable) grow() {
	old := t.slots
	t.slots = make([]strSlot, max(strTableMin, 2*len(old)))
	mask := len(t.slots) - 1
	for _, sl := range old {
		if sl.tag == 0 {
			continue
		}
		i, _ := t.probe(sl.s)
		for t.slots[i].tag != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = sl
	}
}
