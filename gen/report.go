package gen

import "strconv"

// matrixRow copies the published matrix row for a family and form, verbatim.
func matrixRow(c *publishedCriteria, family, form string) (MatrixRow, error) {
	row, ok := c.AssessabilityMatrix[family][form]
	if !ok || len(row) != 5 {
		return MatrixRow{}, errCriteria
	}
	cell := func(f string) MatrixCell { return MatrixCell{Status: row[f].Status, Note: row[f].Note} }
	return MatrixRow{
		ScopePresence:      cell("scope_presence"),
		UnscopedRate:       cell("unscoped_rate"),
		CrossScopeClusters: cell("cross_scope_clusters"),
		ScopeConflicts:     cell("scope_conflicts"),
		Duplicates:         cell("duplicates"),
	}, nil
}

// precheck builds the compared fields of the pre-check result.
func (a *analysis) precheck(c *publishedCriteria, st statuses) (*Precheck, error) {
	row, err := matrixRow(c, a.v.family, a.v.form)
	if err != nil {
		return nil, err
	}
	return &Precheck{
		Family: a.v.family, Form: a.v.form, Variant: a.v.variant,
		Records: a.n, Live: a.liveCount(),
		MatrixRow: row,
		Factors: PrecheckFactors{
			ScopePresence:      st.scopePresence,
			UnscopedRate:       st.unscopedRate,
			CrossScopeClusters: st.clusters,
			ScopeConflicts:     st.conflicts,
			Duplicates:         st.duplicates,
		},
	}, nil
}

// m3DeclaredAbsent counts M3 entries matching no submitted record, live or not.
func (a *analysis) m3DeclaredAbsent() M3Absent {
	scopes, keys, ids := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := 0; i < a.n; i++ {
		if a.scope[i].has {
			scopes[a.scope[i].str] = true
		}
		keys[a.ckey[i]] = true
		ids[a.ids[i]] = true
	}
	var out M3Absent
	for _, s := range a.man.globalScopes {
		if !scopes[s] {
			out.GlobalScopes++
		}
	}
	for _, s := range a.man.globalContentKeys {
		if !keys[s] {
			out.GlobalContentKeys++
		}
	}
	for _, s := range a.man.globalClaimIDs {
		if !ids[s] {
			out.GlobalClaimIDs++
		}
	}
	return out
}

// audit builds the compared fields of the audit report.
func (a *analysis) audit(c *publishedCriteria, st statuses) *Audit {
	live := a.liveCount()
	eligible, scoped := a.eligibleCount()
	distinct := a.distinctScopes()
	var f Factors
	f.ScopePresence = scopePresence(st.scopePresence, scoped, eligible, distinct)
	f.UnscopedRate = unscopedRate(st.unscopedRate, scoped, eligible)

	// The marked share of live records belongs to the coverage block (marker_convention,
	// R-34) and is repeated inside cross_scope_clusters, both only when that factor is
	// ASSESSABLE.
	marked := 0
	for i := 0; i < a.n; i++ {
		if a.live[i] && (a.covered[i] || a.scope[i].global) {
			marked++
		}
	}
	share := percent(marked, live, reasonNoLive)

	// (3) cross_scope_clusters
	var cr clusterResult
	if st.clusters.Status == statusAssessable {
		cr = a.crossScopeClusters(c.UndeclaredLabel)
		clusters := cr.clusters
		f.CrossScopeClusters = CrossScopeClusters{
			Status:          statusAssessable,
			Candidate:       intp(cr.markedShared + cr.undeclared + cr.ambiguous),
			MarkedShared:    intp(cr.markedShared),
			Undeclared:      intp(cr.undeclared),
			Ambiguous:       intp(cr.ambiguous),
			TemplateLineage: intp(cr.templateLineage),
			MarkedShare:     &share,
			Clusters:        &clusters,
		}
	} else {
		f.CrossScopeClusters = CrossScopeClusters{Status: statusNotAssessable, Reason: st.clusters.Reason}
	}

	// (4) scope_conflicts
	if st.conflicts.Status == statusAssessable {
		f.ScopeConflicts = a.conflicts(cr.referrals)
	} else {
		f.ScopeConflicts = ScopeConflicts{Status: statusNotAssessable, Reason: st.conflicts.Reason}
	}

	// (5) duplicates
	f.Duplicates = a.duplicates()

	cov := a.coverage(eligible, live)
	// The marker convention does not engage where the factor cannot be assessed (P0):
	// its facts are then absent from the coverage block, never zeros.
	if st.clusters.Status == statusAssessable {
		m3 := a.m3DeclaredAbsent()
		cov.B5NotRun = intp(cr.b5NotRun)
		cov.TemplateLineage = intp(cr.templateLineage)
		cov.M3DeclaredAbsent = &m3
		cov.MarkedShare = &share
	}
	return &Audit{
		Family: a.v.family, Form: a.v.form, Variant: a.v.variant,
		Records: a.n, Live: live,
		VerdictPrefix:  verdictPrefix(a.n, live, f),
		ScopeStatement: c.ScopeText,
		HonestyLine:    c.HonestyLine,
		Factors:        f,
		Coverage:       cov,
	}
}

