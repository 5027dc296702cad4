package rules

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Criteria is criteria.yaml as written. Decoding is strict: an unknown key anywhere is an error.
type Criteria struct {
	Header             `yaml:",inline"`
	Caps               Caps                                       `yaml:"caps" json:"caps"`
	Corpus             CorpusPin                                  `yaml:"corpus" json:"corpus"`
	Words              Words                                      `yaml:"words" json:"words"`
	Texts              Texts                                      `yaml:"texts" json:"texts"`
	Endpoints          map[string]string                          `yaml:"endpoints" json:"endpoints"`
	LedgerClosedFields []string                                   `yaml:"ledger_closed_fields" json:"ledger_closed_fields"`
	Matrix             map[string]map[string]map[string]MatrixRow `yaml:"matrix" json:"assessability_matrix"`
	Interpretations    []Interpretation                           `yaml:"interpretations" json:"interpretations"`
	Refusals           []string                                   `yaml:"refusals" json:"refusals"`
	Families           map[string]FamilySpec                      `yaml:"families" json:"families"`
	Forms              map[string]FormSpec                        `yaml:"forms" json:"forms"`
	GlobalScopeValue   string                                     `yaml:"global_scope_value" json:"global_scope_value"`
	Record             RecordRules                                `yaml:"record" json:"record"`
	Conflicts          []ConflictRule                             `yaml:"conflicts" json:"conflicts"`
	Clusters           ClusterRules                               `yaml:"clusters" json:"clusters"`
	Gates              map[string][]Gate                          `yaml:"gates" json:"gates"`
	// NeverScopeKeys are names manifest.declared_scope_keys may not list: a manifest naming
	// one is declared_scope_keys_invalid.
	NeverScopeKeys []string `yaml:"never_scope_keys" json:"never_scope_keys,omitempty"`
	// FreeTextScopeValue says when a value under a manifest-declared scope key reads as free text
	// such an export is declared_scope_keys_invalid. Absent: no value is refused.
	FreeTextScopeValue *FreeTextLimits `yaml:"free_text_scope_value" json:"free_text_scope_value,omitempty"`
	// CoverageFacts names, per factor, the coverage members that are that factor's facts: they
	// are left out of the coverage block when the factor is NOT ASSESSABLE. Members are
	// from CoverageFactMembers.
	CoverageFacts map[string][]string `yaml:"coverage_facts" json:"coverage_facts,omitempty"`
	// KillLineTripwires are the kill line's ledger tripwires as numbers (killline.go).
	KillLineTripwires *KillLineTripwires `yaml:"kill_line_tripwires" json:"kill_line_tripwires,omitempty"`
}

// Header is how a criteria file of any kind opens: its identity, what it offers and its terms.
// Both kinds embed it inline: its keys are top-level keys of the file and of the document.
type Header struct {
	Schema           string   `yaml:"schema" json:"schema"`
	CriteriaID       string   `yaml:"criteria_id" json:"criteria_id"`
	CriteriaRevision string   `yaml:"criteria_revision" json:"criteria_revision"`
	Family           string   `yaml:"family" json:"family"`
	Service          string   `yaml:"service" json:"service"`
	Version          string   `yaml:"version" json:"version"`
	Ops              []string `yaml:"ops" json:"ops"`
	OpsNotOffered    []string `yaml:"ops_not_offered" json:"ops_not_offered"`
	Price            Price    `yaml:"price" json:"price"`
	FreeTier         FreeTier `yaml:"free_tier" json:"free_tier"`
}

// CoverageFactMembers are the coverage members the mechanics can leave out with their factor.
var CoverageFactMembers = []string{"b5_not_run", "template_lineage", "m3_declared_absent", "marked_share"}

// FreeTextLimits are the lengths past which a scope value reads as free text: more than
// MaxBytes UTF-8 bytes, or more than MaxBytesWithWhitespace bytes with an ASCII space, tab, line
// feed or carriage return in it.
type FreeTextLimits struct {
	MaxBytes               int `yaml:"max_bytes" json:"max_bytes"`
	MaxBytesWithWhitespace int `yaml:"max_bytes_with_whitespace" json:"max_bytes_with_whitespace"`
}

// Price is the published price of one audit.
type Price struct {
	USDCUnitsPerCall int64  `yaml:"usdc_units_per_call" json:"usdc_units_per_call"`
	Label            string `yaml:"label" json:"label"`
	Status           string `yaml:"status" json:"status"`
	Basis            string `yaml:"basis" json:"basis"`
}

