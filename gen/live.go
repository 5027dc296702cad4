package gen

// Non-live states: matched exactly, case-sensitive.
var deadStates = map[string]bool{"superseded": true, "deleted": true, "expired": true}

// supersedesTargets returns the string ids named by a record's supersedes:
// a record id or an array of ids; other values name nothing.
func supersedesTargets(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	default:
		return nil
	}
}

// computeLiveness applies the liveness conditions of factor_rules (R-14..R-17).
func computeLiveness(a *analysis) {
	a.live = make([]bool, a.n)
	a.contested = make([]bool, a.n)

	superseded := make([]bool, a.n)
	dangling := map[string]bool{}
	for i, r := range a.v.records {
		for _, t := range supersedesTargets(r["supersedes"]) {
			j, present := a.byID[t]
			switch {
			case !present:
				dangling[t] = true
			case j != i: // a self-reference supersedes nothing
				superseded[j] = true
			}
		}
	}
	a.dangling = len(dangling)

	for i, r := range a.v.records {
		live := !superseded[i]
		if isSet(r["replaced_by"]) || isSet(r["superseded_by"]) {
			live = false
		}
		if isTrue(r["is_deleted"]) {
			live = false
		}
		inv, exp := isSet(r["invalid_at"]), isSet(r["expired_at"])
		if inv || exp {
			live = false
		}
		if inv != exp {
			a.splitState++
		}
		for _, k := range []string{"lifecycle_state", "state"} {
			if s, ok := r[k].(string); ok && deadStates[s] {
				live = false
			}
		}
		a.live[i] = live
		if live && a.v.family == "generic" {
			if s, ok := r["state"].(string); ok && s == "pending" {
				a.contested[i] = true
			}
		}
	}
}

func (a *analysis) liveCount() int {
	n := 0
	for _, l := range a.live {
		if l {
			n++
		}
	}
	return n
}
