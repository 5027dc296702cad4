package rules

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"

	"fmt"

	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"

	"go.yaml.in/yaml/v3"
)

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
	ms.uses = map[string]*eventUse{}
	for _, subj := range MutLogSubjects {
		u := eventUseOf(subj, ms.decisions[subj])
		ms.uses[subj] = &u
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
