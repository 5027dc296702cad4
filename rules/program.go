package rules

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"
)

// ErrRuleFailed is wrapped by every run-time failure of a rule. A failed rule is never read as
// "not matched": the caller must refuse to produce a verdict.
var ErrRuleFailed = errors.New("criteria rule failed at run time")

// RuleError says which rule failed and where it is written; it carries no input values.
type RuleError struct {
	Rule   string
	Path   string
	Line   int
	Column int
	Err    error
}

// Error names the rule and its position only.
func (e *RuleError) Error() string {
	return fmt.Sprintf("rule %s (%s, line %d col %d) failed at run time", e.Rule, e.Path, e.Line, e.Column)
}

// Unwrap lets errors.Is(err, ErrRuleFailed) hold.
func (e *RuleError) Unwrap() error { return ErrRuleFailed }

// Program is one compiled criteria expression: immutable and safe for concurrent use.
type Program struct {
	// ID is the rule's name (a liveness condition id, a predicate name, a precedence id...).
	ID string
	// Expr is the expression as written, with its position.
	Expr Expr
	// Cost is the static cost estimate.
	Cost [2]uint64
	// Tracked is true when the program's runtime cost is tracked against the runtime limit
	// (its static bound exceeds the limit).
	Tracked   bool
	ast       *cel.Ast // the folded program
	checked   *cel.Ast // as checked, before folding (its positions match the text)
	prg       cel.Program
	constTrue bool
	env       *cel.Env
	loc       exprLocator

	// num, proj, order and memoOK key the program's results within one export (elemmemo.go):
	// proj for a record program, order for a cluster program.
	num    int
	proj   projection
	order  orderKey
	memoOK bool

	traceOnce sync.Once // the tracing program is built on first use
	tracePrg  cel.Program
	traceErr  error
	nodes     []SubValue
}

// Observer sees every evaluation made through an activation that carries it: the program, its
// value and the value of each boolean sub-expression. It serves `rules test --coverage` and
// `rules explain`; the request path carries none and pays nothing for it.
type Observer interface {
	Observe(p *Program, value bool, subs []SubValue)
}

// observed is implemented by the activations of this package.
type observed interface{ observer() Observer }

// Bool evaluates a predicate. Any evaluation error, including an exceeded cost limit, is a
// *RuleError.
func (p *Program) Bool(act interpreter.Activation) (bool, error) {
	if o, ok := act.(observed); ok {
		if obs := o.observer(); obs != nil {
			v, subs, err := p.Trace(act)
			if err == nil {
				obs.Observe(p, v, subs)
			}
			return v, err
		}
	}
	v, _, err := p.prg.Eval(act)
	if err != nil {
		return false, p.fail(err)
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, p.fail(errors.New("not a bool"))
	}
	return bool(b), nil
}

func (p *Program) fail(err error) error {
	line, col := p.Expr.Line, p.Expr.Column
	// An error value knows the node that raised it; place the error there when possible.
	var te *types.Err
	if errors.As(err, &te) && p.ast != nil {
		if l := p.ast.NativeRep().SourceInfo().GetStartLocation(te.NodeID()); l.Line() > 0 {
			line, col = p.loc.at(runeOffset(p.Expr.Text, l.Line(), l.Column()))
		}
	}
	return &RuleError{Rule: p.ID, Path: p.Expr.Path, Line: line, Column: col, Err: err}
}

// Trace evaluates the predicate with state tracking and returns its value together with the value
// of every boolean sub-expression that was evaluated. It is slow and meant for `rules explain` and
// `rules test --coverage`, never the request path.
func (p *Program) Trace(act interpreter.Activation) (bool, []SubValue, error) {
	p.traceOnce.Do(p.buildTrace)
	if p.traceErr != nil {
		return false, nil, p.fail(p.traceErr)
	}
	v, det, err := p.tracePrg.ContextEval(context.Background(), act)
	if err != nil {
		return false, nil, p.fail(err)
	}
	st := det.State()
	var out []SubValue
	for _, n := range p.nodes {
		if val, ok := st.Value(n.Node); ok {
			if b, isBool := val.(types.Bool); isBool {
				n.Value = bool(b)
				out = append(out, n)
			}
		}
	}
	b, _ := v.(types.Bool)
	return bool(b), out, nil
}

func (p *Program) buildTrace() {
	p.tracePrg, p.traceErr = p.env.Program(p.ast, cel.EvalOptions(cel.OptTrackState, cel.OptExhaustiveEval))
	p.nodes = p.BoolNodes()
}

// SubValue is one boolean sub-expression of a rule and the value it took.
type SubValue struct {
	// Node identifies the sub-expression within the program.
	Node int64
	// Text is the sub-expression's source.
	Text string
	// Line and Column place it in the criteria file.
	Line, Column int
	Value        bool
}

// BoolNodes lists the program's boolean sub-expressions that are not literals (the branches
// coverage must see both ways).
func (p *Program) BoolNodes() []SubValue {
	var out []SubValue
	checked := p.ast.NativeRep()
	for _, e := range celast.MatchDescendants(celast.NavigateAST(checked), celast.AllMatcher()) {
		id := e.ID()
		if !e.Type().IsExactType(types.BoolType) || e.Kind() == celast.LiteralKind {
			continue
		}
		text := nodeText(p, id)
		// Macro expansions (exists, all...) hold accumulator nodes whose tracked value is only
		// the last iteration's: they are not author text and cannot be judged for coverage.
		if strings.Contains(text, "@") {
			continue
		}
		l := checked.SourceInfo().GetStartLocation(id)
		line, col := p.Expr.Line, p.Expr.Column
		if l.Line() > 0 {
			line, col = p.loc.at(runeOffset(p.Expr.Text, l.Line(), l.Column()))
		}
		out = append(out, SubValue{Node: id, Text: text, Line: line, Column: col})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

func nodeText(p *Program, id int64) string {
	var e celast.Expr
	for _, n := range celast.MatchDescendants(celast.NavigateAST(p.ast.NativeRep()), celast.AllMatcher()) {
		if n.ID() == id {
			e = n
			break
		}
	}
	if e == nil {
		return ""
	}
	s, err := cel.ExprToString(e, p.ast.NativeRep().SourceInfo())
	if err != nil {
		return ""
	}
	return s
}

// Constant reports whether the program folded to the literal true.
func (p *Program) Constant() bool { return p.constTrue }
