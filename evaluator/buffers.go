package evaluator

import (
	"runtime"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// buffers are the memory of one export in progress: the slabs its value tree is cut from, its
// records, their facts, and its maps. They are pooled: an audit gives them back when it ends, so
// that a service auditing export after export reuses them instead of allocating and collecting
// them each time. Nothing a result carries points into them (results hold strings only).
type buffers struct {
	vals []jval   // slab of array elements
	mems []member // slab of object members
	// this export's totals: a slab that ran out is replaced by one this size next time
	usedVals, usedMems int

	records []record
	facts   []rules.Value
	strs    []string
	slots   []rules.SlotValues
	applies []uint32

	byID      map[string]int
	contents  map[string]int32
	interned  map[string]int32
	internedS []string
}

// freeBuffers keeps as many idle buffers as there are CPUs (a server evaluates that many exports at
// once). Unlike a sync.Pool it is not emptied by every garbage collection, which under a steady
// load of other allocations would leave the buffers collected before their next use.
var freeBuffers = make(chan *buffers, runtime.GOMAXPROCS(0))

func getBuffers() *buffers {
	select {
	case b := <-freeBuffers:
		return b
	default:
		return &buffers{byID: map[string]int{}, contents: map[string]int32{}, interned: map[string]int32{}}
	}
}

// slabMin is the smallest slab: most containers are small, and a fresh slab serves many.
const slabMin = 1024

// slabNext is the size of the slab that continues one that ran out, having handed out used
// entries so far. It grows with the export (a quarter of what it has used) rather than with the
// full slab, which after a larger export is already sized to it: an export a little larger than
// the slab adds a slab a quarter its size, not one twice as large, to be collected at the end.
func slabNext(n, used int) int { return max(n, used/4, slabMin) }

// newVals returns n array elements cut from the slab.
func (b *buffers) newVals(n int) []jval {
	if len(b.vals)+n > cap(b.vals) {
		b.vals = make([]jval, 0, slabNext(n, b.usedVals))
	}
	b.usedVals += n
	at := len(b.vals)
	b.vals = b.vals[:at+n]
	return b.vals[at : at+n : at+n]
}

// newMems returns n object members cut from the slab.
func (b *buffers) newMems(n int) []member {
	if len(b.mems)+n > cap(b.mems) {
		b.mems = make([]member, 0, slabNext(n, b.usedMems))
	}
	b.usedMems += n
	at := len(b.mems)
	b.mems = b.mems[:at+n]
	return b.mems[at : at+n : at+n]
}

// sized returns s emptied with room for n, reusing its array when it is large enough.
func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	clear(s[:cap(s)])
	return s[:0]
}

// release gives the buffers back to the pool. Nothing may use the export afterwards.
func (b *buffers) release() {
	if b == nil {
		return
	}
	clear(b.vals)
	clear(b.mems)
	b.vals, b.mems = b.vals[:0], b.mems[:0]
	if b.usedVals > cap(b.vals) {
		b.vals = make([]jval, 0, b.usedVals)
	}
	if b.usedMems > cap(b.mems) {
		b.mems = make([]member, 0, b.usedMems)
	}
	b.usedVals, b.usedMems = 0, 0
	clear(b.records)
	clear(b.facts)
	clear(b.strs)
	clear(b.internedS)
	b.records, b.facts, b.strs, b.internedS = b.records[:0], b.facts[:0], b.strs[:0], b.internedS[:0]
	clear(b.byID)
	clear(b.contents)
	clear(b.interned)
	select {
	case freeBuffers <- b:
	default: // enough are idle: this one is collected
	}
}
