package rules

import (
	"math"
	"reflect"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
)

// costModelVersion pins cel-go's cost model so that an upgrade cannot move a rule across the
// budget silently.
const costModelVersion = 1

// The CEL type names of the facts (Go package name + struct name, as ext.NativeTypes names them).
const (
	recordType     = "rules.Record"
	clusterType    = "rules.Cluster"
	submissionType = "rules.Submission"
)

// baseEnv is the environment every criteria expression starts from: the standard library only (no
// extension library whose version could drift), typed facts, parser limits and validators.
func baseEnv() (*cel.Env, error) {
	return cel.NewEnv(
		ext.NativeTypes(nativeTypeOptions()...),
		cel.Variable("family", cel.StringType),
		cel.Variable("form", cel.StringType),
		cel.Variable("variant", cel.StringType),
		cel.ParserExpressionSizeLimit(4096),
		cel.ParserRecursionLimit(64),
		cel.ASTValidators(cel.ValidateComprehensionNestingLimit(1), cel.ValidateHomogeneousAggregateLiterals()),
		cel.CostModelVersion(costModelVersion),
	)
}

// sizeHints bounds every list and string an input can carry, so that EstimateCost is finite: nothing
// in one export can be larger than the body cap.
type sizeHints struct{ maxBytes uint64 }

// EstimateSize implements cost.Estimator.
func (h sizeHints) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	if len(n.Path()) > 0 {
		return &cost.SizeEstimate{Min: 0, Max: h.maxBytes}
	}
	return nil
}

// EstimateCallCost implements cost.Estimator; the standard estimates apply.
func (h sizeHints) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

// unbounded reports whether an estimate has no finite bound.
func unbounded(e cost.Estimate) bool { return e.Max == math.MaxUint64 }

// nativeTypeOptions declares the facts as CEL object types named by their `cel` tags.
func nativeTypeOptions() []any {
	return []any{types.ParseStructTags(true),
		reflect.TypeOf(Value{}), reflect.TypeOf(Record{}), reflect.TypeOf(Cluster{}), reflect.TypeOf(Submission{})}
}
