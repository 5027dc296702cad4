package rules

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
	"go.yaml.in/yaml/v3"
)

// The criteria kinds: each names the evaluator mechanics a criteria file needs. A file without
// `kind` is KindMemoryExport (v1's criteria.yaml).
const (
	KindMemoryExport = "memory-export"
	KindMutationLog  = "mutation-log"
)

// KindOf reads the top-level `kind` of a criteria file (KindMemoryExport when absent).
func KindOf(src []byte) (string, error) {
	var head struct {
		Kind string `yaml:"kind"`
	}
	if err := yaml.Unmarshal(src, &head); err != nil {
		return "", fmt.Errorf("criteria kind: %w", err)
	}
	if head.Kind == "" {
		return KindMemoryExport, nil
	}
	return head.Kind, nil
}

// MutLogCriteria is a criteria file of kind mutation-log as written (docs/forget-envelope.md).
// Decoding is strict: an unknown key anywhere is an error.
type MutLogCriteria struct {
	Schema           string            `yaml:"schema" json:"schema"`
	Kind             string            `yaml:"kind" json:"kind"`
	CriteriaID       string            `yaml:"criteria_id" json:"criteria_id"`
	CriteriaRevision string            `yaml:"criteria_revision" json:"criteria_revision"`
	Family           string            `yaml:"family" json:"family"`
	Service          string            `yaml:"service" json:"service"`
	Version          string            `yaml:"version" json:"version"`
	Ops              []string          `yaml:"ops" json:"ops"`
	OpsNotOffered    []string          `yaml:"ops_not_offered" json:"ops_not_offered"`
	Price            Price             `yaml:"price" json:"price"`
	FreeTier         FreeTier          `yaml:"free_tier" json:"free_tier"`
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
	BodyBytes        int    `yaml:"body_bytes" json:"body_bytes"`
	EventsPerAudit   int    `yaml:"events_per_audit" json:"events_per_audit"`
	SnapshotEntries  int    `yaml:"snapshot_entries" json:"snapshot_entries"`
	ScopeDimensions  int    `yaml:"scope_dimensions" json:"scope_dimensions"`
	JSONDepth        int    `yaml:"json_depth" json:"json_depth"`
	RuleCostEstimate uint64 `yaml:"rule_cost_estimate" json:"rule_cost_estimate"`
	RuleCostRuntime  uint64 `yaml:"rule_cost_runtime" json:"rule_cost_runtime"`
}

// MutLogCorpus names the rule set's corpus directory (relative to the repository root) and its pin.
type MutLogCorpus struct {
	ID     string `yaml:"id" json:"id"`
	Dir    string `yaml:"dir" json:"dir"`
	SHA256 string `yaml:"sha256" json:"sha256"`
}

