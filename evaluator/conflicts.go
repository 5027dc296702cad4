package evaluator

import (
	"math/bits"
	"sort"
)

// fillConflicts computes factor scope_conflicts over all records.
func (st *state) fillConflicts(rep *Report) error {
	ps, x := st.ps, st.x
	w := ps.Criteria().Words
	if g := st.gateFor("scope_conflicts"); g != nil {
		rep.Factors.ScopeConflicts = ScopeConflicts{Status: w.NotAssessable, Reason: g.Reason}
		return nil
	}
	conflicts := ps.Conflicts()
	// Failing records are gathered per sub-check by its index, and the report's maps are built
	// once at the end: a map update per failure cost more than the memo lookup that found it.
	var fails [32][]string
	total := 0
	for i := range x.records {
		if st.applies[i] == 0 {
			continue
		}
		r := &x.records[i]
		st.act.Restore(&r.facts, r.live, st.slots[i])
		failed, err := ps.EvalConflicts(st.act, st.applies[i])
		if err != nil {
			return err
		}
		for ; failed != 0; failed &= failed - 1 {
			j := bits.TrailingZeros32(failed)
			fails[j] = append(fails[j], r.id)
			total++
		}
	}
	by, recs := make(map[string]int, len(conflicts)), make(map[string][]string, len(conflicts))
	for j, c := range conflicts {
		ids := fails[j]
		if ids == nil {
			ids = []string{}
		}
		sort.Strings(ids)
		by[c.ID], recs[c.ID] = len(ids), ids
	}
	refs := uniqueSorted(st.referrals)
	rep.Factors.ScopeConflicts = ScopeConflicts{Status: w.Assessable, Conflicts: intp(total), BySubcheck: by, Records: recs, Referrals: &refs}
	return nil
}

func uniqueSorted(in []string) []string {
	out := append([]string{}, in...)
	sort.Strings(out)
	n := 0
	for i, s := range out {
		if i == 0 || s != out[n-1] {
			out[n] = s
			n++
		}
	}
	return out[:n]
}
