package evaluator

import (
	"runtime"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonlex"
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// buffers are the memory of one export in progress: the slabs its value tree is cut from, its
// records, their facts, and its maps. They are pooled: an audit gives them back when it ends, so
// that a service auditing export after export reuses them instead of allocating and collecting
// them each time. Nothing a result carries points into them (results hold strings only).
type buffers struct {
	slabs jsontree.Slabs // the value tree's arrays and objects

	records []record
	facts   []rules.Value
	strs    []string
	slots   []rules.SlotValues
	applies []uint32
	groups  []recordGroup // the groups of clusters and duplicates, one after the other
	next    []int32
	sets    []string // the Letta records' scope sets, one after the other (lettaSet)

	// The read-once path's scratch (read_lex.go): its pull reader, and each supersedes target.
	lex    jsonlex.Reader
	supers []superRef

	byID      strTable // record ids, numbered by record
	contents  strTable // content keys, numbered in order of first sight
	interned  strTable // interned strings (export.intern)
	internedS []string
	tuples    []tupleFacts
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
		return &buffers{}
	}
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
	b.slabs.Reset()
	b.resetRead()
	select {
	case freeBuffers <- b:
	default: // enough are idle: this one is collected
	}
}

// resetRead empties what reading an export fills, before the tree path reads the body again
// when the read-once path gave up.
func (b *buffers) resetRead() {
	clear(b.records)
	clear(b.facts)
	clear(b.strs)
	clear(b.internedS)
	clear(b.sets)
	clear(b.supers)
	b.lex.Release()
	b.records, b.facts, b.strs, b.internedS = b.records[:0], b.facts[:0], b.strs[:0], b.internedS[:0]
	b.sets, b.supers = b.sets[:0], b.supers[:0]
	b.byID.reset()
	b.contents.reset()
	b.interned.reset()
	clear(b.tuples)
	b.tuples = b.tuples[:0]
}
