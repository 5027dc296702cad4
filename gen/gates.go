package gen

// Exact factor status reasons (contract: "Factor status reasons").
const (
	reasonGenericNoKeys   = "generic family with no declared scope keys: the schema defines no scope field"
	reasonScopeFiltered   = "scope-filtered export: manifest.scope_filtered is true"
	reasonMultiScope      = "multi-scope not demonstrated: fewer than two distinct scopes and no manifest.multi_scope"
	reasonZepCloudSingle  = "Zep Cloud single-scope submission: NOT ASSESSABLE-by-construction"
	reasonZepCloudOneLive = "Zep Cloud submission with fewer than two live non-global graphs and no manifest.multi_scope: NOT ASSESSABLE-by-construction"
	reasonLettaConflicts  = "no source/target scope field exists in the Letta family"
	reasonGenericConflict = "no storage-scope or target fields exist in the generic schema"
	reasonNoCheckedField  = "no record carries a checked field (attributed_scope, history_scope, episode_group_ids, endpoint_group_ids)"
	reasonNoEligible      = "no eligible records"
	reasonNoLive          = "no live records"
)

// statuses is the resolved per-factor status of one submission.
type statuses struct {
	scopePresence Status
	unscopedRate  Status
	clusters      Status
	conflicts     Status
	duplicates    Status
}

func assessable() Status            { return Status{Status: statusAssessable} }
func notAssessable(r string) Status { return Status{Status: statusNotAssessable, Reason: r} }

// distinctScopes counts distinct scope tuples (Letta: sets) over all records that
// have a scope, global included.
func (a *analysis) distinctScopes() int {
	seen := map[string]bool{}
	for i := 0; i < a.n; i++ {
		if a.scope[i].has {
			seen[a.scope[i].identity] = true
		}
	}
	return len(seen)
}

// liveGraphs counts distinct scopes over the live, scoped, non-global records: the
// scopes a cross-scope cluster could span.
func (a *analysis) liveGraphs() int {
	seen := map[string]bool{}
	for i := 0; i < a.n; i++ {
		if a.live[i] && a.scope[i].has && !a.scope[i].global {
			seen[a.scope[i].identity] = true
		}
	}
	return len(seen)
}

func (a *analysis) eligibleCount() (eligible, scoped int) {
	for i := 0; i < a.n; i++ {
		if a.eligible[i] {
			eligible++
			if a.scope[i].has {
				scoped++
			}
		}
	}
	return eligible, scoped
}

// resolveStatuses applies the contract's gate table, top to bottom per factor.
func (a *analysis) resolveStatuses() statuses {
	fam := a.v.family
	genericNoKeys := fam == "generic" && len(a.keys) == 0
	fewScopes := a.distinctScopes() < 2 && !a.man.multiScope
	eligible, _ := a.eligibleCount()

	var s statuses

	switch {
	case genericNoKeys:
		s.scopePresence = notAssessable(reasonGenericNoKeys)
	case eligible == 0:
		s.scopePresence = notAssessable(reasonNoEligible)
	default:
		s.scopePresence = assessable()
	}

	switch {
	case genericNoKeys:
		s.unscopedRate = notAssessable(reasonGenericNoKeys)
	case fam == "mem0" && a.man.scopeFiltered:
		s.unscopedRate = notAssessable(reasonScopeFiltered)
	case fam == "zep_graphiti" && a.v.variant == "graphiti" && fewScopes:
		s.unscopedRate = notAssessable(reasonMultiScope)
	case fam == "zep_graphiti" && a.v.variant == "zep_cloud" && fewScopes:
		s.unscopedRate = notAssessable(reasonZepCloudSingle)
	case eligible == 0:
		s.unscopedRate = notAssessable(reasonNoEligible)
	default:
		s.unscopedRate = assessable()
	}

	switch {
	case genericNoKeys:
		s.clusters = notAssessable(reasonGenericNoKeys)
	case fam == "zep_graphiti" && a.v.variant == "zep_cloud" && fewScopes:
		s.clusters = notAssessable(reasonZepCloudSingle)
	case fam == "zep_graphiti" && a.v.variant == "zep_cloud" && a.liveGraphs() < 2 && !a.man.multiScope:
		s.clusters = notAssessable(reasonZepCloudOneLive)
	default:
		s.clusters = assessable()
	}

	switch {
	case fam == "letta":
		s.conflicts = notAssessable(reasonLettaConflicts)
	case fam == "generic":
		s.conflicts = notAssessable(reasonGenericConflict)
	case !a.anyCheckedField():
		s.conflicts = notAssessable(reasonNoCheckedField)
	default:
		s.conflicts = assessable()
	}

	s.duplicates = assessable()
	return s
}
