package rules

import (
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// programCompiler turns one expression into a Program, reporting problems at their place in the
// criteria file.
type programCompiler struct {
	c      *compiler
	hints  sizeHints
	budget uint64 // static estimate budget
	limit  uint64 // runtime cost limit
}

func (pc programCompiler) compile(env *cel.Env, id string, e Expr) *Program {
	p := &Program{ID: id, Expr: e, env: env, loc: newExprLocator(e, pc.c.lines)}
	if strings.TrimSpace(e.Text) == "" {
		pc.c.probs.add(e.Line, e.Column, e.Path, "empty expression")
		return p
	}
	checked, iss := env.Compile(e.Text)
	if iss.Err() != nil {
		for _, ce := range iss.Errors() {
			line, col := e.Line, e.Column
			if ce.Location.Line() > 0 {
				line, col = p.loc.at(runeOffset(e.Text, ce.Location.Line(), ce.Location.Column()))
			}
			pc.c.probs.add(line, col, e.Path, "%s", ce.Message)
		}
		return p
	}
	if !checked.OutputType().IsExactType(types.BoolType) {
		pc.c.probs.add(e.Line, e.Column, e.Path, "expression must be bool, found %s", checked.OutputType())
		return p
	}
	est, err := env.EstimateCost(checked, pc.hints)
	switch {
	case err != nil:
		pc.c.probs.add(e.Line, e.Column, e.Path, "cost estimate failed: %v", err)
		return p
	case unbounded(est):
		pc.c.probs.add(e.Line, e.Column, e.Path, "estimated cost is unbounded")
		return p
	case est.Max > pc.budget:
		pc.c.probs.add(e.Line, e.Column, e.Path, "estimated cost %d exceeds the budget %d (caps.rule_cost_estimate)", est.Max, pc.budget)
		return p
	}
	p.Cost = [2]uint64{est.Min, est.Max}
	p.checked = checked
	// Fold constants: what an author writes for clarity costs nothing per record.
	folder, err := cel.NewConstantFoldingOptimizer()
	if err == nil {
		if opt, err := cel.NewStaticOptimizer(folder); err == nil {
			if folded, iss := opt.Optimize(env, checked); iss.Err() == nil {
				checked = folded
			}
		}
	}
	if checked.NativeRep().Expr().Kind() == ast.LiteralKind {
		if b, ok := checked.NativeRep().Expr().AsLiteral().(types.Bool); ok && bool(b) {
			p.constTrue = true
		}
	}
	// The runtime limit is enforced where the static bound does not already prove it: the
	// estimate (cost model pinned by costModelVersion) is an upper bound, so tracking the cost of
	// a program whose bound is under the limit would only spend time (the warden pattern).
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if est.Max > pc.limit {
		opts = append(opts, cel.CostLimit(pc.limit))
		p.Tracked = true
	}
	prg, err := env.Program(checked, opts...)
	if err != nil {
		pc.c.probs.add(e.Line, e.Column, e.Path, "program: %v", err)
		return p
	}
	p.ast, p.prg = checked, prg
	return p
}
