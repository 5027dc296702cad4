package evaluator

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
	// The path so far lies on the stack; a map indexes it only when it grows long (most chains are
	// short).
	var buf [walkShort]int
	path := append(buf[:0], i)
	var visited map[int]int
	for cur, hops := i, 1; ; hops++ {
		id, o, outcome := x.hop(cur, x.records[i].content, size, hops)
		if outcome == "" {
			// The origin points on: a cycle closes here, or the walk goes on to it.
			outcome = walkNext
			if at, ok := onPath(path, visited, o); ok {
				outcome = x.cycle(path[at:], anchor)
			}
		}
		if trace != nil {
			*trace = append(*trace, Step{From: x.records[cur].id, To: id, Outcome: outcome})
		}
		if outcome != walkNext {
			return outcome == walkAttested || outcome == walkListed || outcome == walkRoot || outcome == walkCycleAnchor
		}
		path, visited = addToPath(path, visited, o)
		cur = o
	}
}

// hop tests the hop from record cur to its origin o, whose id is id: the outcome that ends
// the walk, or "" when the origin points on. content is the content key of the walk's first
// record.
func (x *export) hop(cur int, content string, size, hops int) (id string, o int, outcome string) {
	ptr := x.records[cur].facts.OriginClaimID // the member as read (facts carry its kind and string)
	if ptr.Kind != "string" {
		return "", 0, walkNotString
	}
	id = ptr.Str
	if hops > size {
		return id, 0, walkDepth
	}
	listed := x.manifest.globalClaimIDs[id]
	o32, ok := x.byID.get(id)
	o = int(o32)
	switch {
	case listed && !ok:
		return id, o, walkAttested
	case !ok:
		return id, o, walkAbsent
	case x.records[o].content != content:
		return id, o, walkKey
	}
	if os := x.records[cur].facts.OriginScope; os.Present &&
		(os.Kind != "string" || os.Str != x.records[o].facts.ScopeString) {
		return id, o, walkScope
	}
	if listed {
		return id, o, walkListed
	}
	next := x.records[o].facts.OriginClaimID
	if !next.Present {
		return id, o, walkRoot
	}
	if next.Kind != "string" {
		return id, o, walkNotString
	}
	return id, o, ""
}

// cycle is the outcome of a walk that closed a cycle over the records of cycle: it resolves when
// one of them is live and an anchor.
func (x *export) cycle(cycle []int, anchor func(int) bool) string {
	for _, j := range cycle {
		if x.records[j].live && anchor(j) {
			return walkCycleAnchor
		}
	}
	return walkCycle
}

// walkShort is the length past which a walk's path is indexed by a map.
const walkShort = 16

// onPath reports where o stands on a walk's path, if it does; visited is the path's index, nil
// while the path is short.
func onPath(path []int, visited map[int]int, o int) (int, bool) {
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

// addToPath puts o last on a walk's path, indexing the path once it is long.
func addToPath(path []int, visited map[int]int, o int) ([]int, map[int]int) {
	if visited == nil && len(path) >= walkShort {
		visited = make(map[int]int, 2*len(path))
		for at, j := range path {
			visited[j] = at
		}
	}
	if visited != nil {
		visited[o] = len(path)
	}
	return append(path, o), visited
}