// scopePresence is factor (1); with no eligible record its counts are zeros.
func scopePresence(st Status, scoped, eligible, distinct int) ScopePresence {
	switch {
	case st.Status == statusAssessable:
		r := percent(scoped, eligible, reasonNoEligible)
		return ScopePresence{Status: statusAssessable, Scoped: intp(scoped), Eligible: intp(eligible), DistinctScopes: intp(distinct), Rate: &r}
	case st.Reason == reasonNoEligible:
		return ScopePresence{Status: statusNotAssessable, Reason: reasonNoEligible, Scoped: intp(0), Eligible: intp(0), DistinctScopes: intp(distinct)}
	default:
		return ScopePresence{Status: statusNotAssessable, Reason: st.Reason}
	}
}

// unscopedRate is factor (2); with no eligible record its counts are zeros.
func unscopedRate(st Status, scoped, eligible int) UnscopedRate {
	switch {
	case st.Status == statusAssessable:
		r := percent(eligible-scoped, eligible, reasonNoEligible)
		return UnscopedRate{Status: statusAssessable, Unscoped: intp(eligible - scoped), Eligible: intp(eligible), Rate: &r}
	case st.Reason == reasonNoEligible:
		return UnscopedRate{Status: statusNotAssessable, Reason: reasonNoEligible, Unscoped: intp(0), Eligible: intp(0)}
	default:
		return UnscopedRate{Status: statusNotAssessable, Reason: st.Reason}
	}
}

// coverage is the coverage block but for the marker convention's facts.
func (a *analysis) coverage(eligible, live int) Coverage {
	cov := Coverage{
		ScopeKeys:          append([]string{}, a.keys...),
		ScopeKeysSource:    a.keysSource,
		Eligible:           eligible,
		NotLive:            a.n - live,
		SplitState:         a.splitState,
		DanglingSupersedes: a.dangling,
		ManifestIgnored:    a.man.ignored,
	}
	for i := 0; i < a.n; i++ {
		if a.scope[i].standIn {
			cov.SessionIDAsRunID++
		}
		cov.NonStringScopeValues += a.scope[i].nonString
		if a.template[i] {
			cov.ExcludedTemplates++
		}
		if a.sourcePassage[i] {
			cov.ExcludedSourcePassages++
		}
		if a.contested[i] {
			cov.Contested++
		}
	}
	return cov
}

// verdictPrefix is the verdict line up to and excluding " — <check_end>"
// (verdict_grammar; "·" is U+00B7, "—" is U+2014).
func verdictPrefix(records, live int, f Factors) string {
	unscoped := statusNotAssessable
	if f.UnscopedRate.Status == statusAssessable {
		unscoped = f.UnscopedRate.Rate.Value
	}
	undeclared := statusNotAssessable
	if f.CrossScopeClusters.Status == statusAssessable {
		undeclared = strconv.Itoa(*f.CrossScopeClusters.Undeclared)
	}
	conflicts := statusNotAssessable
	if f.ScopeConflicts.Status == statusAssessable {
		conflicts = strconv.Itoa(*f.ScopeConflicts.Conflicts)
	}
	return "MEMORY SCOPE-HYGIENE \u2014 records: " + strconv.Itoa(records) +
		" \u00b7 live: " + strconv.Itoa(live) +
		" \u00b7 unscoped: " + unscoped +
		" \u00b7 undeclared cross-scope clusters: " + undeclared +
		" \u00b7 conflicts: " + conflicts +
		" \u00b7 live duplicates: " + strconv.Itoa(f.Duplicates.Excess)
}