// FreeTier is the free pre-check allowance.
type FreeTier struct {
	PerDay        int    `yaml:"per_day" json:"per_day"`
	MinIntervalMS int    `yaml:"min_interval_ms" json:"min_interval_ms"`
	OnExhaustion  string `yaml:"on_exhaustion" json:"on_exhaustion"`
}

// Caps are the published input caps plus the JSON depth limit of R-3.
type Caps struct {
	BodyBytes       int `yaml:"body_bytes" json:"body_bytes"`
	RecordsPerAudit int `yaml:"records_per_audit" json:"records_per_audit"`
	JSONDepth       int `yaml:"json_depth" json:"json_depth"`
	RuleCosts       `yaml:",inline"`
}

// RuleCosts bound each expression of a criteria file of any kind: RuleCostEstimate is the static
// cost budget of one expression, RuleCostRuntime its runtime limit.
type RuleCosts struct {
	RuleCostEstimate uint64 `yaml:"rule_cost_estimate" json:"rule_cost_estimate"`
	RuleCostRuntime  uint64 `yaml:"rule_cost_runtime" json:"rule_cost_runtime"`
}

// CorpusPin names the corpus a revision must re-pass and its pin.
type CorpusPin struct {
	ID     string `yaml:"id" json:"id"`
	SHA256 string `yaml:"sha256" json:"sha256"`
}

// Words are the fixed words of reports.
type Words struct {
	FactorWords   `yaml:",inline"`
	NoLiveRecords string `yaml:"no_live_records" json:"no_live_records"`
	Verdict       string `yaml:"verdict" json:"verdict"`
}

// FactorWords are the words of a factor's assessability in reports of any kind.
type FactorWords struct {
	Assessable    string `yaml:"assessable" json:"assessable"`
	NotAssessable string `yaml:"not_assessable" json:"not_assessable"`
}

// Texts are the published texts, verbatim.
type Texts struct {
	InputContractText        string `yaml:"input_contract_text" json:"input_contract_text"`
	MalformedRule            string `yaml:"malformed_rule" json:"malformed_rule"`
	FactorRules              string `yaml:"factor_rules" json:"factor_rules"`
	ScopeText                string `yaml:"scope_text" json:"scope_text"`
	MarkerConvention         string `yaml:"marker_convention" json:"marker_convention"`
	ExtensionRule            string `yaml:"extension_rule" json:"extension_rule"`
	LettaRules               string `yaml:"letta_rules" json:"letta_rules"`
	UndeclaredLabel          string `yaml:"undeclared_label" json:"undeclared_label"`
	FreePrecheck             string `yaml:"free_precheck" json:"free_precheck"`
	HonestyLine              string `yaml:"honesty_line" json:"honesty_line"`
	Retention                string `yaml:"retention" json:"retention"`
	PaymentIncludes          string `yaml:"payment_includes" json:"payment_includes"`
	KillLine                 string `yaml:"kill_line" json:"kill_line"`
	Never                    string `yaml:"never" json:"never"`
	Forbidden                string `yaml:"forbidden" json:"forbidden"`
	PriceConstruction        string `yaml:"price_construction" json:"price_construction"`
	FamilyNote               string `yaml:"family_note" json:"family_note"`
	CorpusPinDefinition      string `yaml:"corpus_pin_definition" json:"corpus_pin_definition"`
	VerdictGrammarLine       string `yaml:"verdict_grammar_line" json:"verdict_grammar_line"`
	VerdictGrammarVocabulary string `yaml:"verdict_grammar_vocabulary" json:"verdict_grammar_vocabulary"`
	InputContractBody        string `yaml:"input_contract_body" json:"input_contract_body"`
	InputContractOverCap     string `yaml:"input_contract_over_cap" json:"input_contract_over_cap"`
	InputContractValidation  string `yaml:"input_contract_validation" json:"input_contract_validation"`
	CustodyConstruction      string `yaml:"custody_construction" json:"custody_construction"`
	CustodyLedgerNote        string `yaml:"custody_ledger_note" json:"custody_ledger_note"`
	CustodyErrors            string `yaml:"custody_errors" json:"custody_errors"`
}

// MatrixRow is one cell of the published assessability matrix.
type MatrixRow struct {
	Status string `yaml:"status" json:"status"`
	Note   string `yaml:"note" json:"note"`
}

// Interpretation is one reading the revision relies on.
type Interpretation struct {
	ID     string `yaml:"id" json:"id"`
	Source string `yaml:"source" json:"source"`
	Text   string `yaml:"text" json:"text"`
}