// MutLogWords are the fixed words of a mutation-log report.
type MutLogWords struct {
	Assessable    string `yaml:"assessable" json:"assessable"`
	NotAssessable string `yaml:"not_assessable" json:"not_assessable"`
	NoForgets     string `yaml:"no_forgets" json:"no_forgets"`
	Verdict       string `yaml:"verdict" json:"verdict"`
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

// The typed inputs of a mutation-log rule set's CEL expressions.

// LogEvent is the event being judged (FE-R-20..FE-R-27).
type LogEvent struct {
	Seq              int64  `cel:"seq"`
	Op               string `cel:"op"`
	HasPrincipal     bool   `cel:"has_principal"`
	Principal        string `cel:"principal"`
	EnvelopeRecorded bool   `cel:"envelope_recorded"`
	// AuthorityChecked is true when the event carries authority_checked exactly true.
	AuthorityChecked bool `cel:"authority_checked"`
	// RawKey identifies the key as written (FE-R-13); opaque, never printed.
	RawKey string `cel:"raw_key"`
	// GrantsCover is true when the acting principal is in the table and its grants cover the
	// event's slot (FE-R-23).
	GrantsCover bool `cel:"grants_cover"`
}

// LogForget is the governing forget of a reinsert (FE-R-19).
type LogForget struct {
	Seq              int64    `cel:"seq"`
	EnvelopeRecorded bool     `cel:"envelope_recorded"`
	Envelope         []string `cel:"envelope"`
	RawKey           string   `cel:"raw_key"`
}

// LogFacts are the log-level facts the assessability gates read (FE-R-30).
type LogFacts struct {
	ForgetMode          string `cel:"forget_mode"`
	Events              int64  `cel:"events"`
	Forgets             int64  `cel:"forgets"`
	ForgetsWithEnvelope int64  `cel:"forgets_with_envelope"`
	Principals          int64  `cel:"principals"`
	Reassigns           int64  `cel:"reassigns"`
	Snapshot            bool   `cel:"snapshot"`
	// NewKeys holds when the export declares that its store gives a re-added record a new key
	// (FE-R-34). The member and the value that declare it are the criteria's declarations.
	NewKeys bool `cel:"new_keys" declared:"true"`
	// TombstoneOnly holds when the export declares a store the rules do not apply to (FE-R-38),
	// by the criteria's declarations.
	TombstoneOnly bool `cel:"tombstone_only" declared:"true"`
}

// Named is every fact by the name the gates read it by.
func (f *LogFacts) Named() map[string]any {
	v := reflect.ValueOf(f).Elem()
	out := make(map[string]any, v.NumField())
	for i := 0; i < v.NumField(); i++ {
		out[v.Type().Field(i).Tag.Get("cel")] = v.Field(i).Interface()
	}
	return out
}

// MutLogDeclaredFacts are the log facts a criteria file's declarations may set, in field order:
// the boolean facts of LogFacts tagged declared.
var MutLogDeclaredFacts = func() []string {
	var out []string
	ty := reflect.TypeOf(LogFacts{})
	for i := 0; i < ty.NumField(); i++ {
		if ty.Field(i).Tag.Get("declared") == "true" && ty.Field(i).Type.Kind() == reflect.Bool {
			out = append(out, ty.Field(i).Tag.Get("cel"))
		}
	}
	return out
}()

// DeclaredFact is a compiled declaration: the log fact Fact holds when the export's top-level
// member Member is exactly the string Value.
type DeclaredFact struct {
	Fact, Member, Value string
	field               int // index of the fact in LogFacts
}

// Set makes the fact hold in f.
func (d DeclaredFact) Set(f *LogFacts) { reflect.ValueOf(f).Elem().Field(d.field).SetBool(true) }

func declaredFact(fact string, d Declaration) DeclaredFact {
	ty := reflect.TypeOf(LogFacts{})
	for i := 0; i < ty.NumField(); i++ {
		if ty.Field(i).Tag.Get("cel") == fact {
			return DeclaredFact{Fact: fact, Member: d.Member, Value: d.Value, field: i}
		}
	}
	panic("rules: declared fact " + fact + " is not a field of LogFacts")
}

// LogCounts are a factor's counts after replay, read by the fact gates (FE-R-35, FE-R-37).
type LogCounts struct {
	Reinserts    int64 `cel:"reinserts"`
	Checked      int64 `cel:"checked"`
	NoEnvelope   int64 `cel:"no_envelope"`
	Unattributed int64 `cel:"unattributed"`
	// Judged are the checked reinserts that carry a principal (FE-R-37).
	Judged   int64 `cel:"judged"`
	Unjudged int64 `cel:"unjudged"`
}

const (
	logEventType  = "rules.LogEvent"
	logForgetType = "rules.LogForget"
	logFactsType  = "rules.LogFacts"
	logCountsType = "rules.LogCounts"
)

func mutLogEnv() (*cel.Env, error) {
	return cel.NewEnv(
		ext.NativeTypes(types.ParseStructTags(true),
			reflect.TypeOf(LogEvent{}), reflect.TypeOf(LogForget{}), reflect.TypeOf(LogFacts{}), reflect.TypeOf(LogCounts{})),
		cel.ParserExpressionSizeLimit(4096),
		cel.ParserRecursionLimit(64),
		cel.ASTValidators(cel.ValidateComprehensionNestingLimit(1), cel.ValidateHomogeneousAggregateLiterals()),
		cel.CostModelVersion(costModelVersion),
	)
}

// MutLogSet is a compiled mutation-log criteria revision: immutable and safe for concurrent use.
type MutLogSet struct {
	c         *MutLogCriteria
	digest    string
	source    []byte
	name      string
	decisions map[string][]*Program
	gates     map[string][]GateProgram
	dna       []GateProgram
	facts     map[string][]GateProgram
	declared  []DeclaredFact
}

// Served is what every compiled criteria revision answers, whatever its kind.
type Served interface {
	ID() string
	Revision() string
	Digest() string
	Kind() string
	Name() string
	Source() []byte
	Document() (map[string]any, error)
}

var (
	_ Served = (*ProgramSet)(nil)
	_ Served = (*MutLogSet)(nil)
)

// Kind of a v1 program set.
func (ps *ProgramSet) Kind() string { return KindMemoryExport }

// LoadAny compiles a criteria file of any kind the engine has mechanics for.
func LoadAny(name string, src []byte) (Served, error) {
	k, err := KindOf(src)
	if err != nil {
		return nil, err
	}
	switch k {
	case KindMemoryExport:
		return Load(name, src)
	case KindMutationLog:
		return LoadMutationLog(name, src)
	}
	return nil, fmt.Errorf("criteria kind %q: no evaluator mechanics for it (known: %s, %s)", k, KindMemoryExport, KindMutationLog)
}

// LoadAnyFile reads and compiles a criteria file of any kind.
func LoadAnyFile(path string) (Served, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read criteria: %w", err)
	}
	return LoadAny(filepath.Base(path), src)
}

