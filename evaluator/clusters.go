package evaluator

import (
	"cmp"
	"slices"

	"strings"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// fillClusters computes factor cross_scope_clusters.
func (st *state) fillClusters(rep *Report) error {
	ps, x := st.ps, st.x
	c := ps.Criteria()
	w := c.Words
	f := &rep.Factors.CrossScopeClusters
	if g := st.gateFor("cross_scope_clusters"); g != nil {
		// A factor that is NOT ASSESSABLE computes nothing: no clusters, no referrals.
		*f = CrossScopeClusters{Status: w.NotAssessable, Reason: g.Reason}
		return nil
	}
	// Records grouped by content key (its number): at most as many groups as content keys.
	at := make([]int32, x.contents.len()) // content number -> group index + 1
	rg := st.recordGroups(x.contents.len())
	for i := range x.records {
		r := &x.records[i]
		if !r.live || !r.facts.Scoped || r.template {
			continue
		}
		at[r.cid] = int32(rg.add(i, int(at[r.cid])-1) + 1)
	}
	// The report's clusters and their members are cut from one array each, sized for every
	// group that could form a cluster.
	candidates, inCandidates := 0, 0
	for _, g := range rg.groups {
		if g.size >= 2 {
			candidates++
			inCandidates += int(g.size)
		}
	}
	clusters := make([]ClusterReport, 0, candidates)
	st.members = make([]Member, 0, inCandidates)
	// The printed distinct-source counts point into one array too: no allocation per cluster.
	sources := make([]int, 0, candidates)
	counts := map[string]int{}
	var members []int
	for _, g := range rg.groups {
		if g.size < 2 {
			continue
		}
		members = members[:0]
		for j := g.first; j >= 0; j = rg.next[j] {
			members = append(members, int(j))
		}
		clusters = append(clusters, ClusterReport{})
		formed, class, err := st.cluster(members, &clusters[len(clusters)-1], &sources)
		if err != nil {
			return err
		}
		if !formed {
			clusters = clusters[:len(clusters)-1]
			continue
		}
		counts[class]++
	}
	st.putRecordGroups(rg)
	slices.SortFunc(clusters, func(a, b ClusterReport) int { return compareIDs(a.Members, b.Members, memberID) })
	for i := range clusters {
		clusters[i].Cluster = i + 1
	}
	rep.Coverage.B5NotRun, rep.Coverage.TemplateLineage = intp(st.b5NotRun), intp(st.lineage)
	if len(clusters) == 0 {
		clusters = []ClusterReport{}
	}
	*f = CrossScopeClusters{
		Status: w.Assessable, Candidate: intp(len(clusters)),
		MarkedShared: intp(counts["marked_shared"]), Undeclared: intp(counts["undeclared"]),
		Ambiguous: intp(counts["ambiguous"]), TemplateLineage: intp(st.lineage),
		MarkedShare: rep.Coverage.MarkedShare, Clusters: &clusters,
	}
	return nil
}

// cluster builds one content key's cluster facts and classifies it into cr. formed is false when
// the key forms no cluster or forms a template-lineage cluster (counted apart, R-24). A printed
// distinct-source count is appended to sources, which has room for it.
func (st *state) cluster(members []int, cr *ClusterReport, sources *[]int) (formed bool, class string, err error) {
	copies := st.copies[:0]
	defer func() { st.copies = copies[:0] }()
	for _, i := range members {
		if !st.x.records[i].facts.Global {
			copies = append(copies, i)
		}
	}
	if st.clAct == nil {
		st.clAct = &rules.ClusterActivation{Scope: st.x.scope, Obs: st.opts.Observer}
	}
	act := st.clAct
	// The facts live in the activation, reused cluster after cluster: taking the address of a
	// local would move it to the heap once per cluster.
	act.Cluster = &act.Facts
	st.clusterFacts(members, copies, act.Cluster)
	d, err := st.ps.EvalCluster(act)
	if err != nil || !d.Forms {
		return false, "", err
	}
	if d.TemplateLineage {
		st.lineage++
		return false, "", nil
	}
	if !d.B5Runs {
		st.b5NotRun++
	}
	if st.opts.explain != nil {
		if err := st.explainCluster(members, act); err != nil {
			return false, "", err
		}
	}
	if d.Rule.Refer {
		for _, i := range copies {
			st.referrals = append(st.referrals, st.x.records[i].id)
		}
	}
	st.clusterReport(cr, members, act.Cluster, d.Rule, act.B5, sources)
	return true, d.Rule.Class, nil
}

// clusterFacts writes into cl the facts the cluster rules read of one content key's members,
// copies being the members that are not global.
func (st *state) clusterFacts(members, copies []int, cl *rules.Cluster) {
	x := st.x
	*cl = rules.Cluster{Letta: x.letta, Globals: int64(len(members) - len(copies)), Copies: int64(len(copies))}
	// Clusters are small: distinct values are counted over reused slices, not maps.
	scopes, keySets, sources := st.ids[0][:0], st.ids[1][:0], st.scratch[2][:0]
	tids, btids := st.scratch[3][:0], st.scratch[4][:0]
	for _, i := range copies {
		r := &x.records[i]
		scopes, keySets = append(scopes, r.tid), append(keySets, r.kid) // interned: equal ids, equal strings
		if r.covered {
			cl.Covered++
		}
		if r.malformed {
			cl.Malformed++
		}
		if r.contradiction {
			cl.Contradictions++
		}
		if r.hasPointer && !r.facts.M4Resolves {
			cl.BrokenPointers++
		}
		if s := r.facts.Source; s.Kind == "string" && s.Str != "" {
			cl.Sourced++
			sources = append(sources, s.Str)
		}
		if r.facts.TemplateID.Set {
			cl.WithTemplateID++
			tids = append(tids, r.templateIdentity(false))
		}
		if r.facts.BaseTemplateID.Set {
			cl.WithBaseTemplateID++
			btids = append(btids, r.templateIdentity(true))
		}
	}
	cl.DistinctScopes, cl.KeySets, cl.DistinctSources = distinct(scopes), distinct(keySets), distinct(sources)
	cl.TemplateIDs, cl.BaseTemplateIDs = distinct(tids), distinct(btids)
	st.ids = [2][]int32{scopes, keySets}
	st.scratch = [5][]string{nil, nil, sources, tids, btids}
	if x.letta {
		cl.DisjointPair = disjointPair(x, copies)
	}
}

// clusterReport writes into cr the report of a cluster the precedence rule p decided; b5 says
// whether its distinct sources are printed (appended to sources, which has room).
func (st *state) clusterReport(cr *ClusterReport, members []int, cl *rules.Cluster, p *rules.PrecedenceProgram, b5 bool, sources *[]int) {
	*cr = ClusterReport{Classification: p.Class, DecidedBy: p.ID, Statement: p.Statement, Reason: p.Reason,
		DistinctScopes: int(cl.DistinctScopes)}
	if b5 {
		*sources = append(*sources, int(cl.DistinctSources))
		cr.DistinctSources = &(*sources)[len(*sources)-1]
	}
	at := len(st.members)
	for _, i := range members {
		r := &st.x.records[i]
		st.members = append(st.members, Member{ID: r.id, Scope: r.facts.ScopeString, Global: r.facts.Global,
			Covered: !r.facts.Global && r.covered})
	}
	cr.Members = st.members[at:len(st.members):len(st.members)]
	slices.SortFunc(cr.Members, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
}

// distinct counts the distinct values of ss, which it may reorder. A cluster's copies are few:
// up to smallDistinct of them are compared pairwise (no string is ordered, only tested for
// equality), more are sorted.
func distinct[T cmp.Ordered](ss []T) int64 {
	if len(ss) <= smallDistinct {
		n := int64(0)
	next:
		for i := range ss {
			for j := 0; j < i; j++ {
				if ss[j] == ss[i] {
					continue next
				}
			}
			n++
		}
		return n
	}
	slices.Sort(ss)
	n := int64(0)
	for i := range ss {
		if i == 0 || ss[i] != ss[i-1] {
			n++
		}
	}
	return n
}

// smallDistinct is the most values distinct counts by comparing each with those before it.
const smallDistinct = 16

// disjointPair reports whether two copies have disjoint scope sets (L-2).
func disjointPair(x *export, copies []int) bool {
	for a := 0; a < len(copies); a++ {
		sa := x.records[copies[a]].set
		for b := a + 1; b < len(copies); b++ {
			if disjoint(sa, x.records[copies[b]].set) {
				return true
			}
		}
	}
	return false
}

// disjoint compares two sorted sets.
func disjoint(a, b []string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			return false
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return true
}

func memberID(m Member) string { return m.ID }
