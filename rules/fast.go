package rules

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
)

// The fast path. Evaluating a CEL program has a fixed cost per call (activation, frame, result),
// so the request path fuses the per-record programs a record always needs into four: every
// liveness condition OR'd together, every record predicate as one list (earlier predicates bound
// with cel.bind), every conflict applicability as one list, and the two marks as one list. The
// author's individual programs stay the reference: they serve coverage and explain, and any error
// on the fast path is re-run through them so the failure is reported at its own rule and position.

// bindingsVersion pins the cel.bind library used by the fused programs.
const bindingsVersion = 0

type fastPrograms struct {
	liveAny cel.Program // bool
	preds   cel.Program // list<bool>, like recordPreds[:phase1]
	marks   cel.Program // list<bool>, like recordPreds[phase1:]
	applies cel.Program // list<bool>, like conflicts
}

// fuse compiles the fast path from the expressions already checked one by one. It cannot fail on
// criteria that compiled; if it does, the problem is reported like any other.
func (c *compiler) fuse(ps *ProgramSet) {
	base, err := cel.NewEnv(
		ext.NativeTypes(nativeTypeOptions()...),
		cel.Variable("family", cel.StringType), cel.Variable("form", cel.StringType), cel.Variable("variant", cel.StringType),
		cel.Variable("record", cel.ObjectType(recordType)), cel.Variable("live", cel.BoolType),
		ext.Bindings(ext.BindingsVersion(bindingsVersion)),
		cel.CostModelVersion(costModelVersion),
	)
	if err != nil {
		c.probs.add(0, 0, "", "fast path environment: %v", err)
		return
	}
	compile := func(env *cel.Env, what, text string) cel.Program {
		ast, iss := env.Compile(text)
		if iss.Err() != nil {
			c.probs.add(0, 0, "", "fast path %s: %v", what, iss.Err())
			return nil
		}
		est, err := env.EstimateCost(ast, sizeHints{maxBytes: uint64(c.c.Caps.BodyBytes)})
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
		if err != nil || est.Max > c.c.Caps.RuleCostRuntime {
			opts = append(opts, cel.CostLimit(c.c.Caps.RuleCostRuntime))
		}
		prg, err := env.Program(ast, opts...)
		if err != nil {
			c.probs.add(0, 0, "", "fast path %s: %v", what, err)
		}
		return prg
	}
	var live []string
	for _, p := range ps.liveness {
		live = append(live, "("+p.Expr.Text+")")
	}
	if len(live) == 0 {
		live = []string{"false"}
	}
	ps.fast.liveAny = compile(base, "liveness", strings.Join(live, " || "))
	ps.fast.preds = compile(base, "predicates", bindList(ps.recordPreds[:ps.phase1]))
	markEnv := base
	for _, p := range ps.recordPreds[:ps.phase1] {
		if markEnv, err = markEnv.Extend(cel.Variable(p.ID, cel.BoolType)); err != nil {
			c.probs.add(0, 0, "", "fast path environment: %v", err)
			return
		}
	}
	ps.fast.marks = compile(markEnv, "marks", bindList(ps.recordPreds[ps.phase1:]))
	var applies []string
	for _, cp := range ps.conflicts {
		applies = append(applies, "("+cp.Applies.Expr.Text+")")
	}
	ps.fast.applies = compile(markEnv, "conflicts", "["+strings.Join(applies, ", ")+"]")
}

// bindList is `cel.bind(p1, e1, cel.bind(p2, e2, ... [p1, p2, ...]))`: each predicate is
// evaluated once and may use the ones before it, as in the criteria file.
func bindList(ps []*Program) string {
	var b strings.Builder
	names := make([]string, len(ps))
	for i, p := range ps {
		fmt.Fprintf(&b, "cel.bind(%s, (%s), ", p.ID, p.Expr.Text)
		names[i] = p.ID
	}
	b.WriteString("[" + strings.Join(names, ", ") + "]")
	b.WriteString(strings.Repeat(")", len(ps)))
	return b.String()
}

// evalList evaluates a fused list program into out.
func evalList(prg cel.Program, act interpreter.Activation, out []bool) bool {
	if prg == nil {
		return false
	}
	v, _, err := prg.Eval(act)
	if err != nil {
		return false
	}
	l, ok := v.(traits.Lister)
	if !ok {
		return false
	}
	for i := range out {
		b, ok := l.Get(types.Int(i)).(types.Bool)
		if !ok {
			return false
		}
		out[i] = bool(b)
	}
	return true
}
