package gen

import "sort"

// duplicates computes factor 5 (factor_rules, R-27, R-48): live records, the
// contested ones left out, grouped by (partition, content key).
func (a *analysis) duplicates() Duplicates {
	type group struct {
		partition string
		scope     string
		members   []string
	}
	groups := map[string]*group{}
	var order []string
	for i := 0; i < a.n; i++ {
		if !a.live[i] || a.contested[i] {
			continue
		}
		partition, scope, pkey := "unscoped", "", "U"
		switch {
		case a.scope[i].global:
			partition, scope, pkey = "global", "global", "G"
		case a.scope[i].has:
			partition, scope, pkey = "scoped", a.scope[i].str, a.scope[i].identity
		}
		k := pkey + "\x00" + a.ckey[i]
		g, ok := groups[k]
		if !ok {
			g = &group{partition: partition, scope: scope}
			groups[k] = g
			order = append(order, k)
		}
		g.members = append(g.members, a.ids[i])
	}

	excess := 0
	var clusters []DuplicateCluster
	for _, k := range order {
		g := groups[k]
		n := len(g.members)
		if n >= 2 {
			excess += n - 1
			clusters = append(clusters, DuplicateCluster{
				Partition: g.partition, Scope: g.scope, Count: n, Members: sortedStrings(g.members),
			})
		}
	}
	sort.Slice(clusters, func(x, y int) bool { return lessIDLists(clusters[x].Members, clusters[y].Members) })
	for k := range clusters {
		clusters[k].Cluster = k + 1
	}
	if clusters == nil {
		clusters = []DuplicateCluster{}
	}
	live := a.liveCount()
	return Duplicates{
		Status:   statusAssessable,
		Excess:   excess,
		Live:     live,
		Rate:     percent(excess, live, "no live records"),
		Clusters: clusters,
	}
}
