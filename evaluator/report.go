package evaluator

import (
	"strconv"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// The result types marshal to the JSON of docs/contract.md; schema/ holds their JSON Schemas.

// Rate is a percentage to one decimal with both counts, or NOT ASSESSABLE when the denominator is
// zero.
type Rate struct {
	Numerator   int    `json:"numerator"`
	Denominator int    `json:"denominator"`
	Value       string `json:"value"`
	Reason      string `json:"reason,omitempty"`
}

// Member is one record of a cross-scope cluster.
type Member struct {
	ID      string `json:"id"`
	Scope   string `json:"scope"`
	Global  bool   `json:"global"`
	Covered bool   `json:"covered"`
}

// ClusterReport is one classified cross-scope cluster.
type ClusterReport struct {
	Cluster         int      `json:"cluster"`
	Classification  string   `json:"classification"`
	DecidedBy       string   `json:"decided_by"`
	Statement       string   `json:"statement"`
	Reason          string   `json:"reason,omitempty"`
	DistinctScopes  int      `json:"distinct_scopes"`
	DistinctSources *int     `json:"distinct_sources,omitempty"`
	Members         []Member `json:"members"`
}

// DuplicateCluster is one partition group of at least two live records with the same content.
type DuplicateCluster struct {
	Cluster   int      `json:"cluster"`
	Partition string   `json:"partition"`
	Scope     string   `json:"scope"`
	Count     int      `json:"count"`
	Members   []string `json:"members"`
}

// ScopePresence is factor (1).
type ScopePresence struct {
	Status         string `json:"status"`
	Reason         string `json:"reason,omitempty"`
	Scoped         *int   `json:"scoped,omitempty"`
	Eligible       *int   `json:"eligible,omitempty"`
	DistinctScopes *int   `json:"distinct_scopes,omitempty"`
	Rate           *Rate  `json:"rate,omitempty"`
}

// UnscopedRate is factor (2).
type UnscopedRate struct {
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Unscoped *int   `json:"unscoped,omitempty"`
	Eligible *int   `json:"eligible,omitempty"`
	Rate     *Rate  `json:"rate,omitempty"`
}

// CrossScopeClusters is factor (3).
type CrossScopeClusters struct {
	Status          string           `json:"status"`
	Reason          string           `json:"reason,omitempty"`
	Candidate       *int             `json:"candidate,omitempty"`
	MarkedShared    *int             `json:"marked_shared,omitempty"`
	Undeclared      *int             `json:"undeclared,omitempty"`
	Ambiguous       *int             `json:"ambiguous,omitempty"`
	TemplateLineage *int             `json:"template_lineage,omitempty"`
	MarkedShare     *Rate            `json:"marked_share,omitempty"`
	Clusters        *[]ClusterReport `json:"clusters,omitempty"`
}

// ScopeConflicts is factor (4).
type ScopeConflicts struct {
	Status     string              `json:"status"`
	Reason     string              `json:"reason,omitempty"`
	Conflicts  *int                `json:"conflicts,omitempty"`
	BySubcheck map[string]int      `json:"by_subcheck,omitempty"`
	Records    map[string][]string `json:"records,omitempty"`
	Referrals  *[]string           `json:"referrals,omitempty"`
}

// Duplicates is factor (5).
type Duplicates struct {
	Status   string              `json:"status"`
	Reason   string              `json:"reason,omitempty"`
	Excess   *int                `json:"excess,omitempty"`
	Live     *int                `json:"live,omitempty"`
	Rate     *Rate               `json:"rate,omitempty"`
	Clusters *[]DuplicateCluster `json:"clusters,omitempty"`
}

// Factors are the five factors, stated one by one. There is no composite of them anywhere.
type Factors struct {
	ScopePresence      ScopePresence      `json:"scope_presence"`
	UnscopedRate       UnscopedRate       `json:"unscoped_rate"`
	CrossScopeClusters CrossScopeClusters `json:"cross_scope_clusters"`
	ScopeConflicts     ScopeConflicts     `json:"scope_conflicts"`
	Duplicates         Duplicates         `json:"duplicates"`
}

// Coverage is the coverage block: what the report relied on and what it set aside.
type Coverage struct {
	ScopeKeys            []string `json:"scope_keys"`
	ScopeKeysSource      string   `json:"scope_keys_source"`
	SessionIDAsRunID     int      `json:"session_id_as_run_id"`
	NonStringScopeValues int      `json:"non_string_scope_values"`
	Eligible             int      `json:"eligible"`
	ExcludedTemplates    int      `json:"excluded_templates"`
	ExcludedSourcePass   int      `json:"excluded_source_passages"`
	NotLive              int      `json:"not_live"`
	SplitState           int      `json:"split_state"`
	Contested            int      `json:"contested"`
	DanglingSupersedes   int      `json:"dangling_supersedes"`
	// B5NotRun, TemplateLineage, M3DeclaredAbsent and MarkedShare are facts of the marker
	// convention: present only when cross_scope_clusters is ASSESSABLE, never zeros
	// standing in for a factor that is not.
	B5NotRun         *int           `json:"b5_not_run,omitempty"`
	TemplateLineage  *int           `json:"template_lineage,omitempty"`
	M3DeclaredAbsent map[string]int `json:"m3_declared_absent,omitempty"`
	ManifestIgnored  int            `json:"manifest_ignored"`
	// MarkedShare is the marked share of live records (marker_convention, R-34).
	MarkedShare *Rate `json:"marked_share,omitempty"`
}

// Report is a signed-to-be audit report.
type Report struct {
	Kind             string   `json:"kind"`
	Service          string   `json:"service"`
	CriteriaID       string   `json:"criteria_id"`
	CriteriaRevision string   `json:"criteria_revision"`
	CriteriaDigest   string   `json:"criteria_digest"`
	Op               string   `json:"op"`
	Family           string   `json:"family"`
	Form             string   `json:"form"`
	Variant          string   `json:"variant"`
	Records          int      `json:"records"`
	Live             int      `json:"live"`
	VerdictLine      string   `json:"verdict_line"`
	CheckEnd         string   `json:"check_end"`
	ScopeStatement   string   `json:"scope_statement"`
	HonestyLine      string   `json:"honesty_line"`
	Factors          Factors  `json:"factors"`
	Coverage         Coverage `json:"coverage"`
}

// UndeclaredCount is the ledger's undeclared-cluster count: nil when the factor is NOT ASSESSABLE.
func (r *Report) UndeclaredCount() *int {
	if r.Factors.CrossScopeClusters.Undeclared == nil {
		return nil
	}
	n := *r.Factors.CrossScopeClusters.Undeclared
	return &n
}

// Status is a factor's resolved assessability in a pre-check.
type Status struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// MatrixCell is one published matrix cell.
type MatrixCell struct {
	Status string `json:"status"`
	Note   string `json:"note"`
}

// PrecheckResult is the free pre-check's answer: assessability only, no factor, no finding.
type PrecheckResult struct {
	Kind             string                `json:"kind"`
	Service          string                `json:"service"`
	CriteriaID       string                `json:"criteria_id"`
	CriteriaRevision string                `json:"criteria_revision"`
	CriteriaDigest   string                `json:"criteria_digest"`
	Op               string                `json:"op"`
	Family           string                `json:"family"`
	Form             string                `json:"form"`
	Variant          string                `json:"variant"`
	Records          int                   `json:"records"`
	Live             int                   `json:"live"`
	MatrixRow        map[string]MatrixCell `json:"matrix_row"`
	Factors          map[string]Status     `json:"factors"`
	CheckedAt        string                `json:"checked_at"`
}

// rate is a percent to one decimal, half up, in integers.
func rate(num, den int, noDen, na string) *Rate {
	if den == 0 {
		return &Rate{Numerator: num, Denominator: den, Value: na, Reason: noDen}
	}
	tenths := (2000*num + den) / (2 * den)
	return &Rate{Numerator: num, Denominator: den, Value: strconv.Itoa(tenths/10) + "." + strconv.Itoa(tenths%10) + "%"}
}

func timestamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

func (st *state) report(checkEnd time.Time) *Report {
	ps, x := st.ps, st.x
	c := ps.Criteria()
	w := c.Words
	rep := &Report{
		Kind: "audit_report", Service: c.Service, CriteriaID: c.CriteriaID,
		CriteriaRevision: c.CriteriaRevision, CriteriaDigest: ps.Digest(), Op: "audit",
		Family: x.scope.Family, Form: x.scope.Form, Variant: x.scope.Variant,
		Records: len(x.records), Live: st.live, CheckEnd: timestamp(checkEnd),
		ScopeStatement: c.Texts.ScopeText, HonestyLine: c.Texts.HonestyLine,
	}
	distinct := int(st.sub.DistinctScopes)
	switch g := st.gateFor("scope_presence"); {
	case g == nil:
		rep.Factors.ScopePresence = ScopePresence{Status: w.Assessable, Scoped: intp(st.scopedEligible),
			Eligible: intp(st.eligible), DistinctScopes: intp(distinct),
			Rate: rate(st.scopedEligible, st.eligible, "", w.NotAssessable)}
	case g.KeepCounts:
		rep.Factors.ScopePresence = ScopePresence{Status: w.NotAssessable, Reason: g.Reason,
			Scoped: intp(st.scopedEligible), Eligible: intp(st.eligible), DistinctScopes: intp(distinct)}
	default:
		rep.Factors.ScopePresence = ScopePresence{Status: w.NotAssessable, Reason: g.Reason}
	}
	unscoped := st.eligible - st.scopedEligible
	switch g := st.gateFor("unscoped_rate"); {
	case g == nil:
		rep.Factors.UnscopedRate = UnscopedRate{Status: w.Assessable, Unscoped: intp(unscoped),
			Eligible: intp(st.eligible), Rate: rate(unscoped, st.eligible, "", w.NotAssessable)}
	case g.KeepCounts:
		rep.Factors.UnscopedRate = UnscopedRate{Status: w.NotAssessable, Reason: g.Reason, Unscoped: intp(unscoped), Eligible: intp(st.eligible)}
	default:
		rep.Factors.UnscopedRate = UnscopedRate{Status: w.NotAssessable, Reason: g.Reason}
	}
	keys := st.sub.ScopeKeys
	sa, ka, ia := x.declaredAbsent()
	rep.Coverage = Coverage{
		ScopeKeys: keys, ScopeKeysSource: x.keySource,
		SessionIDAsRunID: x.cov.SessionIDAsRunID, NonStringScopeValues: x.cov.NonStringScopeValues,
		Eligible: st.eligible, ExcludedTemplates: st.templates, ExcludedSourcePass: st.sourcePassages,
		NotLive: len(x.records) - st.live, SplitState: x.cov.SplitState, Contested: x.cov.Contested,
		DanglingSupersedes: x.cov.DanglingSupersedes,
		M3DeclaredAbsent:   map[string]int{"global_scopes": sa, "global_content_keys": ka, "global_claim_ids": ia},
		ManifestIgnored:    x.cov.ManifestIgnored,
		MarkedShare:        rate(st.marked(), st.live, w.NoLiveRecords, w.NotAssessable),
		B5NotRun:           intp(0), TemplateLineage: intp(0),
	}
	return rep
}

// marked counts the live records that are covered or global.
func (st *state) marked() int {
	n := 0
	for i := range st.x.records {
		r := &st.x.records[i]
		if r.live && (r.covered || r.facts.Global) {
			n++
		}
	}
	return n
}

// Stamp sets a report's check-end time and the verdict line that prints it, for a caller that
// takes the time when the check has ended (after Audit returned).
func Stamp(ps *rules.ProgramSet, rep *Report, checkEnd time.Time) {
	rep.CheckEnd = timestamp(checkEnd)
	rep.VerdictLine = verdictLine(ps.Criteria().Words, rep)
}

// verdictLine fills the published verdict grammar (verdict_grammar.line).
func verdictLine(w rules.Words, rep *Report) string {
	f := rep.Factors
	unscoped := w.NotAssessable
	if f.UnscopedRate.Status == w.Assessable {
		unscoped = f.UnscopedRate.Rate.Value
	}
	count := func(n *int) string {
		if n == nil {
			return w.NotAssessable
		}
		return strconv.Itoa(*n)
	}
	return strings.NewReplacer(
		"{records}", strconv.Itoa(rep.Records), "{live}", strconv.Itoa(rep.Live),
		"{unscoped}", unscoped, "{undeclared}", count(f.CrossScopeClusters.Undeclared),
		"{conflicts}", count(f.ScopeConflicts.Conflicts), "{duplicates}", count(f.Duplicates.Excess),
		"{check_end}", rep.CheckEnd,
	).Replace(w.Verdict)
}

// dropCoverageFacts leaves out of the coverage block the members the criteria name as facts of a
// factor that is NOT ASSESSABLE (coverage_facts, R-54): never a zero beside such a factor.
func dropCoverageFacts(c *rules.Criteria, rep *Report) {
	status := map[string]string{
		"scope_presence": rep.Factors.ScopePresence.Status, "unscoped_rate": rep.Factors.UnscopedRate.Status,
		"cross_scope_clusters": rep.Factors.CrossScopeClusters.Status, "scope_conflicts": rep.Factors.ScopeConflicts.Status,
		"duplicates": rep.Factors.Duplicates.Status,
	}
	for factor, members := range c.CoverageFacts {
		if status[factor] != c.Words.NotAssessable {
			continue
		}
		for _, m := range members {
			switch m {
			case "b5_not_run":
				rep.Coverage.B5NotRun = nil
			case "template_lineage":
				rep.Coverage.TemplateLineage = nil
			case "m3_declared_absent":
				rep.Coverage.M3DeclaredAbsent = nil
			case "marked_share":
				rep.Coverage.MarkedShare = nil
			}
		}
	}
}
