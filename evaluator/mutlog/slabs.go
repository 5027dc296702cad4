package mutlog

import (
	"runtime"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
)

// freeSlabs keeps as many idle value-tree slabs as there are CPUs (a server evaluates that many
// logs at once), as package evaluator does with its buffers: a max-size log decodes to tens of
// thousands of values, which would otherwise be allocated and collected on every audit. Unlike a
// sync.Pool it is not emptied by every garbage collection.
var freeSlabs = make(chan *jsontree.Slabs, runtime.GOMAXPROCS(0))

func getSlabs() *jsontree.Slabs {
	select {
	case s := <-freeSlabs:
		return s
	default:
		return &jsontree.Slabs{}
	}
}

// releaseSlabs gives the slabs back once nothing reads the tree cut from them: the log and the
// refusals hold strings and numbers only.
func releaseSlabs(s *jsontree.Slabs) {
	s.Reset()
	select {
	case freeSlabs <- s:
	default: // enough are idle: these are collected
	}
}
