package rules

import (
	"sort"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
)

// The fast path. Evaluating a CEL program has a fixed cost per call (activation, frame, result),
// so the request path fuses the per-record programs a record always needs into four: every
// liveness condition OR'd together, every record predicate as one list (references to earlier
// predicates expanded in place), every conflict applicability as one list, and the two marks as
// one list. The
// author's individual programs stay the reference: they serve coverage and explain, and any error
// on the fast path is re-run through them so the failure is reported at its own rule and position.

type fastPrograms struct {
	record  [numFused]fused // per-record programs, memoized per export
	cluster cel.Program     // list<bool>: forms, template_lineage, b5_runs, then each precedence rule
	gates   cel.Program     // list<bool>: every gate of every factor, in Factors order
	// stage keys the record stage (liveness, predicates, applicability) as one; stageOK is false
	// when it cannot be memoized (see stage.go).
	stage   projection
	stageOK bool
	// clusterKey keys the cluster memo by the outcome of every comparison of counts the cluster
	// programs make (clusterkey.go).
	clusterKey orderKey
}

// The fused per-record programs.
const (
	fusedLive      = iota // [any liveness condition]
	fusedPreds            // like recordPreds[:phase1]
	fusedMarks            // like recordPreds[phase1:]
	fusedApplies          // like conflicts
	fusedConflicts        // per sub-check: applies && conflict
	numFused
)

type fused struct {
	prg  cel.Program
	proj projection
}

// fuse compiles the fast path from the expressions already checked one by one. It cannot fail on
// criteria that compiled; if it does, the problem is reported like any other.
func (c *compiler) fuse(ps *ProgramSet) {
	fc := &fastCompiler{c: c}
	if fc.fuseRecord(ps) && fc.fuseClusters(ps) {
		fc.fuseGates(ps)
	}
	ps.stageProjection()
	ps.elementKeys()
}

// fastCompiler compiles the fused programs of the fast path.
type fastCompiler struct {
	c *compiler
	// lastAST is the checked AST of the program compile returned last.
	lastAST *cel.Ast
}

// fastEnv is a fast path environment: the scope variables and vars.
func fastEnv(vars ...cel.EnvOption) (*cel.Env, error) {
	opts := []cel.EnvOption{ext.NativeTypes(nativeTypeOptions()...),
		cel.Variable("family", cel.StringType), cel.Variable("form", cel.StringType), cel.Variable("variant", cel.StringType)}
	opts = append(opts, vars...)
	return cel.NewEnv(append(opts, cel.CostModelVersion(costModelVersion))...)
}

// envFailed reports an environment the fast path could not build.
func (fc *fastCompiler) envFailed(err error) bool {
	if err != nil {
		fc.c.probs.add(0, 0, "", "fast path environment: %v", err)
		return true
	}
	return false
}

