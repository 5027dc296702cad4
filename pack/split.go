package pack

import (
	"fmt"
	"sort"
	"strings"
)

// Split divides a submission into parts that each fit the published caps (records and bytes).
// Records are grouped first: records with the same content key, and records linked by
// supersedes or origin_claim_id, stay in one part wherever the group fits in one part. A group
// too large for one part is split, and a note says so plainly (naming a cross-scope cluster when
// the group spans more than one scope). Parts keep the records' original order and the manifest.
func Split(sub *Submission) ([]*Submission, []string, error) {
	sizes, budget, err := recordSizes(sub)
	if err != nil {
		return nil, nil, err
	}
	parts, splitGroups := placeGroups(groupRecords(sub.Records), sizes, budget)
	for _, p := range parts {
		sort.Ints(p.idx)
	}
	sort.SliceStable(parts, func(a, b int) bool { return parts[a].idx[0] < parts[b].idx[0] })
	number := map[*splitPart]int{}
	out := make([]*Submission, len(parts))
	for k, p := range parts {
		number[p] = k + 1
		s := *sub
		s.Records = make([]Record, len(p.idx))
		for j, i := range p.idx {
			s.Records[j] = sub.Records[i]
		}
		out[k] = &s
	}
	var notes []string
	if len(parts) > 1 {
		notes = append(notes, fmt.Sprintf("the pack was split into %d parts; each part is audited on its own, so no audit sees records of another part", len(parts)))
	}
	for _, sg := range splitGroups {
		notes = append(notes, sg.note(sub, number))
	}
	return out, notes, nil
}

// splitPart is one part being filled: its records' indices and their bytes (each with a comma).
type splitPart struct {
	idx   []int
	bytes int
}

// splitGroup is a group too large for one part, and the parts it was spread over.
type splitGroup struct {
	g     []int
	parts []*splitPart
}

// recordSizes are the bytes of each record of sub and the bytes a part has for its records.
func recordSizes(sub *Submission) (sizes []int, budget int, err error) {
	sizes = make([]int, len(sub.Records))
	for i, r := range sub.Records {
		b, err := MarshalCompact(r)
		if err != nil {
			return nil, 0, err
		}
		sizes[i] = len(b)
	}
	empty := *sub
	empty.Records = []Record{}
	head, err := MarshalCompact(&empty)
	if err != nil {
		return nil, 0, err
	}
	budget = MaxBodyBytes - len(head) + 1 // every record costs its bytes plus one comma; the first comma is free
	for i, s := range sizes {
		if s+1 > budget {
			return nil, 0, fmt.Errorf("pack: record at index %d is %d bytes: it cannot fit in a part under the %d-byte cap", i, s, MaxBodyBytes)
		}
	}
	return sizes, budget, nil
}

// placeGroups places the groups, largest first, each in the first part it fits in or a new one;
// a group that fits in no part fills fresh parts, in order.
func placeGroups(groups [][]int, sizes []int, budget int) ([]*splitPart, []splitGroup) {
	var parts []*splitPart
	var splitGroups []splitGroup
	order := make([]int, len(groups))
	gbytes := make([]int, len(groups))
	for gi, g := range groups {
		order[gi] = gi
		for _, i := range g {
			gbytes[gi] += sizes[i] + 1
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return gbytes[order[a]] > gbytes[order[b]] })
	for _, gi := range order {
		g := groups[gi]
		if len(g) <= MaxRecords && gbytes[gi] <= budget {
			parts = placeWhole(parts, g, gbytes[gi], budget)
			continue
		}
		sg := splitGroup{g: g}
		cur := &splitPart{}
		for _, i := range g {
			if len(cur.idx)+1 > MaxRecords || cur.bytes+sizes[i]+1 > budget {
				parts = append(parts, cur)
				sg.parts = append(sg.parts, cur)
				cur = &splitPart{}
			}
			cur.idx = append(cur.idx, i)
			cur.bytes += sizes[i] + 1
		}
		parts = append(parts, cur)
		sg.parts = append(sg.parts, cur)
		splitGroups = append(splitGroups, sg)
	}
	return parts, splitGroups
}

