package evaluator

import "errors"

// keyTable is an open-addressing hash table of 128-bit keys (the check's ids and content keys),
// filled as the records are read: 20 bytes a slot, at most three quarters full. The keys are
// keyed hashes already, so their first half places them. A Go map of the same keys takes more
// memory and hashes each key again; a sorted list (what the check had before) needs every key
// before it can answer, which a check that evaluates each record as it reads it cannot wait for.
type keyTable struct {
	slots []hashSlot
	n     int
}

// hashSlot is one key, as four words so that a slot takes 20 bytes, not 24, and v: the ordinal of
// its first record plus one (0: an empty slot) in the low 31 bits, and in the high bit whether a
// second record has the key.
type hashSlot struct {
	k [4]uint32
	v uint32
}

const (
	repeatedBit = 1 << 31
	// maxOrdinals is how many records the check numbers.
	maxOrdinals = repeatedBit - 2
)

// errTooManyRecords is the error of parts holding more records than the check numbers.
var errTooManyRecords = errors.New("whole-store check: more than 2,147,483,646 records")

func slotKey(k key128) [4]uint32 {
	return [4]uint32{uint32(k.a), uint32(k.a >> 32), uint32(k.b), uint32(k.b >> 32)}
}

// first is the ordinal of the key's first record.
func (s *hashSlot) first() uint32 { return s.v&^repeatedBit - 1 }

// repeated reports whether two records or more have the key.
func (s *hashSlot) repeated() bool { return s.v&repeatedBit != 0 }

// tableMin is a table's first size in slots.
const tableMin = 1 << 10

// add finds k's slot, making it, with ord as its first record, when k is new.
func (t *keyTable) add(k key128, ord uint32) (s *hashSlot, fresh bool) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	sk := slotKey(k)
	mask := len(t.slots) - 1
	for i := int(k.a) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.v == 0 {
			*s = hashSlot{k: sk, v: ord + 1}
			t.n++
			return s, true
		}
		if s.k == sk {
			return s, false
		}
	}
}

// get is k's slot, nil when k was never added.
func (t *keyTable) get(k key128) *hashSlot {
	if len(t.slots) == 0 {
		return nil
	}
	sk := slotKey(k)
	mask := len(t.slots) - 1
	for i := int(k.a) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.v == 0 {
			return nil
		}
		if s.k == sk {
			return s
		}
	}
}

func (t *keyTable) grow() { t.resize(max(tableMin, 2*len(t.slots))) }

// reserve makes room for n keys at once: a table grown step by step holds its old slots and its
// new ones together at each step (both garbage, then, until the collector runs), and moves every
// key each time.
func (t *keyTable) reserve(n int) {
	size := max(tableMin, len(t.slots))
	for n*4 > size*3 {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size)
	}
}

// bytes is the table's size in bytes.
func (t *keyTable) bytes() int { return len(t.slots) * 20 }

func (t *keyTable) resize(size int) {
	old := t.slots
	t.slots = make([]hashSlot, size)
	mask := len(t.slots) - 1
	for _, s := range old {
		if s.v == 0 {
			continue
		}
		i := int(uint64(s.k[0])|uint64(s.k[1])<<32) & mask
		for t.slots[i].v != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}
