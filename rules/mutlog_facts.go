package rules

import (
	"reflect"

	"cel.dev/cel-go/cel"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
)

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