// LoadMutationLog strictly decodes, validates and compiles a criteria file of kind mutation-log.
// On failure the error is a ProblemList holding every problem found, sorted by position.
func LoadMutationLog(name string, src []byte) (*MutLogSet, error) {
	c := &compiler{src: src, lines: strings.Split(string(src), "\n"), probs: newProblems(name, src)}
	var crit MutLogCriteria
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&crit); err != nil {
		c.yamlError(err)
		return nil, c.probs.err()
	}
	ms := &MutLogSet{c: &crit, decisions: map[string][]*Program{}, gates: map[string][]GateProgram{}, facts: map[string][]GateProgram{}}
	c.validateMutLog(&crit)
	if err := c.probs.err(); err != nil {
		return nil, err
	}
	c.compileMutLog(ms)
	if err := c.probs.err(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(src)
	ms.digest = "sha256:" + hex.EncodeToString(sum[:])
	ms.source = append([]byte(nil), src...)
	ms.name = name
	return ms, nil
}

func (c *compiler) validateMutLog(crit *MutLogCriteria) {
	var root yaml.Node
	_ = yaml.Unmarshal(c.src, &root)
	bad := func(path, format string, args ...any) {
		l, col := nodeAt(&root, path)
		c.probs.add(l, col, path, format, args...)
	}
	if crit.Schema != SchemaID {
		bad("schema", "schema must be %q", SchemaID)
	}
	if crit.Kind != KindMutationLog {
		bad("kind", "kind must be %q", KindMutationLog)
	}
	for _, f := range []struct{ path, v string }{
		{"criteria_id", crit.CriteriaID}, {"criteria_revision", crit.CriteriaRevision}, {"service", crit.Service},
		{"format", crit.Format}, {"corpus.id", crit.Corpus.ID}, {"corpus.dir", crit.Corpus.Dir},
		{"words.assessable", crit.Words.Assessable}, {"words.not_assessable", crit.Words.NotAssessable},
		{"words.verdict", crit.Words.Verdict}, {"texts.scope_text", crit.Texts["scope_text"]},
		{"texts.honesty_line", crit.Texts["honesty_line"]}, {"replay.initial", crit.Replay.Initial},
		{"replay.live", crit.Replay.Live},
	} {
		if f.v == "" {
			bad(f.path, "%s is required", f.path)
		}
	}
	cp := crit.Caps
	if cp.BodyBytes <= 0 || cp.EventsPerAudit <= 0 || cp.SnapshotEntries <= 0 || cp.ScopeDimensions <= 0 || cp.JSONDepth <= 0 || cp.RuleCostEstimate == 0 || cp.RuleCostRuntime == 0 {
		bad("caps", "caps must all be positive")
	}
	if crit.Price.USDCUnitsPerCall < 0 {
		bad("price.usdc_units_per_call", "price must not be negative")
	}
	if crit.Price.USDCUnitsPerCall == 0 && crit.Price.Status != "UNPRICED" {
		bad("price.status", "an unpriced rule set (usdc_units_per_call 0) must say status UNPRICED")
	}
	if crit.FreeTier.PerDay <= 0 || crit.FreeTier.MinIntervalMS < 0 {
		bad("free_tier", "free_tier.per_day must be positive and min_interval_ms not negative")
	}
	seen := map[string]bool{}
	for i, r := range crit.Refusals {
		if !contains(MutLogRefusalCodes, r) {
			bad(fmt.Sprintf("refusals[%d]", i), "unknown refusal %q (the mechanics implement: %s)", r, strings.Join(MutLogRefusalCodes, ", "))
		}
		if seen[r] {
			bad(fmt.Sprintf("refusals[%d]", i), "refusal %q is listed twice", r)
		}
		seen[r] = true
	}
	for _, r := range MutLogRefusalCodes {
		if !seen[r] {
			bad("refusals", "refusal %q is missing: every implemented refusal must be placed in the order", r)
		}
	}
	for op, target := range MutLogOps {
		spec, ok := crit.OpsEvents[op]
		if !ok {
			bad("ops_events", "operation %q is missing", op)
			continue
		}
		if spec.Target != target {
			bad("ops_events."+op+".target", "operation %q reads its target from %q", op, target)
		}
	}
	for _, op := range sortedKeys(crit.OpsEvents) {
		if _, ok := MutLogOps[op]; !ok {
			bad("ops_events."+op, "unknown operation %q", op)
		}
	}
	for i, s := range crit.Canonicalization {
		if !contains(CanonicalSteps, s) {
			bad(fmt.Sprintf("canonicalization[%d]", i), "unknown step %q (the mechanics implement: %s)", s, strings.Join(CanonicalSteps, ", "))
		}
	}
	if len(crit.Replay.Modes) == 0 {
		bad("replay.modes", "at least one forget mode is required")
	}
	for _, m := range sortedKeys(crit.Replay.Modes) {
		for _, op := range sortedKeys(crit.Replay.Modes[m]) {
			if op == "reassign" || MutLogOps[op] == "" {
				bad("replay.modes."+m+"."+op, "operation %q moves no slot (write, forget, reopen)", op)
			}
			for _, from := range sortedKeys(crit.Replay.Modes[m][op]) {
				if from == "" || crit.Replay.Modes[m][op][from] == "" {
					bad("replay.modes."+m+"."+op, "a transition needs a from and a to status")
				}
			}
		}
	}
	for _, f := range sortedKeys(crit.Gates) {
		if !contains(MutLogFactors, f) {
			bad("gates."+f, "unknown factor %q (expected one of: %s)", f, strings.Join(MutLogFactors, ", "))
		}
		for i, g := range crit.Gates[f] {
			if g.KeepCounts {
				bad(fmt.Sprintf("gates.%s[%d].keep_counts", f, i), "a NOT ASSESSABLE factor of this kind carries no number")
			}
			if g.Reason == "" {
				bad(fmt.Sprintf("gates.%s[%d].reason", f, i), "a gate needs its reason")
			}
		}
	}
	for _, f := range sortedKeys(crit.Declarations) {
		d := crit.Declarations[f]
		if !contains(MutLogDeclaredFacts, f) {
			bad("declarations."+f, "unknown fact %q (a declaration can set: %s)", f, strings.Join(MutLogDeclaredFacts, ", "))
		}
		if d.Member == "" || d.Value == "" {
			bad("declarations."+f, "a declaration needs its member and its value")
		}
	}
	for i, g := range crit.DoesNotApply {
		if g.KeepCounts {
			bad(fmt.Sprintf("does_not_apply[%d].keep_counts", i), "a NOT ASSESSABLE factor of this kind carries no number")
		}
		if g.Reason == "" {
			bad(fmt.Sprintf("does_not_apply[%d].reason", i), "a gate needs its reason")
		}
	}
	if len(crit.DoesNotApply) > 0 {
		for _, fld := range []string{"{events}", "{forgets}", "{does_not_apply}", "{check_end}"} {
			if !strings.Contains(crit.Words.VerdictDoesNotApply, fld) {
				bad("words.verdict_does_not_apply", "with does_not_apply gates the does-not-apply verdict must carry %s", fld)
			}
		}
	}
	for _, f := range sortedKeys(crit.FactGates) {
		if !contains(MutLogGatedFacts, f) {
			bad("fact_gates."+f, "unknown fact %q (the mechanics can gate: %s)", f, strings.Join(MutLogGatedFacts, ", "))
		}
		for i, g := range crit.FactGates[f] {
			if g.KeepCounts {
				bad(fmt.Sprintf("fact_gates.%s[%d].keep_counts", f, i), "a NOT ASSESSABLE fact carries no number")
			}
			if g.Reason == "" {
				bad(fmt.Sprintf("fact_gates.%s[%d].reason", f, i), "a gate needs its reason")
			}
		}
	}
	for _, fld := range mutLogVerdictFields {
		if !strings.Contains(crit.Words.Verdict, fld) {
			bad("words.verdict", "the verdict must carry %s", fld)
		}
	}
	if crit.Words.Verdict != "" && !strings.HasSuffix(crit.Words.Verdict, " — {check_end}") {
		bad("words.verdict", "the verdict must end with \" — {check_end}\"")
	}
}

