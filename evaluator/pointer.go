package evaluator

import "github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"

// Step names the outcome of one M4 hop, for `rules explain`.
type Step struct {
	From, To string
	Outcome  string
}

// Walk outcomes, in the order they are tested on each hop.
const (
	walkAttested    = "resolves: origin attested by global_claim_ids and absent"
	walkAbsent      = "fails: origin absent from the submission"
	walkKey         = "fails: origin content key differs"
	walkScope       = "fails: origin_scope does not match the origin's scope"
	walkListed      = "resolves: origin listed in global_claim_ids"
	walkRoot        = "resolves: root reached"
	walkNotString   = "fails: pointer is not a string"
	walkCycleAnchor = "resolves: cycle with a live record marked by M1 or M3"
	walkCycle       = "fails: cycle with no covered record"
	walkDepth       = "fails: more hops than the cluster size"
	walkNext        = "continues"
)

// walk follows origin_claim_id hops from record i and reports whether its pointer
// resolves. size is the cluster size of the record's content key; anchor tells whether a record is
// marked by M1 or M3 (the criteria's cycle_anchor predicate). trace, when non-nil, receives every
// hop.
func (x *export) walk(i int, size int, anchor func(int) bool, trace *[]Step) bool {
	start := &x.records[i]
	cur := i
	// The path so far; a map indexes it only when it grows long (most chains are short).
	var pathBuf [16]int
	path := append(pathBuf[:0], i)
	var visited map[int]int
	seen := func(o int) (int, bool) {
		if visited != nil {
			at, ok := visited[o]
			return at, ok
		}
		for at, j := range path {
			if j == o {
				return at, true
			}
		}
		return 0, false
	}
	note := func(to, outcome string) {
		if trace != nil {
			*trace = append(*trace, Step{From: x.records[cur].id, To: to, Outcome: outcome})
		}
	}
	for hops := 1; ; hops++ {
		ptr := x.records[cur].raw.Get("origin_claim_id")
		if ptr.Kind() != jsontree.String {
			note("", walkNotString)
			return false
		}
		id := ptr.Str()
		if hops > size {
			note(id, walkDepth)
			return false
		}
		listed := x.manifest.globalClaimIDs[id]
		o, ok := x.byID[id]
		switch {
		case listed && !ok:
			note(id, walkAttested)
			return true
		case !ok:
			note(id, walkAbsent)
			return false
		case x.records[o].content != start.content:
			note(id, walkKey)
			return false
		}
		if os := x.records[cur].raw.Get("origin_scope"); os.Present() &&
			(os.Kind() != jsontree.String || os.Str() != x.records[o].facts.ScopeString) {
			note(id, walkScope)
			return false
		}
		if listed {
			note(id, walkListed)
			return true
		}
		next := x.records[o].raw.Get("origin_claim_id")
		if !next.Present() {
			note(id, walkRoot)
			return true
		}
		if next.Kind() != jsontree.String {
			note(id, walkNotString)
			return false
		}
		if at, ok := seen(o); ok {
			for _, j := range path[at:] {
				if x.records[j].live && anchor(j) {
					note(id, walkCycleAnchor)
					return true
				}
			}
			note(id, walkCycle)
			return false
		}
		note(id, walkNext)
		if visited == nil && len(path) >= len(pathBuf) {
			visited = make(map[int]int, 2*len(path))
			for at, j := range path {
				visited[j] = at
			}
		}
		if visited != nil {
			visited[o] = len(path)
		}
		path = append(path, o)
		cur = o
	}
}
