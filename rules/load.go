package rules

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"go.yaml.in/yaml/v3"

	scopehygiene "github.com/scopehygiene/scope-hygiene"
)

// SchemaID is the criteria-file schema this package reads.
const SchemaID = "scope-hygiene/criteria@1"

// Default compiles the criteria embedded in the binary (criteria.yaml at the repository root).
func Default() (*ProgramSet, error) {
	return Load("criteria.yaml", scopehygiene.CriteriaYAML)
}

// LoadFile reads and compiles a criteria file.
func LoadFile(path string) (*ProgramSet, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read criteria: %w", err)
	}
	return Load(filepath.Base(path), src)
}

// Load strictly decodes, validates and compiles criteria source. name is used in error
// positions. On failure the error is a ProblemList (errors.Is(err, ErrCompile)) holding every
// problem found, sorted by position.
func Load(name string, src []byte) (*ProgramSet, error) {
	c := &compiler{src: src, lines: strings.Split(string(src), "\n"), probs: newProblems(name, src)}
	ps := c.compile()
	if err := c.probs.err(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(src)
	ps.digest = "sha256:" + hex.EncodeToString(sum[:])
	ps.source = append([]byte(nil), src...)
	ps.name = name
	return ps, nil
}

type compiler struct {
	src   []byte
	lines []string
	probs *problems
	c     *Criteria
}

var yamlLineErr = regexp.MustCompile(`^line (\d+): (.*)$`)

func (c *compiler) compile() *ProgramSet {
	var crit Criteria
	dec := yaml.NewDecoder(bytes.NewReader(c.src))
	dec.KnownFields(true)
	if err := dec.Decode(&crit); err != nil {
		c.yamlError(err)
		return nil
	}
	c.c = &crit
	c.validate()
	c.validateKillLine()
	if len(c.probs.list) > 0 {
		return nil
	}
	ps := &ProgramSet{c: &crit}
	c.compilePrograms(ps)
	if len(c.probs.list) == 0 {
		c.fuse(ps)
	}
	return ps
}

// yamlError turns a yaml.v3 error into positioned problems.
func (c *compiler) yamlError(err error) {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	typeErr := errors.As(err, &te)
	if typeErr {
		msgs = te.Errors
	}
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		if g := yamlLineErr.FindStringSubmatch(m); g != nil {
			line, _ := strconv.Atoi(g[1])
			if !typeErr {
				line = faultLine(c.src, line) // a syntax error: the line that is wrong
			}
			if path, text, ok := unknownKey(c.src, line, g[2]); ok {
				c.probs.add(line, c.firstCol(line), path, "%s", text)
				continue
			}
			c.probs.add(line, c.firstCol(line), "", "%s", g[2])
			continue
		}
		c.probs.add(0, 0, "", "%s", m)
	}
}

func (c *compiler) firstCol(line int) int {
	if line < 1 || line > len(c.lines) {
		return 0
	}
	l := c.lines[line-1]
	return len(l) - len(strings.TrimLeft(l, " ")) + 1
}