func (c *compiler) compileMutLog(ms *MutLogSet) {
	crit := ms.c
	base, err := mutLogEnv()
	if err != nil {
		c.probs.add(0, 0, "", "CEL environment: %v", err)
		return
	}
	pc := programCompiler{c: c, hints: sizeHints{maxBytes: uint64(crit.Caps.BodyBytes)}, budget: crit.Caps.RuleCostEstimate, limit: crit.Caps.RuleCostRuntime}
	nodes := map[string]*yaml.Node{"forget": &crit.Decisions.Forget, "reinsert": &crit.Decisions.Reinsert,
		"reopen": &crit.Decisions.Reopen, "reassign": &crit.Decisions.Reassign}
	for _, subj := range MutLogSubjects {
		vars := []cel.EnvOption{cel.Variable("event", cel.ObjectType(logEventType))}
		if subj == "reinsert" {
			vars = append(vars, cel.Variable("forget", cel.ObjectType(logForgetType)))
		}
		env, err := base.Extend(vars...)
		if err != nil {
			c.probs.add(0, 0, "", "CEL environment: %v", err)
			return
		}
		n := nodes[subj]
		if n.Kind == 0 {
			c.probs.add(0, 0, "decisions."+subj, "decisions.%s is required", subj)
			continue
		}
		for _, ne := range c.namedExprs(n, "decisions."+subj, mutLogSlots[subj]) {
			ms.decisions[subj] = append(ms.decisions[subj], pc.compile(env, subj+"."+ne.name, ne.expr))
			if next, err := env.Extend(cel.Variable(ne.name, cel.BoolType)); err == nil {
				env = next
			}
		}
	}
	for _, f := range sortedKeys(crit.Declarations) {
		ms.declared = append(ms.declared, declaredFact(f, crit.Declarations[f]))
	}
	gEnv, _ := base.Extend(cel.Variable("log", cel.ObjectType(logFactsType)))
	for i, g := range crit.DoesNotApply {
		g.When.Path = fmt.Sprintf("does_not_apply[%d].when", i)
		ms.dna = append(ms.dna, GateProgram{Reason: g.Reason, When: pc.compile(gEnv, "does_not_apply", g.When)})
	}
	fEnv, _ := gEnv.Extend(cel.Variable("counts", cel.ObjectType(logCountsType)))
	for _, f := range MutLogGatedFacts {
		for i, g := range crit.FactGates[f] {
			g.When.Path = fmt.Sprintf("fact_gates.%s[%d].when", f, i)
			ms.facts[f] = append(ms.facts[f], GateProgram{Reason: g.Reason, When: pc.compile(fEnv, f+".gate", g.When)})
		}
	}
	for _, f := range MutLogFactors {
		for i, g := range crit.Gates[f] {
			g.When.Path = fmt.Sprintf("gates.%s[%d].when", f, i)
			ms.gates[f] = append(ms.gates[f], GateProgram{Reason: g.Reason, When: pc.compile(gEnv, f+".gate", g.When)})
		}
	}
	for _, p := range ms.Programs() {
		c.undeclaredFacts(p, crit.Declarations)
	}
}