// compile compiles one fused program, under the runtime cost limit when its estimate may exceed it.
func (fc *fastCompiler) compile(env *cel.Env, what, text string) cel.Program {
	c := fc.c
	ast, iss := env.Compile(text)
	if iss.Err() != nil {
		c.probs.add(0, 0, "", "fast path %s: %v", what, iss.Err())
		return nil
	}
	fc.lastAST = ast
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

// record compiles fused record program k with its projection of the activation's slots.
func (fc *fastCompiler) record(ps *ProgramSet, k int, env *cel.Env, what, text string) {
	if prg := fc.compile(env, what, text); prg != nil {
		ps.fast.record[k] = fused{prg: prg, proj: projectionOf(fc.lastAST, ps.slotIndex)}
	}
}

// fuseRecord compiles the per-record programs: liveness, predicates, marks, conflict
// applicability and conflict checks. It returns false when an environment failed.
func (fc *fastCompiler) fuseRecord(ps *ProgramSet) bool {
	base, err := fastEnv(cel.Variable("record", cel.ObjectType(recordType)), cel.Variable("live", cel.BoolType))
	if fc.envFailed(err) {
		return false
	}
	var live []string
	for _, p := range ps.liveness {
		live = append(live, "("+p.Expr.Text+")")
	}
	if len(live) == 0 {
		live = []string{"false"}
	}
	fc.record(ps, fusedLive, base, "liveness", "["+strings.Join(live, " || ")+"]")
	fc.record(ps, fusedPreds, base, "predicates", listOf(expand(ps.recordPreds[:ps.phase1])))
	markEnv := base
	for _, p := range ps.recordPreds[:ps.phase1] {
		if markEnv, err = markEnv.Extend(cel.Variable(p.ID, cel.BoolType)); fc.envFailed(err) {
			return false
		}
	}
	fc.record(ps, fusedMarks, markEnv, "marks", listOf(expand(ps.recordPreds[ps.phase1:])))
	var applies, conflicts []string
	for _, cp := range ps.conflicts {
		applies = append(applies, "("+cp.Applies.Expr.Text+")")
		conflicts = append(conflicts, "(("+cp.Applies.Expr.Text+") && ("+cp.Conflict.Expr.Text+"))")
	}
	fc.record(ps, fusedApplies, markEnv, "conflicts", "["+strings.Join(applies, ", ")+"]")
	fc.record(ps, fusedConflicts, markEnv, "conflict checks", "["+strings.Join(conflicts, ", ")+"]")
	return true
}

// fuseClusters compiles the cluster programs, the precedence after them, into one. It returns
// false when its environment failed.
func (fc *fastCompiler) fuseClusters(ps *ProgramSet) bool {
	env, err := fastEnv(cel.Variable("cluster", cel.ObjectType(clusterType)))
	if fc.envFailed(err) {
		return false
	}
	cl := []*Program{ps.clusterForms, ps.templateLineage, ps.b5Runs}
	for _, p := range ps.precedence {
		cl = append(cl, p.When)
	}
	if ps.fast.cluster = fc.compile(env, "clusters", listOf(expand(cl))); ps.fast.cluster != nil {
		ps.fast.clusterKey = orderKeyOf(fc.lastAST)
	}
	return true
}

// fuseGates compiles every gate into one program.
func (fc *fastCompiler) fuseGates(ps *ProgramSet) {
	env, err := fastEnv(cel.Variable("submission", cel.ObjectType(submissionType)))
	if fc.envFailed(err) {
		return
	}
	var gates []string
	for _, gs := range ps.gates {
		for _, g := range gs {
			gates = append(gates, "("+g.When.Expr.Text+")")
		}
	}
	ps.fast.gates = fc.compile(env, "gates", "["+strings.Join(gates, ", ")+"]")
}

// expand returns the text of each program with every reference to an earlier program (by its
// variable name) replaced by that program's own expanded text, parenthesized. The checked AST's
// reference map says which identifiers are those variables, so a field, a string literal or a
// comprehension variable of the same spelling is never touched. A flat list of expanded
// predicates evaluates without the fold frames that cel.bind would nest.
func expand(progs []*Program) []string {
	done := map[string]string{}
	out := make([]string, len(progs))
	for i, p := range progs {
		text := []rune(p.Expr.Text)
		type span struct {
			at, n int
			with  string
		}
		var spans []span
		native := p.checked.NativeRep()
		for id, ref := range native.ReferenceMap() {
			with, ok := done[ref.Name]
			if !ok || ref.Value != nil {
				continue
			}
			loc := native.SourceInfo().GetStartLocation(id)
			if loc.Line() < 1 {
				continue
			}
			at := runeOffset(p.Expr.Text, loc.Line(), loc.Column())
			if at+len([]rune(ref.Name)) > len(text) || string(text[at:at+len([]rune(ref.Name))]) != ref.Name {
				continue
			}
			spans = append(spans, span{at, len([]rune(ref.Name)), "(" + with + ")"})
		}
		sort.Slice(spans, func(a, b int) bool { return spans[a].at > spans[b].at })
		for _, s := range spans {
			text = append(text[:s.at], append([]rune(s.with), text[s.at+s.n:]...)...)
		}
		out[i] = string(text)
		done[p.ID] = out[i]
	}
	return out
}

func listOf(texts []string) string {
	parts := make([]string, len(texts))
	for i, t := range texts {
		parts[i] = "(" + t + ")"
	}
	return "[" + strings.Join(parts, ", ") + "]"
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

// fusedLookup answers fused program k for the activation's record from the export's memo into
// out. On a miss it returns the key to store the answer under (fusedStore) once the author's
// programs have given it; memo is false when the program is not memoized (an observer, or a
// program that reads the whole record). A program whose inputs are all flags is keyed by one
// word (wordKey), and its memo probed without building or hashing a byte key.
func (ps *ProgramSet) fusedLookup(k int, a *RecordActivation, out []bool) (hit bool, key memoKey, memo bool) {
	f := &ps.fast.record[k]
	if f.prg == nil || a.Obs != nil || f.proj.whole {
		return false, memoKey{}, false
	}
	if f.proj.word {
		if w, ok := f.proj.wordKey(a); ok {
			if r, ok := a.memo[k].words[w]; ok {
				copy(out, r)
				return true, memoKey{}, true
			}
			return false, memoKey{w: w, word: true}, true
		}
	}
	kb := f.proj.key(a)
	if r, ok := a.memo[k].lookup(kb); ok {
		copy(out, r)
		return true, memoKey{}, true
	}
	// The author's programs reuse the key buffer for their own keys: this one is kept aside
	// (the copy is the one the memo keeps).
	return false, memoKey{s: string(kb)}, true
}

// fusedStore remembers out as fused program k's answer for key.
func (ps *ProgramSet) fusedStore(k int, a *RecordActivation, key memoKey, out []bool) {
	a.memo[k].store(key, out)
}

// evalWhole evaluates fused program k when it cannot be memoized because it reads the whole
// record (no criteria shipped so far do); it reports false when the fast path cannot answer.
func (ps *ProgramSet) evalWhole(k int, a *RecordActivation, out []bool) bool {
	f := &ps.fast.record[k]
	if f.prg == nil || a.Obs != nil || !f.proj.whole {
		return false
	}
	return evalList(f.prg, a, out)
}
