package gen

// BodyBytesCap is the published request-body cap.
const BodyBytesCap = 262144

// RecordCap is the published records-per-audit cap.
const RecordCap = 1000

// Factor statuses.
const (
	statusAssessable    = "ASSESSABLE"
	statusNotAssessable = "NOT ASSESSABLE"
)

// Expected is the oracle's expected outcome for one request body: either a
// refusal, or the pre-check and audit results (the compared fields only).
type Expected struct {
	Refusal  *Refusal  `json:"refusal,omitempty"`
	Precheck *Precheck `json:"precheck,omitempty"`
	Audit    *Audit    `json:"audit,omitempty"`
}

// Refusal is a named free refusal: the rule id, and record_index or
// cap/observed where the rule carries them.
type Refusal struct {
	Rule        string `json:"rule"`
	RecordIndex *int   `json:"record_index,omitempty"`
	Cap         *int   `json:"cap,omitempty"`
	Observed    *int   `json:"observed,omitempty"`
}

// MatrixCell is one verbatim entry of the published assessability matrix.
type MatrixCell struct {
	Status string `json:"status"`
	Note   string `json:"note"`
}

// MatrixRow is the full matrix row for one family and form.
type MatrixRow struct {
	ScopePresence      MatrixCell `json:"scope_presence"`
	UnscopedRate       MatrixCell `json:"unscoped_rate"`
	CrossScopeClusters MatrixCell `json:"cross_scope_clusters"`
	ScopeConflicts     MatrixCell `json:"scope_conflicts"`
	Duplicates         MatrixCell `json:"duplicates"`
}

// Status is a resolved factor status, with the reason when NOT ASSESSABLE.
type Status struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// PrecheckFactors is the resolved per-factor status of a pre-check.
type PrecheckFactors struct {
	ScopePresence      Status `json:"scope_presence"`
	UnscopedRate       Status `json:"unscoped_rate"`
	CrossScopeClusters Status `json:"cross_scope_clusters"`
	ScopeConflicts     Status `json:"scope_conflicts"`
	Duplicates         Status `json:"duplicates"`
}

// Precheck holds the compared fields of a pre-check result.
type Precheck struct {
	Family    string          `json:"family"`
	Form      string          `json:"form"`
	Variant   string          `json:"variant"`
	Records   int             `json:"records"`
	Live      int             `json:"live"`
	MatrixRow MatrixRow       `json:"matrix_row"`
	Factors   PrecheckFactors `json:"factors"`
}

// Rate is a percent with both counts.
type Rate struct {
	Numerator   int    `json:"numerator"`
	Denominator int    `json:"denominator"`
	Value       string `json:"value"`
	Reason      string `json:"reason,omitempty"`
}

// ScopePresence is factor 1.
type ScopePresence struct {
	Status         string `json:"status"`
	Reason         string `json:"reason,omitempty"`
	Scoped         *int   `json:"scoped,omitempty"`
	Eligible       *int   `json:"eligible,omitempty"`
	DistinctScopes *int   `json:"distinct_scopes,omitempty"`
	Rate           *Rate  `json:"rate,omitempty"`
}

// UnscopedRate is factor 2.
type UnscopedRate struct {
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Unscoped *int   `json:"unscoped,omitempty"`
	Eligible *int   `json:"eligible,omitempty"`
	Rate     *Rate  `json:"rate,omitempty"`
}

// ClusterMember is one member of a cross-scope cluster.
type ClusterMember struct {
	ID      string `json:"id"`
	Scope   string `json:"scope"`
	Global  bool   `json:"global"`
	Covered bool   `json:"covered"`
}

// CrossCluster is one classified cross-scope cluster.
type CrossCluster struct {
	Cluster         int             `json:"cluster"`
	Classification  string          `json:"classification"`
	DecidedBy       string          `json:"decided_by"`
	Statement       string          `json:"statement"`
	Reason          string          `json:"reason,omitempty"`
	DistinctScopes  int             `json:"distinct_scopes"`
	DistinctSources *int            `json:"distinct_sources,omitempty"`
	Members         []ClusterMember `json:"members"`
}

// CrossScopeClusters is factor 3.
type CrossScopeClusters struct {
	Status          string          `json:"status"`
	Reason          string          `json:"reason,omitempty"`
	Candidate       *int            `json:"candidate,omitempty"`
	MarkedShared    *int            `json:"marked_shared,omitempty"`
	Undeclared      *int            `json:"undeclared,omitempty"`
	Ambiguous       *int            `json:"ambiguous,omitempty"`
	TemplateLineage *int            `json:"template_lineage,omitempty"`
	MarkedShare     *Rate           `json:"marked_share,omitempty"`
	Clusters        *[]CrossCluster `json:"clusters,omitempty"`
}

