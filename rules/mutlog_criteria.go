package rules

import (
	"go.yaml.in/yaml/v3"
)

// MutLogCriteria is a criteria file of kind mutation-log as written (docs/forget-envelope.md).
// Decoding is strict: an unknown key anywhere is an error.
type MutLogCriteria struct {
	Header           `yaml:",inline"`
	Kind             string            `yaml:"kind" json:"kind"`
	Caps             MutLogCaps        `yaml:"caps" json:"caps"`
	Corpus           MutLogCorpus      `yaml:"corpus" json:"corpus"`
	Words            MutLogWords       `yaml:"words" json:"words"`
	Texts            map[string]string `yaml:"texts" json:"texts"`
	Endpoints        map[string]string `yaml:"endpoints" json:"endpoints"`
	Refusals         []string          `yaml:"refusals" json:"refusals"`
	Format           string            `yaml:"format" json:"format"`
	OpsEvents        map[string]OpSpec `yaml:"ops_events" json:"ops_events"`
	Canonicalization []string          `yaml:"canonicalization" json:"canonicalization"`
	Replay           ReplaySpec        `yaml:"replay" json:"replay"`
	Decisions        MutLogDecisions   `yaml:"decisions" json:"-"`
	// Declarations are the log facts an export sets with a top-level member, keyed by the fact
	// (FE-R-34, FE-R-38): the member names and the values that declare them are published words,
	// so they are data here and the mechanics only know the facts' names (MutLogDeclaredFacts).
	Declarations map[string]Declaration `yaml:"declarations" json:"declarations,omitempty"`
	// DoesNotApply are the gates of the stores the rules do not apply to (FE-R-38), tried before
	// every factor's gates.
	DoesNotApply []Gate            `yaml:"does_not_apply" json:"does_not_apply,omitempty"`
	Gates        map[string][]Gate `yaml:"gates" json:"gates"`
	// FactGates gate single facts of an ASSESSABLE factor after replay (FE-R-35, FE-R-37), keyed
	// "<factor>.<fact>" (MutLogGatedFacts).
	FactGates       map[string][]Gate `yaml:"fact_gates" json:"fact_gates,omitempty"`
	Interpretations []Interpretation  `yaml:"interpretations" json:"interpretations"`
}

// MutLogCaps are the published caps of a mutation-log rule set.
type MutLogCaps struct {
	BodyBytes       int `yaml:"body_bytes" json:"body_bytes"`
	EventsPerAudit  int `yaml:"events_per_audit" json:"events_per_audit"`
	SnapshotEntries int `yaml:"snapshot_entries" json:"snapshot_entries"`
	ScopeDimensions int `yaml:"scope_dimensions" json:"scope_dimensions"`
	JSONDepth       int `yaml:"json_depth" json:"json_depth"`
	RuleCosts       `yaml:",inline"`
}

// MutLogCorpus names the rule set's corpus directory (relative to the repository root) and its pin.
type MutLogCorpus struct {
	ID     string `yaml:"id" json:"id"`
	Dir    string `yaml:"dir" json:"dir"`
	SHA256 string `yaml:"sha256" json:"sha256"`
}

// MutLogWords are the fixed words of a mutation-log report.
type MutLogWords struct {
	FactorWords `yaml:",inline"`
	NoForgets   string `yaml:"no_forgets" json:"no_forgets"`
	Verdict     string `yaml:"verdict" json:"verdict"`
	// VerdictDoesNotApply is the verdict line of a log a does_not_apply gate holds for.
	VerdictDoesNotApply string `yaml:"verdict_does_not_apply" json:"verdict_does_not_apply,omitempty"`
}

// OpSpec says what an event operation carries (FE-R-10).
type OpSpec struct {
	Target         string `yaml:"target" json:"target"`
	Version        bool   `yaml:"version" json:"version,omitempty"`
	Envelope       bool   `yaml:"envelope" json:"envelope,omitempty"`
	AuthorityCheck bool   `yaml:"authority_check" json:"authority_check,omitempty"`
}

// ReplaySpec is the replay transition table: per forget mode, per operation, the status a slot
// moves to from the status it is in (a status with no entry is left unchanged).
type ReplaySpec struct {
	Initial      string                                  `yaml:"initial" json:"initial"`
	Live         string                                  `yaml:"live" json:"live"`
	ReinsertFrom []string                                `yaml:"reinsert_from" json:"reinsert_from"`
	Modes        map[string]map[string]map[string]string `yaml:"modes" json:"modes"`
}

// Declaration says how an export declares a log fact: the fact holds when the export's top-level
// member Member is exactly the JSON string Value. Any other value, or none, declares nothing and is
// never refused.
type Declaration struct {
	Member string `yaml:"member" json:"member"`
	Value  string `yaml:"value" json:"value"`
}

// MutLogDecisions are the per-event predicates, by subject, in order.
type MutLogDecisions struct {
	Forget   yaml.Node `yaml:"forget"`
	Reinsert yaml.Node `yaml:"reinsert"`
	Reopen   yaml.Node `yaml:"reopen"`
	Reassign yaml.Node `yaml:"reassign"`
}

// The mechanics' closed sets for kind mutation-log.
var (
	// MutLogRefusalCodes are the refusal ids the mutation-log mechanics implement.
	MutLogRefusalCodes = []string{
		"export_required", "format_invalid", "forget_mode_invalid", "scope_dimensions_invalid",
		"principals_invalid", "events_required", "events_empty", "event_count_cap", "event_not_object",
		"event_seq_invalid", "event_seq_duplicate", "event_op_invalid", "event_key_invalid",
		"event_principal_invalid", "event_version_invalid", "envelope_invalid", "snapshot_invalid",
		"snapshot_count_cap",
	}
	// MutLogFactors are the factors of a mutation-log report, in report order.
	MutLogFactors = []string{
		"forget_envelopes", "reinserts_after_forget", "reinserts_outside_envelope", "alias_reinserts",
		"reopens", "reassignments", "replay",
	}
	// CanonicalSteps are the canonicalization steps the mechanics implement (FE-R-12).
	CanonicalSteps = []string{"trim_ascii_space", "ascii_lower"}
	// MutLogOps are the event operations and the target member each reads.
	MutLogOps = map[string]string{"write": "key", "forget": "key", "reopen": "key", "reassign": "session"}
	// MutLogSubjects are the decision subjects and the predicates the mechanics read, in order.
	MutLogSubjects = []string{"forget", "reinsert", "reopen", "reassign"}
	mutLogSlots    = map[string][]string{
		"forget":   {"with_envelope"},
		"reinsert": {"checked", "unattributed", "outside", "silent", "alias"},
		"reopen":   {"unchecked"},
		"reassign": {"unchecked"},
	}
	// MutLogGatedFacts are the facts of an ASSESSABLE factor that fact_gates may make NOT
	// ASSESSABLE (each leaves out its seqs with it).
	MutLogGatedFacts    = []string{"reinserts_outside_envelope.outside", "reinserts_outside_envelope.silent"}
	mutLogVerdictFields = []string{"{events}", "{forgets}", "{with_envelope}", "{reinserts}", "{outside}", "{aliases}",
		"{unchecked_reopens}", "{retired_writes}", "{unchecked_reassignments}", "{mismatches}", "{check_end}"}
)

// DecisionSlots lists the predicates of one decision subject in evaluation order.
func DecisionSlots(subject string) []string { return mutLogSlots[subject] }