// compilePrograms builds every CEL program. Problems are collected, never returned early, so an
// author sees all of them in one run.
func (c *compiler) compilePrograms(ps *ProgramSet) {
	crit := c.c
	base, err := baseEnv()
	if err != nil {
		c.probs.add(0, 0, "", "CEL environment: %v", err)
		return
	}
	hints := sizeHints{maxBytes: uint64(crit.Caps.BodyBytes)}
	pc := programCompiler{c: c, hints: hints, budget: crit.Caps.RuleCostEstimate, limit: crit.Caps.RuleCostRuntime}

	// Per-record rules: record, then `live`, then each predicate may use those named before it.
	recEnv, err := base.Extend(cel.Variable("record", cel.ObjectType(recordType)))
	if err != nil {
		c.probs.add(0, 0, "", "CEL environment: %v", err)
		return
	}
	for i, l := range crit.Record.Liveness {
		l.When.Path = fmt.Sprintf("record.liveness[%d].when", i)
		ps.liveness = append(ps.liveness, pc.compile(recEnv, l.ID, l.When))
	}
	recEnv, _ = recEnv.Extend(cel.Variable("live", cel.BoolType))
	ps.slotIndex = map[string]int{}
	for _, phase := range []struct {
		node  *yaml.Node
		path  string
		slots []string
	}{
		{&crit.Record.Predicates, "record.predicates", recordSlots},
		{&crit.Record.Marks, "record.marks", markSlots},
	} {
		for _, ne := range c.namedExprs(phase.node, phase.path, phase.slots) {
			p := pc.compile(recEnv, ne.name, ne.expr)
			ps.slotIndex[ne.name] = len(ps.recordPreds)
			ps.slotOf[slotByName(ne.name)] = len(ps.recordPreds)
			ps.recordPreds = append(ps.recordPreds, p)
			if phase.path == "record.predicates" {
				ps.phase1 = len(ps.recordPreds)
			}
			if next, err := recEnv.Extend(cel.Variable(ne.name, cel.BoolType)); err == nil {
				recEnv = next
			}
		}
	}
	for i, r := range crit.Conflicts {
		r.Applies.Path = fmt.Sprintf("conflicts[%d].applies", i)
		r.Conflict.Path = fmt.Sprintf("conflicts[%d].conflict", i)
		ps.conflicts = append(ps.conflicts, ConflictProgram{
			ID:       r.ID,
			Applies:  pc.compile(recEnv, r.ID+".applies", r.Applies),
			Conflict: pc.compile(recEnv, r.ID+".conflict", r.Conflict),
		})
	}

	// Cluster rules.
	clEnv, _ := base.Extend(cel.Variable("cluster", cel.ObjectType(clusterType)))
	cr := &crit.Clusters
	cr.Forms.Path, cr.TemplateLineage.Path, cr.B5Runs.Path = "clusters.forms", "clusters.template_lineage", "clusters.b5_runs"
	ps.clusterForms = pc.compile(clEnv, "forms", cr.Forms)
	ps.templateLineage = pc.compile(clEnv, "template_lineage", cr.TemplateLineage)
	ps.b5Runs = pc.compile(clEnv, "b5_runs", cr.B5Runs)
	precEnv, _ := clEnv.Extend(cel.Variable("b5_runs", cel.BoolType))
	for i, r := range cr.Precedence {
		r.When.Path = fmt.Sprintf("clusters.precedence[%d].when", i)
		p := pc.compile(precEnv, r.ID, r.When)
		ps.precedence = append(ps.precedence, PrecedenceProgram{
			ID: r.ID, Name: r.Name, Refer: r.ReferToConflicts, Class: r.Class, Reason: r.Reason, Statement: cr.Classes[r.Class].Statement, When: p,
		})
	}
	if n := len(ps.precedence); n > 0 && ps.precedence[n-1].When != nil && !ps.precedence[n-1].When.constTrue {
		r := cr.Precedence[n-1]
		c.probs.add(r.When.Line, r.When.Column, r.When.Path, "the last precedence rule must hold unconditionally (write \"true\")")
	}

	// Assessability gates.
	gEnv, _ := base.Extend(cel.Variable("submission", cel.ObjectType(submissionType)))
	for _, f := range Factors {
		for i, g := range crit.Gates[f] {
			g.When.Path = fmt.Sprintf("gates.%s[%d].when", f, i)
			ps.gates[factorIndex(f)] = append(ps.gates[factorIndex(f)], GateProgram{
				Reason: g.Reason, KeepCounts: g.KeepCounts, When: pc.compile(gEnv, f+".gate", g.When),
			})
		}
	}
}

type namedExpr struct {
	name string
	expr Expr
}

// namedExprs reads an ordered mapping of name: expression and checks it names exactly the slots
// the evaluator fills.
func (c *compiler) namedExprs(n *yaml.Node, path string, slots []string) []namedExpr {
	if n.Kind != yaml.MappingNode {
		c.probs.add(n.Line, n.Column, path, "must be a mapping of predicate name to expression")
		return nil
	}
	var out []namedExpr
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(slots, k.Value) {
			c.probs.add(k.Line, k.Column, path, "unknown predicate %q (expected one of: %s)", k.Value, strings.Join(slots, ", "))
			continue
		}
		if seen[k.Value] {
			c.probs.add(k.Line, k.Column, path, "predicate %q is defined twice", k.Value)
			continue
		}
		seen[k.Value] = true
		var e Expr
		if err := e.UnmarshalYAML(v); err != nil {
			c.probs.add(v.Line, v.Column, path+"."+k.Value, "an expression must be a string")
			continue
		}
		e.Path = path + "." + k.Value
		out = append(out, namedExpr{k.Value, e})
	}
	for _, s := range slots {
		if !seen[s] {
			c.probs.add(n.Line, n.Column, path, "predicate %q is missing", s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