// undeclaredFacts reports each declarable fact p reads from log that no declaration sets: such a
// fact could never hold, and a gate on it would silently never close a factor.
func (c *compiler) undeclaredFacts(p *Program, decl map[string]Declaration) {
	if p.checked == nil {
		return
	}
	for _, e := range ast.MatchDescendants(ast.NavigateAST(p.checked.NativeRep()), ast.KindMatcher(ast.SelectKind)) {
		sel := e.AsSelect()
		if sel.Operand().Kind() != ast.IdentKind || sel.Operand().AsIdent() != "log" {
			continue
		}
		if f := sel.FieldName(); contains(MutLogDeclaredFacts, f) {
			if _, ok := decl[f]; !ok {
				c.probs.add(p.Expr.Line, p.Expr.Column, p.Expr.Path, "reads log.%s, which no declaration sets (declarations.%s)", f, f)
			}
		}
	}
}

// Criteria is the criteria as written.
func (ms *MutLogSet) Criteria() *MutLogCriteria { return ms.c }

// ID is the criteria id.
func (ms *MutLogSet) ID() string { return ms.c.CriteriaID }

// Revision is the criteria revision.
func (ms *MutLogSet) Revision() string { return ms.c.CriteriaRevision }

// Digest is "sha256:<hex>" of the criteria file's bytes.
func (ms *MutLogSet) Digest() string { return ms.digest }

