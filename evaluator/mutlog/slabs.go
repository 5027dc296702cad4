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

// freeKeys keeps idle identity scratch (replay.go) the same way: its buffer and its two tables
// keep their capacity from one audit to the next.
var freeKeys = make(chan *keys, runtime.GOMAXPROCS(0))

func getKeys() *keys {
	select {
	case k := <-freeKeys:
		return k
	default:
		return &keys{slots: map[string]int32{}, raws: map[string]string{}}
	}
}

// releaseKeys gives the scratch back once nothing reads the identities cut from its arena (the
// log's tables and events are given back with it, releaseTables); reset clears the arena.
func releaseKeys(k *keys) {
	k.reset()
	select {
	case freeKeys <- k:
	default:
	}
}

// freeEvents keeps idle event slices the same way: a max-size log's thousand events are the
// largest thing an audit allocates, and collecting one per audit made the collector run a third
// more often.
var freeEvents = make(chan []event, runtime.GOMAXPROCS(0))

// getEvents is an empty event slice of at least capacity n, zero past its length (readEvent
// writes each event in place).
func getEvents(n int) []event {
	select {
	case evs := <-freeEvents:
		if cap(evs) >= n {
			return evs
		}
	default:
	}
	return make([]event, 0, n)
}

// releaseEvents gives a log's events back once its audit or pre-check is answered: the result
// holds seqs, counts and the criteria's strings, never an event. They are cleared first, so that
// an idle slice keeps no string of the body.
func releaseEvents(l *log) {
	evs := l.events
	l.events = nil
	clear(evs)
	select {
	case freeEvents <- evs[:0]:
	default:
	}
}

// tablePool keeps idle per-log tables the same way: a max-size log's slots, their scopes, their
// replay states, its snapshot entries and its envelopes' names (about 115 KB of the 220 KB an
// audit allocated) are taken from it and given back with the events.
type tablePool[T any] chan []T

// get is an empty slice of capacity at least n, zero through its capacity.
func (p tablePool[T]) get(n int) []T {
	select {
	case s := <-p:
		if cap(s) >= n {
			return s
		}
	default:
	}
	return make([]T, 0, n)
}

// put gives s back, cleared through its capacity (the strings of an audit are not kept, and get
// promises zero).
func (p tablePool[T]) put(s []T) {
	if cap(s) == 0 {
		return
	}
	s = s[:cap(s)]
	clear(s)
	select {
	case p <- s[:0]:
	default:
	}
}

var (
	freeSlotIDs = make(tablePool[string], runtime.GOMAXPROCS(0))
	freeScopes  = make(tablePool[dimVal], runtime.GOMAXPROCS(0))
	freeStates  = make(tablePool[slotState], runtime.GOMAXPROCS(0))
	freeSnaps   = make(tablePool[snapEntry], runtime.GOMAXPROCS(0))
	freeEnvs    = make(tablePool[string], runtime.GOMAXPROCS(0))
	// The replay's lists: the touched slots in order, the reinserts and the effective reopens
	// (and prepare's list of the reassigns, taken from the same pool).
	freeOrder     = make(tablePool[int32], runtime.GOMAXPROCS(0))
	freeReinserts = make(tablePool[reinsert], runtime.GOMAXPROCS(0))
	freeReopens   = make(tablePool[*event], runtime.GOMAXPROCS(0))
)

// releaseTables gives a log's tables and its replay's states back once its audit or pre-check is
// answered: the result holds counts, seqs and indexes, never a slot's identity or state, a
// snapshot entry or an envelope.
func releaseTables(l *log, rp *replayed) {
	freeSlotIDs.put(l.slots)
	freeScopes.put(l.scopes)
	freeSnaps.put(l.snapshot)
	freeEnvs.put(l.envs) // the events are given back first: none names an envelope any more
	l.slots, l.scopes, l.snapshot, l.envs = nil, nil, nil, nil
	if rp != nil {
		freeStates.put(rp.slots)
		freeOrder.put(rp.order)
		freeReinserts.put(rp.reinserts) // they point into the events: cleared as they go back
		freeReopens.put(rp.reopens)
		rp.slots, rp.order, rp.reinserts, rp.reopens = nil, nil, nil, nil
	}
	if l.ids != nil { // the identities' arena: the slots, the events and the states named it, all cleared now
		releaseKeys(l.ids)
		l.ids = nil
	}
}
