package evaluator

import (
	"slices"
	"sort"
)

// dupPartition is the scope partition of a record: its number, name and scope.
func dupPartition(r *record) (k uint8, name, scope string) {
	switch {
	case r.facts.Global:
		return 1, "global", r.facts.ScopeString
	case r.facts.Scoped:
		return 2, "scoped", r.facts.ScopeString
	}
	return 0, "unscoped", ""
}

// fillDuplicates computes factor duplicates: per scope partition, live non-contested records
// grouped by content key (factor_rules, R-17, R-27, R-48).
func (st *state) fillDuplicates(rep *Report) {
	x := st.x
	w := st.ps.Criteria().Words
	// A group is one partition's content key, scoped groups also by scope tuple. The groups of one
	// content key are chained from its number (head) and told apart by their first record: a
	// record is grouped by comparing numbers, with no hashing, and the chains take 4 bytes per
	// content key and per group.
	rg := st.recordGroups(len(x.records))
	defer st.putRecordGroups(rg)
	head := make([]int32, x.contents.len()) // content number -> its last group + 1
	link := make([]int32, 0, len(x.records))
	for i := range x.records {
		r := &x.records[i]
		if !r.live || r.contested {
			continue
		}
		part, _, _ := dupPartition(r)
		g := -1
		for j := head[r.cid] - 1; j >= 0; j = link[j] - 1 {
			f := &x.records[rg.groups[j].first]
			if fp, _, _ := dupPartition(f); fp == part && (part != 2 || f.tid == r.tid) {
				g = int(j)
				break
			}
		}
		if g >= 0 {
			rg.add(i, g)
			continue
		}
		g = rg.add(i, -1)
		link = append(link, head[r.cid])
		head[r.cid] = int32(g + 1)
	}
	// The clusters and their member ids are cut from one array each.
	excess, candidates := 0, 0
	for _, g := range rg.groups {
		if g.size >= 2 {
			excess += int(g.size) - 1
			candidates++
		}
	}
	clusters := make([]DuplicateCluster, 0, candidates)
	slab := make([]string, 0, excess+candidates)
	for _, g := range rg.groups {
		if g.size < 2 {
			continue
		}
		at := len(slab)
		for j := g.first; j >= 0; j = rg.next[j] {
			slab = append(slab, x.records[j].id)
		}
		ids := slab[at:len(slab):len(slab)]
		sort.Strings(ids)
		_, name, scope := dupPartition(&x.records[g.first])
		clusters = append(clusters, DuplicateCluster{Partition: name, Scope: scope, Count: int(g.size), Members: ids})
	}
	slices.SortFunc(clusters, func(a, b DuplicateCluster) int { return compareIDs(a.Members, b.Members, idOf) })
	for i := range clusters {
		clusters[i].Cluster = i + 1
	}
	rep.Factors.Duplicates = Duplicates{Status: w.Assessable, Excess: intp(excess), Live: intp(st.live),
		Rate: rate(excess, st.live, w.NoLiveRecords, w.NotAssessable), Clusters: &clusters}
}

func idOf(id string) string { return id }