// Kind is KindMutationLog.
func (ms *MutLogSet) Kind() string { return KindMutationLog }

// Source is a copy of the criteria file's bytes.
func (ms *MutLogSet) Source() []byte { return append([]byte(nil), ms.source...) }

// Name is the file name the set was loaded from.
func (ms *MutLogSet) Name() string { return ms.name }

// BodyCap is the request body cap in bytes.
func (ms *MutLogSet) BodyCap() int { return ms.c.Caps.BodyBytes }

// FreeTier is the free allowance per caller.
func (ms *MutLogSet) FreeTier() (perDay int, minInterval time.Duration) {
	return ms.c.FreeTier.PerDay, time.Duration(ms.c.FreeTier.MinIntervalMS) * time.Millisecond
}

// PriceUnits is the price of one audit in USDC base units (0: unpriced, served free).
func (ms *MutLogSet) PriceUnits() int64 { return ms.c.Price.USDCUnitsPerCall }

// PriceLabel is the price as printed.
func (ms *MutLogSet) PriceLabel() string { return ms.c.Price.Label }

// Decisions are the compiled predicates of one subject, in order (DecisionSlots).
func (ms *MutLogSet) Decisions(subject string) []*Program { return ms.decisions[subject] }

// Gates are the gates of one factor in order.
func (ms *MutLogSet) Gates(factor string) []GateProgram { return ms.gates[factor] }

// Programs lists every compiled program of the set.
func (ms *MutLogSet) Programs() []*Program {
	var out []*Program
	for _, s := range MutLogSubjects {
		out = append(out, ms.decisions[s]...)
	}
	for _, g := range ms.dna {
		out = append(out, g.When)
	}
	for _, f := range MutLogFactors {
		for _, g := range ms.gates[f] {
			out = append(out, g.When)
		}
	}
	for _, f := range MutLogGatedFacts {
		for _, g := range ms.facts[f] {
			out = append(out, g.When)
		}
	}
	return out
}

// FactGates are the gates of one gated fact (MutLogGatedFacts) in order.
func (ms *MutLogSet) FactGates(fact string) []GateProgram { return ms.facts[fact] }