// placeWhole puts group g (n bytes) into the first part with room for it, or a new part.
func placeWhole(parts []*splitPart, g []int, n, budget int) []*splitPart {
	for _, p := range parts {
		if len(p.idx)+len(g) <= MaxRecords && p.bytes+n <= budget {
			p.idx = append(p.idx, g...)
			p.bytes += n
			return parts
		}
	}
	return append(parts, &splitPart{idx: append([]int{}, g...), bytes: n})
}

// note says which group was split across which parts, and whether it was a cross-scope cluster
// candidate.
func (sg splitGroup) note(sub *Submission, number map[*splitPart]int) string {
	var nums []string
	for _, p := range sg.parts {
		nums = append(nums, fmt.Sprint(number[p]))
	}
	scopes := map[string]bool{}
	for _, i := range sg.g {
		if s, ok := scopeKey(sub, sub.Records[i]); ok {
			scopes[s] = true
		}
	}
	first, _ := sub.Records[sg.g[0]]["id"].(string)
	what := "an intra-scope group of identical content (or of records linked by supersedes/origin_claim_id)"
	if len(scopes) > 1 {
		what = fmt.Sprintf("a CROSS-SCOPE CLUSTER candidate (%d distinct scopes)", len(scopes))
	}
	return fmt.Sprintf("%s of %d records (first record id %s) was too large for one part and is SPLIT across parts %s: each part's audit sees only its share of it",
		what, len(sg.g), first, strings.Join(nums, ", "))
}

// groupRecords unions records with the same content key, and records linked by supersedes or
// origin_claim_id to a record present in the submission. Groups are in order of first member.
func groupRecords(recs []Record) [][]int {
	parent := make([]int, len(recs))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		ra, rb := find(a), find(b)
		if ra < rb {
			parent[rb] = ra
		} else if rb < ra {
			parent[ra] = rb
		}
	}
	byID := map[string]int{}
	byKey := map[string]int{}
	for i, r := range recs {
		if id, ok := r["id"].(string); ok {
			byID[id] = i
		}
		key, ok := r["content_text"].(string)
		if !ok {
			key, ok = r["content_hash"].(string)
			key = "h:" + key
		} else {
			key = "t:" + key
		}
		if ok {
			if j, seen := byKey[key]; seen {
				union(i, j)
			} else {
				byKey[key] = i
			}
		}
	}
	for i, r := range recs {
		var targets []string
		switch t := r["supersedes"].(type) {
		case string:
			targets = append(targets, t)
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok {
					targets = append(targets, s)
				}
			}
		case []string:
			targets = append(targets, t...)
		}
		if o, ok := r["origin_claim_id"].(string); ok {
			targets = append(targets, o)
		}
		for _, t := range targets {
			if j, ok := byID[t]; ok {
				union(i, j)
			}
		}
	}
	members := map[int][]int{}
	var roots []int
	for i := range recs {
		r := find(i)
		if _, ok := members[r]; !ok {
			roots = append(roots, r)
		}
		members[r] = append(members[r], i)
	}
	out := make([][]int, 0, len(roots))
	for _, r := range roots {
		out = append(out, members[r])
	}
	return out
}

// familyDefaultKeys are the criteria's default scope keys (extension rule).
var familyDefaultKeys = map[string][]string{
	"mem0":         {"user_id", "agent_id", "app_id", "run_id"},
	"zep_graphiti": {"group_id", "graph_id"},
}

// scopeKey returns a record's scope identity under the submission's declared keys (Letta: its
// attached_to set), for the split notes only. ok is false for an unscoped record.
func scopeKey(sub *Submission, r Record) (string, bool) {
	if sub.Family == "letta" {
		var set []string
		switch t := r["attached_to"].(type) {
		case []string:
			set = append(set, t...)
		case []any:
			set, _ = stringList(t)
		}
		set = dedupe(set)
		sort.Strings(set)
		return strings.Join(set, "\x00"), len(set) > 0
	}
	keys := familyDefaultKeys[sub.Family]
	standIn := sub.Family == "mem0"
	if sub.Manifest != nil && sub.Manifest.DeclaredScopeKeys != nil {
		keys, standIn = *sub.Manifest.DeclaredScopeKeys, false
	}
	var parts []string
	for _, k := range keys {
		v, _ := r[k].(string)
		if v == "" && k == "run_id" && standIn {
			v, _ = r["session_id"].(string)
		}
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, "\x00"), len(parts) > 0
}
