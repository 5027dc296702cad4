package jsontree

import "unsafe"

// Slabs are the memory a value tree is cut from: every array's elements and every object's
// members, in a few large slices instead of one allocation each. A caller pools them between
// exports, so that a service auditing export after export reuses them instead of allocating and
// collecting them each time; nothing that outlives Reset may point into them (a tree's strings do
// not: they alias the body or its copy).
type Slabs struct {
	vals []Value
	mems []Member
	// this export's totals: a slab that ran out is replaced by one this size next time
	usedVals, usedMems int
}

// slabMin is the smallest slab: most containers are small, and a fresh slab serves many.
const slabMin = 1024

// slabNext is the size of the slab that continues one that ran out, having handed out used
// entries so far. It grows with the export (a quarter of what it has used) rather than with the
// full slab, which after a larger export is already sized to it: an export a little larger than
// the slab adds a slab a quarter its size, not one twice as large, to be collected at the end.
func slabNext(n, used int) int { return max(n, used/4, slabMin) }

// newVals returns n array elements cut from the slab.
func (s *Slabs) newVals(n int) []Value {
	if len(s.vals)+n > cap(s.vals) {
		s.vals = make([]Value, 0, slabNext(n, s.usedVals))
	}
	s.usedVals += n
	at := len(s.vals)
	s.vals = s.vals[:at+n]
	return s.vals[at : at+n : at+n]
}

// newMems returns n object members cut from the slab.
func (s *Slabs) newMems(n int) []Member {
	if len(s.mems)+n > cap(s.mems) {
		s.mems = make([]Member, 0, slabNext(n, s.usedMems))
	}
	s.usedMems += n
	at := len(s.mems)
	s.mems = s.mems[:at+n]
	return s.mems[at : at+n : at+n]
}

// Reset empties the slabs for the next export, sized to hold all of this one's tree in one slab
// each. Every tree cut from them is void afterwards.
func (s *Slabs) Reset() {
	clear(s.vals)
	clear(s.mems)
	s.vals, s.mems = s.vals[:0], s.mems[:0]
	if s.usedVals > cap(s.vals) {
		s.vals = make([]Value, 0, s.usedVals)
	}
	if s.usedMems > cap(s.mems) {
		s.mems = make([]Member, 0, s.usedMems)
	}
	s.usedVals, s.usedMems = 0, 0
}

// Bytes is what the slabs keep, in bytes.
func (s *Slabs) Bytes() int {
	return cap(s.vals)*int(unsafe.Sizeof(Value{})) + cap(s.mems)*int(unsafe.Sizeof(Member{}))
}
