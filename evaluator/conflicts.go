package evaluator

import (
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
	by, recs := map[string]int{}, map[string][]string{}
	for _, c := range conflicts {
		by[c.ID], recs[c.ID] = 0, []string{}
	}
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
		for j, c := range conflicts {
			if failed&(1<<j) != 0 {
				by[c.ID]++
				recs[c.ID] = append(recs[c.ID], r.id)
				total++
			}
		}
	}
	for _, ids := range recs {
		sort.Strings(ids)
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