// Declared are the compiled declarations, by fact name.
func (ms *MutLogSet) Declared() []DeclaredFact { return ms.declared }

// DoesNotApplyGates are the does_not_apply gates in order.
func (ms *MutLogSet) DoesNotApplyGates() []GateProgram { return ms.dna }

// Document is the published criteria document: every member of the file as JSON, the decisions
// with their expressions in order, and the criteria digest.
func (ms *MutLogSet) Document() (map[string]any, error) {
	b, err := json.Marshal(ms.c)
	if err != nil {
		return nil, fmt.Errorf("criteria document: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("criteria document: %w", err)
	}
	type named struct {
		Name string `json:"name"`
		When string `json:"when"`
	}
	dec := map[string]any{}
	for _, s := range MutLogSubjects {
		var list []named
		for i, p := range ms.decisions[s] {
			list = append(list, named{mutLogSlots[s][i], p.Expr.Text})
		}
		dec[s] = list
	}
	doc["decisions"] = dec
	doc["criteria_digest"] = ms.digest
	return doc, nil
}

// EventActivation is the input of one decision subject's predicates.
type EventActivation struct {
	Event  *LogEvent
	Forget *LogForget
	// Obs, when set, sees every evaluation (coverage).
	Obs   Observer
	names []string
	vals  []bool
}

// ResolveName implements interpreter.Activation.
func (a *EventActivation) ResolveName(name string) (any, bool) {
	switch name {
	case "event":
		return a.Event, true
	case "forget":
		return a.Forget, true
	}
	for i, n := range a.names {
		if n == name && i < len(a.vals) {
			return a.vals[i], true
		}
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *EventActivation) Parent() interpreter.Activation { return nil }

func (a *EventActivation) observer() Observer { return a.Obs }

// Decide evaluates the predicates of one subject in order and returns their values, indexed like
// DecisionSlots(subject). Any run-time failure is a *RuleError.
func (ms *MutLogSet) Decide(subject string, a *EventActivation) ([]bool, error) {
	a.names, a.vals = mutLogSlots[subject], a.vals[:0]
	for _, p := range ms.decisions[subject] {
		v, err := p.Bool(a)
		if err != nil {
			return nil, err
		}
		a.vals = append(a.vals, v)
	}
	return append([]bool(nil), a.vals...), nil
}

// LogActivation is the input of the assessability gates; Counts is set for the fact gates only.
type LogActivation struct {
	Log    *LogFacts
	Counts *LogCounts
	Obs    Observer
}

// ResolveName implements interpreter.Activation.
func (a *LogActivation) ResolveName(name string) (any, bool) {
	switch name {
	case "log":
		return a.Log, true
	case "counts":
		if a.Counts != nil {
			return a.Counts, true
		}
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *LogActivation) Parent() interpreter.Activation { return nil }

func (a *LogActivation) observer() Observer { return a.Obs }

// Gate returns the first gate of factor that holds (nil: ASSESSABLE). With an observer every gate
// is evaluated, so coverage sees each one both ways.
func (ms *MutLogSet) Gate(factor string, a *LogActivation) (*GateProgram, error) {
	return firstGate(ms.gates[factor], a)
}

// DoesNotApply returns the first does_not_apply gate that holds (nil: the rules apply).
func (ms *MutLogSet) DoesNotApply(a *LogActivation) (*GateProgram, error) {
	return firstGate(ms.dna, a)
}

// FactGate returns the first gate of a gated fact that holds (nil: the fact is printed); a.Counts
// must be set.
func (ms *MutLogSet) FactGate(fact string, a *LogActivation) (*GateProgram, error) {
	return firstGate(ms.facts[fact], a)
}

func firstGate(gates []GateProgram, a *LogActivation) (*GateProgram, error) {
	var first *GateProgram
	for i := range gates {
		g := &gates[i]
		v, err := g.When.Bool(a)
		if err != nil {
			return nil, err
		}
		if v && first == nil {
			first = g
			if a.Obs == nil {
				break
			}
		}
	}
	return first, nil
}
