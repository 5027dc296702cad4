package rules

// Memoization of the author's individual programs. The fused programs answer a record (or a
// cluster) from the export's memo when one with the same inputs was met before; on a miss, the
// author's programs run in their published order (the reference path), and each of them is itself
// memoized on exactly the inputs it reads, by the same analysis of its checked AST (projectionOf
// for record programs, orderKeyOf for cluster programs). A program reads far fewer inputs than
// the fused list of all of them, so it meets far fewer distinct keys: a Zep/Graphiti export whose
// conflict fields fall into 28 patterns as a whole falls into a handful per sub-check, and the
// cluster precedence's steps each see two or three outcomes of their own comparisons. CEL then
// runs once per distinct input of each program, and no longer once per distinct input of the
// whole list. With an observer every program runs (coverage and explain see each).

// elementKeys sets, at load, the memo key of every record and cluster program. num numbers the
// programs so that one map per export holds them all.
func (ps *ProgramSet) elementKeys() {
	n := 0
	record := func(p *Program) {
		if p == nil || p.checked == nil {
			return
		}
		p.num, n = n, n+1
		p.proj = projectionOf(p.checked, ps.slotIndex)
		p.memoOK = !p.proj.whole
	}
	for _, p := range ps.liveness {
		record(p)
	}
	for _, p := range ps.recordPreds {
		record(p)
	}
	for _, c := range ps.conflicts {
		record(c.Applies)
		record(c.Conflict)
	}
	cluster := func(p *Program) {
		if p == nil || p.checked == nil {
			return
		}
		p.num, n = n, n+1
		p.order = orderKeyOf(p.checked)
		p.memoOK = true // a program whose order key does not qualify is keyed by the facts verbatim
	}
	cluster(ps.clusterForms)
	cluster(ps.templateLineage)
	cluster(ps.b5Runs)
	for _, pp := range ps.precedence {
		cluster(pp.When)
	}
}

// memoBool evaluates record program p for the current record, from the export's memo when a
// record with the same inputs of p was evaluated before. Only successes are remembered: an error
// is returned as p.Bool returns it, every time.
func (a *RecordActivation) memoBool(p *Program) (bool, error) {
	if a.Obs != nil || !p.memoOK {
		return p.Bool(a)
	}
	k := p.proj.keyTagged(a, p.num)
	if v, ok := a.elem[string(k)]; ok {
		return v, nil
	}
	v, err := p.Bool(a)
	if err != nil {
		return v, err
	}
	if a.elem == nil {
		a.elem = map[string]bool{}
	}
	a.elem[string(k)] = v
	return v, nil
}

// clusterElemKey is the memo key of one cluster program: its number, b5_runs, and the cluster's
// facts verbatim; clusterElemCode is the same for a program with an order key, the facts reduced
// to what it compares (its code).
type clusterElemKey struct {
	num int
	b5  bool
	c   Cluster
}

type clusterElemCode struct {
	num int32
	b5  bool
	c   clusterCode
}

// memoBool evaluates cluster program p for the current cluster, from the export's memo when a
// cluster that p cannot tell apart from this one was evaluated before.
func (a *ClusterActivation) memoBool(p *Program) (bool, error) {
	if a.Obs != nil || !p.memoOK {
		return p.Bool(a)
	}
	eval := func() (bool, error) { return p.Bool(a) }
	if p.order.ok {
		return remember(&a.elemCode, clusterElemCode{num: int32(p.num), b5: a.B5, c: p.order.code(a.Cluster)}, eval)
	}
	return remember(&a.elem, clusterElemKey{num: p.num, b5: a.B5, c: *a.Cluster}, eval)
}

// remember answers from *m by key, or runs eval and keeps its answer when it has no error; the map
// is made with the first answer kept.
func remember[K comparable, V any](m *map[K]V, key K, eval func() (V, error)) (V, error) {
	if v, ok := (*m)[key]; ok {
		return v, nil
	}
	v, err := eval()
	if err == nil {
		if *m == nil {
			*m = make(map[K]V)
		}
		(*m)[key] = v
	}
	return v, err
}
