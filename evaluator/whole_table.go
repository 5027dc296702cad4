package evaluator

// keyTable is an open-addressing hash table of 128-bit keys (the check's ids and content keys),
// filled as the records are read: 24 bytes a slot, at most three quarters full. The keys are
// keyed hashes already, so their first half places them. A Go map of the same keys takes about
// as much memory but hashes each key again; a sorted list (what the check had before) needs every
// key before it can answer, which a check that evaluates each record as it reads it cannot wait
// for.
type keyTable struct {
	slots []keySlot
	n     int
}

// keySlot is one key: the ordinal of its first record plus one (0: an empty slot) and how many
// records have it.
type keySlot struct {
	k      key128
	ord, n uint32
}

// tableMin is a table's first size in slots.
const tableMin = 1 << 10

// add finds k's slot, making it (with ord as its first record and a count of 0) when k is new.
func (t *keyTable) add(k key128, ord uint32) (s *keySlot, fresh bool) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := int(k.a) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.ord == 0 {
			*s = keySlot{k: k, ord: ord + 1}
			t.n++
			return s, true
		}
		if s.k == k {
			return s, false
		}
	}
}

// get is k's slot, nil when k was never added.
func (t *keyTable) get(k key128) *keySlot {
	if len(t.slots) == 0 {
		return nil
	}
	mask := len(t.slots) - 1
	for i := int(k.a) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.ord == 0 {
			return nil
		}
		if s.k == k {
			return s
		}
	}
}

func (t *keyTable) grow() {
	old := t.slots
	t.slots = make([]keySlot, max(tableMin, 2*len(old)))
	mask := len(t.slots) - 1
	for _, s := range old {
		if s.ord == 0 {
			continue
		}
		i := int(s.k.a) & mask
		for t.slots[i].ord != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}
