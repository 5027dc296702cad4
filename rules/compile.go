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
	checked, maxCost, ok := pc.check(env, p)
	if !ok {
		return p
	}
	checked = foldConstants(env, checked)
	if checked.NativeRep().Expr().Kind() == ast.LiteralKind {
		if b, ok := checked.NativeRep().Expr().AsLiteral().(types.Bool); ok && bool(b) {
			p.constTrue = true
		}
	}
	// The runtime limit is enforced where the static bound does not already prove it: the
	// estimate (cost model pinned by costModelVersion) is an upper bound, so tracking the cost of
	// a program whose bound is under the limit would only spend time (the warden pattern).
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if maxCost > pc.limit {
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

// check compiles p's expression and checks that it is bool and within the cost budget, reporting
// each problem at its place. On success it sets p's cost and checked AST and returns the AST and
// the estimate's upper bound.
func (pc programCompiler) check(env *cel.Env, p *Program) (*cel.Ast, uint64, bool) {
	e := p.Expr
	if strings.TrimSpace(e.Text) == "" {
		pc.c.probs.add(e.Line, e.Column, e.Path, "empty expression")
		return nil, 0, false
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
		return nil, 0, false
	}
	if !checked.OutputType().IsExactType(types.BoolType) {
		pc.c.probs.add(e.Line, e.Column, e.Path, "expression must be bool, found %s", checked.OutputType())
		return nil, 0, false
	}
	est, err := env.EstimateCost(checked, pc.hints)
	switch {
	case err != nil:
		pc.c.probs.add(e.Line, e.Column, e.Path, "cost estimate failed: %v", err)
		return nil, 0, false
	case unbounded(est):
		pc.c.probs.add(e.Line, e.Column, e.Path, "estimated cost is unbounded")
		return nil, 0, false
	case est.Max > pc.budget:
		pc.c.probs.add(e.Line, e.Column, e.Path, "estimated cost %d exceeds the budget %d (caps.rule_cost_estimate)", est.Max, pc.budget)
		return nil, 0, false
	}
	p.Cost = [2]uint64{est.Min, est.Max}
	p.checked = checked
	return checked, est.Max, true
}

// foldConstants folds the constants of a checked AST: what an author writes for clarity costs
// nothing per record. It returns the AST as it was when folding fails.
func foldConstants(env *cel.Env, checked *cel.Ast) *cel.Ast {
	folder, err := cel.NewConstantFoldingOptimizer()
	if err == nil {
		if opt, err := cel.NewStaticOptimizer(folder); err == nil {
			if folded, iss := opt.Optimize(env, checked); iss.Err() == nil {
				return folded
			}
		}
	}
	return checked
}
