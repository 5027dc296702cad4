package evaluator

// chunkLen is how many elements one chunk of a chunked list holds.
const chunkLen = 1 << 14

// chunked is a list that grows a fixed-size chunk at a time: appending never copies what is
// already there, as a slice's doubling does (at 10⁶ records that copying of the index's lists
// cost a seventh of the check's CPU time, and doubled their memory for a moment at each step).
type chunked[T any] struct {
	chunks [][]T
	n      int
}

func (c *chunked[T]) add(v T) {
	if k := len(c.chunks); k == 0 || len(c.chunks[k-1]) == chunkLen {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
}

// flat moves the list into one slice of its exact length, letting each chunk go once copied, and
// empties the list.
func (c *chunked[T]) flat() []T {
	out := make([]T, 0, c.n)
	for i, ch := range c.chunks {
		out = append(out, ch...)
		c.chunks[i] = nil
	}
	c.chunks, c.n = nil, 0
	return out
}

// keptChunk is how many bytes of kept records one chunk of wholeFold.kept holds before the next
// is started.
const keptChunk = 1 << 20

// keySet is a set of keyed hashes, open addressing with linear probing in a table at most half
// full: the keys are uniform hashes, so the first half is the slot. Built once the number of keys
// is known, it takes one probe a key where sorting the lists took four passes over them (at 10⁶
// records the sort was a sixth of the check's CPU), for 32 bytes a distinct key.
type keySet struct {
	slots []key128
	zero  bool // the key {0, 0}, which marks an empty slot, is in the set
}

func newKeySet(n int) keySet {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return keySet{slots: make([]key128, size)}
}

// insert adds k, reporting whether it was not in the set yet.
func (s *keySet) insert(k key128) bool {
	if k == (key128{}) {
		added := !s.zero
		s.zero = true
		return added
	}
	mask := uint64(len(s.slots) - 1)
	for i := k.a & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case k:
			return false
		case key128{}:
			s.slots[i] = k
			return true
		}
	}
}

// has reports whether k is in the set.
func (s *keySet) has(k key128) bool {
	if k == (key128{}) {
		return s.zero
	}
	if len(s.slots) == 0 {
		return false
	}
	mask := uint64(len(s.slots) - 1)
	for i := k.a & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case k:
			return true
		case key128{}:
			return false
		}
	}
}
