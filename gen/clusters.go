package gen

import "sort"

// Ambiguity reasons and statements (contract: cross-scope clusters).
var ambiguousReason = map[string]string{
	"N4": "malformed marker",
	"N3": "contradictory declaration",
	"N2": "broken pointer",
	"N5": "partition ambiguity",
	"B5": "attribution conflict",
	"N1": "partial coverage",
}

const statementMarkedShared = "declared shared by the operator"

// clusterResult is factor 3 computed (when the factor is assessable).
type clusterResult struct {
	clusters        []CrossCluster
	markedShared    int
	undeclared      int
	ambiguous       int
	templateLineage int
	b5NotRun        int
	referrals       []string // copies of clusters decided by B5
}

// sameSetValue reports whether every copy carries `field` set, all equal.
func (a *analysis) sameSetValue(copies []int, field string) bool {
	first := ""
	for k, i := range copies {
		v := a.v.records[i][field]
		if !isSet(v) {
			return false
		}
		c := canonical(v)
		if k == 0 {
			first = c
		} else if c != first {
			return false
		}
	}
	return len(copies) > 0
}

// crossScopeClusters forms and classifies the clusters (marker_convention,
// R-22..R-24, R-33, R-36..R-41).
func (a *analysis) crossScopeClusters(undeclaredLabel string) clusterResult {
	var res clusterResult
	type formed struct {
		memberIDs []string
		out       CrossCluster
	}
	var all []formed

	byKey, keyOrder := a.membersByContent()
	for _, key := range keyOrder {
		members := byKey[key]
		var copies []int
		for _, i := range members {
			if !a.scope[i].global {
				copies = append(copies, i)
			}
		}
		if !a.crossScope(copies) {
			continue
		}
		if a.letta && (a.sameSetValue(copies, "template_id") || a.sameSetValue(copies, "base_template_id")) {
			res.templateLineage++ // counted apart, not a candidate
			continue
		}

		d := a.decide(copies)
		c := CrossCluster{DecidedBy: d.rule, DistinctScopes: d.scopes}
		res.classify(&c, undeclaredLabel)
		if c.DecidedBy == "B5" {
			for _, i := range copies {
				res.referrals = append(res.referrals, a.ids[i])
			}
		}
		if d.b5Ran {
			c.DistinctSources = intp(d.sources)
		} else {
			res.b5NotRun++
		}
		var ids []string
		ids, c.Members = a.clusterMembers(members)
		all = append(all, formed{memberIDs: ids, out: c})
	}

	sort.Slice(all, func(x, y int) bool { return lessIDLists(all[x].memberIDs, all[y].memberIDs) })
	res.clusters = []CrossCluster{}
	for k := range all {
		all[k].out.Cluster = k + 1
		res.clusters = append(res.clusters, all[k].out)
	}
	res.referrals = uniqueSorted(res.referrals)
	return res
}

// membersByContent groups the live scoped records by content key, in first-seen order;
// Letta templates are excluded.
func (a *analysis) membersByContent() (map[string][]int, []string) {
	byKey := map[string][]int{}
	var keyOrder []string
	for i := 0; i < a.n; i++ {
		if !a.live[i] || !a.scope[i].has || a.template[i] {
			continue
		}
		if _, seen := byKey[a.ckey[i]]; !seen {
			keyOrder = append(keyOrder, a.ckey[i])
		}
		byKey[a.ckey[i]] = append(byKey[a.ckey[i]], i)
	}
	return byKey, keyOrder
}

// crossScope says whether the non-global copies of one content form a cluster: two
// disjoint attachment sets for Letta, two scope identities otherwise.
func (a *analysis) crossScope(copies []int) bool {
	if !a.letta {
		ids := map[string]bool{}
		for _, i := range copies {
			ids[a.scope[i].identity] = true
		}
		return len(ids) >= 2
	}
	for x := 0; x < len(copies); x++ {
		for y := x + 1; y < len(copies); y++ {
			if disjoint(a.scope[copies[x]].set, a.scope[copies[y]].set) {
				return true
			}
		}
	}
	return false
}

// decision is the rule that decides one cluster and the counts it reports.
type decision struct {
	rule    string // N4, N3, N2, N5, B5, N1, B1 or B2
	b5Ran   bool   // every copy names a source
	sources int    // distinct sources, when b5Ran
	scopes  int    // distinct scope identities
}

// decide applies the precedence order to one cluster's copies.
func (a *analysis) decide(copies []int) decision {
	anyN4, anyN3, anyN2 := false, false, false
	keySets := map[string]bool{}
	scopes := map[string]bool{}
	covered, allSourced := 0, true
	sources := map[string]bool{}
	for _, i := range copies {
		anyN4 = anyN4 || a.n4[i]
		anyN3 = anyN3 || a.n3[i]
		anyN2 = anyN2 || a.n2[i]
		keySets[a.scope[i].keySet] = true
		scopes[a.scope[i].identity] = true
		if a.covered[i] {
			covered++
		}
		if s, ok := counting(a.v.records[i]["source"]); ok {
			sources[s] = true
		} else {
			allSourced = false
		}
	}
	d := decision{b5Ran: allSourced, sources: len(sources), scopes: len(scopes)}
	disagree := d.b5Ran && len(sources) >= 2
	anyCovered := covered > 0
	allCovered := covered == len(copies)
	switch {
	case anyN4:
		d.rule = "N4"
	case anyN3:
		d.rule = "N3"
	case anyN2:
		d.rule = "N2"
	case !a.letta && len(keySets) >= 2:
		d.rule = "N5"
	case disagree && anyCovered:
		d.rule = "B5"
	case anyCovered && !allCovered:
		d.rule = "N1"
	case allCovered:
		d.rule = "B1"
	default:
		d.rule = "B2"
	}
	return d
}

// classify states a decided cluster's classification and counts it.
func (res *clusterResult) classify(c *CrossCluster, undeclaredLabel string) {
	switch c.DecidedBy {
	case "B1":
		c.Classification = "marked_shared"
		c.Statement = statementMarkedShared
		res.markedShared++
	case "B2":
		c.Classification = "undeclared"
		c.Statement = undeclaredLabel
		res.undeclared++
	default:
		c.Classification = "ambiguous"
		c.Statement = statusNotAssessable
		c.Reason = ambiguousReason[c.DecidedBy]
		res.ambiguous++
	}
}

// clusterMembers lists a cluster's members (globals included) sorted by id.
func (a *analysis) clusterMembers(members []int) ([]string, []ClusterMember) {
	var ids []string
	for _, i := range members {
		ids = append(ids, a.ids[i])
	}
	sort.Strings(ids)
	var out []ClusterMember
	for _, id := range ids {
		i := a.byID[id]
		out = append(out, ClusterMember{
			ID:      id,
			Scope:   a.scope[i].str,
			Global:  a.scope[i].global,
			Covered: a.covered[i] && !a.scope[i].global,
		})
	}
	return ids, out
}

func uniqueSorted(in []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, s := range sortedStrings(in) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
