package gen

// Markers M1-M4 and the per-copy flags N2, N3, N4 (marker_convention, R-18..R-21,
//

// sharedLevels returns the record-level `shared` and the `shared` inside the
// record's metadata object (nil when absent or when metadata is not an object).
func sharedLevels(r map[string]any) (record, meta any) {
	record = r["shared"]
	if md, ok := asObject(r["metadata"]); ok {
		meta = md["shared"]
	}
	return record, meta
}

// hasM1 reports M1: shared exactly true or sharing exactly "global", at record
// level or inside metadata.
func hasM1(r map[string]any) bool {
	rs, ms := sharedLevels(r)
	if isTrue(rs) || isTrue(ms) {
		return true
	}
	if s, ok := r["sharing"].(string); ok && s == "global" {
		return true
	}
	if md, ok := asObject(r["metadata"]); ok {
		if s, ok := md["sharing"].(string); ok && s == "global" {
			return true
		}
	}
	return false
}

// hasN4 reports a malformed shared: present, not null, not a boolean, at either level.
func hasN4(r map[string]any) bool {
	rs, ms := sharedLevels(r)
	bad := func(v any) bool {
		if v == nil {
			return false
		}
		_, isBool := v.(bool)
		return !isBool
	}
	return bad(rs) || bad(ms)
}

// computeMarkers computes coverage and the N2/N3/N4 flags of every record.
func computeMarkers(a *analysis) {
	a.m1 = make([]bool, a.n)
	a.n4 = make([]bool, a.n)
	a.n3 = make([]bool, a.n)
	a.n2 = make([]bool, a.n)
	a.m4 = make([]bool, a.n)
	a.covered = make([]bool, a.n)

	// Cluster size: live scoped records with the content key, global
	// ones included, Letta templates excluded (L-4 keeps them out of the cluster).
	a.sizeOfKey = map[string]int{}
	for i := 0; i < a.n; i++ {
		if a.live[i] && a.scope[i].has && !a.template[i] {
			a.sizeOfKey[a.ckey[i]]++
		}
	}

	// Covered by M1 or M3 (a, b, c): live scoped records only (P0, R-34).
	byM1orM3 := make([]bool, a.n)
	for i, r := range a.v.records {
		a.m1[i] = hasM1(r)
		a.n4[i] = hasN4(r)
		if !a.live[i] || !a.scope[i].has {
			continue
		}
		m3 := a.man.inGlobalScopes(a.scope[i].str) ||
			a.man.inGlobalContentKeys(a.ckey[i]) ||
			a.man.inGlobalClaimIDs(a.ids[i])
		byM1orM3[i] = a.m1[i] || m3
	}

	for i, r := range a.v.records {
		if !a.live[i] || !a.scope[i].has {
			continue
		}
		if oc, present := r["origin_claim_id"]; present && oc != nil {
			if a.walkResolves(i, byM1orM3) {
				a.m4[i] = true
			} else {
				a.n2[i] = true
			}
		}
		a.covered[i] = byM1orM3[i] || a.m4[i]

		rs, ms := sharedLevels(r)
		nonSharing := isFalse(rs) || isFalse(ms) || a.man.inPrivateScopes(a.scope[i].str)
		bothWays := (isTrue(rs) && isFalse(ms)) || (isFalse(rs) && isTrue(ms))
		globalAndPrivate := a.man.inGlobalScopes(a.scope[i].str) && a.man.inPrivateScopes(a.scope[i].str)
		a.n3[i] = (a.covered[i] && nonSharing) || bothWays || globalAndPrivate
	}
}

// walkResolves follows origin_claim_id hops from copy x.
func (a *analysis) walkResolves(x int, byM1orM3 []bool) bool {
	size := a.sizeOfKey[a.ckey[x]]
	cur := x
	visited := []int{x}
	hops := 0
	for {
		oid, ok := a.v.records[cur]["origin_claim_id"].(string)
		if !ok {
			return false // a pointer that is not a string
		}
		if hops+1 > size {
			return false // depth limit
		}
		hops++
		o, present := a.byID[oid]
		listed := a.man.inGlobalClaimIDs(oid)
		if listed && !present {
			return true // attested by M3-c
		}
		if !present {
			return false
		}
		if a.ckey[o] != a.ckey[x] {
			return false
		}
		if os, given := a.v.records[cur]["origin_scope"]; given && os != nil {
			s, isStr := os.(string)
			if !isStr || s != a.scope[o].str {
				return false
			}
		}
		if listed {
			return true
		}
		next, has := a.v.records[o]["origin_claim_id"]
		if !has || next == nil {
			return true // root reached
		}
		if _, isStr := next.(string); !isStr {
			return false
		}
		for k, v := range visited {
			if v == o {
				// a cycle: resolves iff some live record on it is covered by M1 or M3
				for _, j := range visited[k:] {
					if byM1orM3[j] {
						return true
					}
				}
				return false
			}
		}
		visited = append(visited, o)
		cur = o
	}
}