// ScopeFromKeys is the family scope mechanics that reads the declared (or default) scope keys; the
// other is "attached_to" (Letta, R-12).
const ScopeFromKeys = "keys"

// FamilySpec describes one published family.
type FamilySpec struct {
	Variants         []string          `yaml:"variants" json:"variants"`
	DefaultVariant   string            `yaml:"default_variant" json:"default_variant"`
	Scope            string            `yaml:"scope" json:"scope"`
	DefaultScopeKeys []string          `yaml:"default_scope_keys" json:"default_scope_keys"`
	StandIns         map[string]string `yaml:"stand_ins" json:"stand_ins,omitempty"`
}

// FormSpec describes one published form.
type FormSpec struct {
	ContentField string `yaml:"content_field" json:"content_field"`
	Refusal      string `yaml:"refusal" json:"refusal"`
	AllowEmpty   bool   `yaml:"allow_empty" json:"allow_empty"`
}

// RecordRules are the per-record expressions.
type RecordRules struct {
	Liveness   []LivenessRule `yaml:"liveness" json:"liveness"`
	Predicates yaml.Node      `yaml:"predicates" json:"-"`
	Marks      yaml.Node      `yaml:"marks" json:"-"`
}

// LivenessRule is one named condition under which a record is not live.
type LivenessRule struct {
	ID   string `yaml:"id" json:"id"`
	When Expr   `yaml:"when" json:"when"`
}

// ConflictRule is one field-equality sub-check of factor scope_conflicts.
type ConflictRule struct {
	ID       string `yaml:"id" json:"id"`
	Applies  Expr   `yaml:"applies" json:"applies"`
	Conflict Expr   `yaml:"conflict" json:"conflict"`
}

// ClusterRules are the cross-scope cluster expressions.
type ClusterRules struct {
	Forms           Expr                 `yaml:"forms" json:"forms"`
	TemplateLineage Expr                 `yaml:"template_lineage" json:"template_lineage"`
	B5Runs          Expr                 `yaml:"b5_runs" json:"b5_runs"`
	Classes         map[string]ClassSpec `yaml:"classes" json:"classes"`
	Precedence      []PrecedenceRule     `yaml:"precedence" json:"precedence"`
	// M4Depth says which records the M4 depth limit counts: M4DepthMembers for the
	// cluster's members as L-4 defines them, M4DepthLiveScoped (the default) for every live scoped
	// record with the content key.
	M4Depth string `yaml:"m4_depth" json:"m4_depth,omitempty"`
}

// The values of clusters.m4_depth.
const (
	M4DepthMembers    = "members"
	M4DepthLiveScoped = "live_scoped"
)

// ClassSpec is what a cluster classification prints.
type ClassSpec struct {
	Statement string `yaml:"statement" json:"statement"`
}

// PrecedenceRule is one step of the cluster decision precedence.
type PrecedenceRule struct {
	ID string `yaml:"id" json:"id"`
	// Name is the step's published name (the marker convention's words: "broken pointer").
	Name   string `yaml:"name" json:"name,omitempty"`
	When   Expr   `yaml:"when" json:"when"`
	Class  string `yaml:"class" json:"class"`
	Reason string `yaml:"reason" json:"reason,omitempty"`
	// ReferToConflicts lists the cluster's copies as referrals under scope_conflicts.
	ReferToConflicts bool `yaml:"refer_to_conflicts" json:"refer_to_conflicts,omitempty"`
}

// Gate makes a factor NOT ASSESSABLE with Reason when When holds.
type Gate struct {
	When   Expr   `yaml:"when" json:"when"`
	Reason string `yaml:"reason" json:"reason"`
	// KeepCounts prints the factor's counts beside NOT ASSESSABLE (R-28: a zero denominator).
	KeepCounts bool `yaml:"keep_counts" json:"keep_counts,omitempty"`
}

// Expr is a CEL expression together with where it stands in the criteria file.
type Expr struct {
	Text string
	// Line and Column are 1-based positions of the first character of the expression text.
	Line, Column int
	// Style is the YAML scalar style the expression was written in.
	Style yaml.Style
	// Path is the YAML path of the expression (for example "clusters.precedence[3].when").
	Path string
}

// UnmarshalYAML keeps the node's position with the text.
func (e *Expr) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: an expression must be a string", n.Line)
	}
	e.Text, e.Line, e.Column, e.Style = n.Value, n.Line, n.Column, n.Style
	return nil
}

// MarshalJSON publishes the expression text.
func (e Expr) MarshalJSON() ([]byte, error) { return jsonString(e.Text), nil }
