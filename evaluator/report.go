package evaluator

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
