package evaluator

import (
	"slices"
	"sort"

	"sync"
)

// groupKey is one duplicates group: a partition's content key, scoped groups also by tuple.
type groupKey struct {
	partition uint8
	tid, cid  int32
}

// dupIndexPool holds the group indexes of fillDuplicates, reused across exports.
var dupIndexPool = sync.Pool{New: func() any { return map[groupKey]int{} }}

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
	// A group is one partition's content key, scoped groups also by scope tuple: a max-size
	// export's thousand groups take 12 KB, allocated once.
	index := dupIndexPool.Get().(map[groupKey]int)
	defer func() {
		clear(index)
		dupIndexPool.Put(index)
	}()
	rg := st.recordGroups(len(x.records))
	defer st.putRecordGroups(rg)
	for i := range x.records {
		r := &x.records[i]
		if !r.live || r.contested {
			continue
		}
		k := groupKey{tid: -1, cid: r.cid}
		if k.partition, _, _ = dupPartition(r); k.partition == 2 {
			k.tid = r.tid
		}
		if gi, ok := index[k]; ok {
			rg.add(i, gi)
		} else {
			index[k] = rg.add(i, -1)
		}
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
