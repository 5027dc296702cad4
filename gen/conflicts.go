package gen

// The four field-equality sub-checks of factor scope_conflicts (factor_rules,
//
var conflictFields = []string{"attributed_scope", "history_scope", "episode_group_ids", "endpoint_group_ids"}

// anyCheckedField reports whether at least one record carries a checked field set.
func (a *analysis) anyCheckedField() bool {
	for _, r := range a.v.records {
		for _, f := range conflictFields {
			if isSet(r[f]) {
				return true
			}
		}
	}
	return false
}

// scopeConflict reports whether a record carrying `field` set conflicts with its
// effective storage scope: storage_scope when present and not null (a non-string
// conflicts with everything), else the record's scope string ("" when unscoped).
func (a *analysis) scopeConflict(i int, field string) bool {
	val, isStr := a.v.records[i][field].(string)
	if !isStr {
		return true
	}
	ref := a.scope[i].str
	if ss, present := a.v.records[i]["storage_scope"]; present && ss != nil {
		s, ok := ss.(string)
		if !ok {
			return true
		}
		ref = s
	}
	return val != ref
}

// groupConflict reports whether any value of an id list differs from group_id
// (absent or null: ""); a lone value is a list of one; a non-string value conflicts, and a
// group_id that is present but not a string conflicts with every value.
func (a *analysis) groupConflict(i int, field string) bool {
	gid := a.v.records[i]["group_id"]
	ref, isStr := gid.(string)
	if !isStr && gid != nil {
		return true
	}
	raw := a.v.records[i][field]
	list, isList := raw.([]any)
	if !isList {
		list = []any{raw}
	}
	for _, e := range list {
		s, ok := e.(string)
		if !ok || s != ref {
			return true
		}
	}
	return false
}

// conflicts computes the assessable factor over all records, live or not.
func (a *analysis) conflicts(referrals []string) ScopeConflicts {
	counts := SubcheckCounts{}
	recs := SubcheckRecords{AttributedScope: []string{}, HistoryScope: []string{}, EpisodeGroupIDs: []string{}, EndpointGroupIDs: []string{}}
	for i, r := range a.v.records {
		if isSet(r["attributed_scope"]) && a.scopeConflict(i, "attributed_scope") {
			counts.AttributedScope++
			recs.AttributedScope = append(recs.AttributedScope, a.ids[i])
		}
		if isSet(r["history_scope"]) && a.scopeConflict(i, "history_scope") {
			counts.HistoryScope++
			recs.HistoryScope = append(recs.HistoryScope, a.ids[i])
		}
		if isSet(r["episode_group_ids"]) && a.groupConflict(i, "episode_group_ids") {
			counts.EpisodeGroupIDs++
			recs.EpisodeGroupIDs = append(recs.EpisodeGroupIDs, a.ids[i])
		}
		if isSet(r["endpoint_group_ids"]) && a.groupConflict(i, "endpoint_group_ids") {
			counts.EndpointGroupIDs++
			recs.EndpointGroupIDs = append(recs.EndpointGroupIDs, a.ids[i])
		}
	}
	recs.AttributedScope = sortedStrings(recs.AttributedScope)
	recs.HistoryScope = sortedStrings(recs.HistoryScope)
	recs.EpisodeGroupIDs = sortedStrings(recs.EpisodeGroupIDs)
	recs.EndpointGroupIDs = sortedStrings(recs.EndpointGroupIDs)
	total := counts.AttributedScope + counts.HistoryScope + counts.EpisodeGroupIDs + counts.EndpointGroupIDs
	ref := append([]string{}, referrals...)
	return ScopeConflicts{
		Status:     statusAssessable,
		Conflicts:  intp(total),
		BySubcheck: &counts,
		Records:    &recs,
		Referrals:  &ref,
	}
}