// Subchecks holds one T per sub-check of factor scope_conflicts, in the published key order.
type Subchecks[T any] struct {
	AttributedScope  T `json:"attributed_scope"`
	HistoryScope     T `json:"history_scope"`
	EpisodeGroupIDs  T `json:"episode_group_ids"`
	EndpointGroupIDs T `json:"endpoint_group_ids"`
}

// SubcheckCounts is the conflict count by sub-check.
type SubcheckCounts = Subchecks[int]

// SubcheckRecords lists the conflicting record ids by sub-check.
type SubcheckRecords = Subchecks[[]string]

// ScopeConflicts is factor 4.
type ScopeConflicts struct {
	Status     string           `json:"status"`
	Reason     string           `json:"reason,omitempty"`
	Conflicts  *int             `json:"conflicts,omitempty"`
	BySubcheck *SubcheckCounts  `json:"by_subcheck,omitempty"`
	Records    *SubcheckRecords `json:"records,omitempty"`
	Referrals  *[]string        `json:"referrals,omitempty"`
}

// DuplicateCluster is one partition group with at least two live records.
type DuplicateCluster struct {
	Cluster   int      `json:"cluster"`
	Partition string   `json:"partition"`
	Scope     string   `json:"scope"`
	Count     int      `json:"count"`
	Members   []string `json:"members"`
}

// Duplicates is factor 5 (always ASSESSABLE).
type Duplicates struct {
	Status   string             `json:"status"`
	Excess   int                `json:"excess"`
	Live     int                `json:"live"`
	Rate     Rate               `json:"rate"`
	Clusters []DuplicateCluster `json:"clusters"`
}

// Factors are the five audit factors.
type Factors struct {
	ScopePresence      ScopePresence      `json:"scope_presence"`
	UnscopedRate       UnscopedRate       `json:"unscoped_rate"`
	CrossScopeClusters CrossScopeClusters `json:"cross_scope_clusters"`
	ScopeConflicts     ScopeConflicts     `json:"scope_conflicts"`
	Duplicates         Duplicates         `json:"duplicates"`
}

// M3Absent counts manifest M3 entries matching no submitted record.
type M3Absent struct {
	GlobalScopes      int `json:"global_scopes"`
	GlobalContentKeys int `json:"global_content_keys"`
	GlobalClaimIDs    int `json:"global_claim_ids"`
}

// Coverage is the audit coverage block.
type Coverage struct {
	ScopeKeys              []string `json:"scope_keys"`
	ScopeKeysSource        string   `json:"scope_keys_source"`
	SessionIDAsRunID       int      `json:"session_id_as_run_id"`
	NonStringScopeValues   int      `json:"non_string_scope_values"`
	Eligible               int      `json:"eligible"`
	ExcludedTemplates      int      `json:"excluded_templates"`
	ExcludedSourcePassages int      `json:"excluded_source_passages"`
	NotLive                int      `json:"not_live"`
	SplitState             int      `json:"split_state"`
	Contested              int      `json:"contested"`
	DanglingSupersedes     int      `json:"dangling_supersedes"`
	// B5NotRun, TemplateLineage, M3DeclaredAbsent and MarkedShare are facts of the
	// marker convention and L-4: present only when cross_scope_clusters is
	// ASSESSABLE, absent (never zeros) when it is not (R-54, revision 1.0.2).
	B5NotRun         *int      `json:"b5_not_run,omitempty"`
	TemplateLineage  *int      `json:"template_lineage,omitempty"`
	M3DeclaredAbsent *M3Absent `json:"m3_declared_absent,omitempty"`
	ManifestIgnored  int       `json:"manifest_ignored"`
	// MarkedShare is the marked share of live records.
	MarkedShare *Rate `json:"marked_share,omitempty"`
}

// Audit holds the compared fields of an audit report.
type Audit struct {
	Family         string   `json:"family"`
	Form           string   `json:"form"`
	Variant        string   `json:"variant"`
	Records        int      `json:"records"`
	Live           int      `json:"live"`
	VerdictPrefix  string   `json:"verdict_prefix"`
	ScopeStatement string   `json:"scope_statement"`
	HonestyLine    string   `json:"honesty_line"`
	Factors        Factors  `json:"factors"`
	Coverage       Coverage `json:"coverage"`
}

func intp(n int) *int { return &n }
