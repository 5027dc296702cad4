package corpus

import (
	"sync"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// Coverage counts, for every program of a criteria revision, how many evaluations were true and
// false, and whether each boolean sub-expression was seen both ways. It is a rules.Observer.
type Coverage struct {
	mu    sync.Mutex
	ps    programLister
	rules map[*rules.Program]*RuleCoverage
}

// programLister is a compiled criteria revision of any kind.
type programLister interface{ Programs() []*rules.Program }

// RuleCoverage is one program's coverage.
type RuleCoverage struct {
	Rule   string `json:"rule"`
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	// Constant is true for a program that folded to a literal (it cannot be seen both ways).
	Constant bool `json:"constant,omitempty"`
	True     int  `json:"true"`
	False    int  `json:"false"`
	// Branches lists the boolean sub-expressions and which values were seen.
	Branches []BranchCoverage `json:"branches"`
}

// BranchCoverage is one boolean sub-expression's coverage.
type BranchCoverage struct {
	Text      string `json:"text"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	SeenTrue  bool   `json:"seen_true"`
	SeenFalse bool   `json:"seen_false"`
	node      int64
}

// NewCoverage prepares coverage for every program of ps.
func NewCoverage(ps *rules.ProgramSet) *Coverage { return newCoverage(ps) }

func newCoverage(ps programLister) *Coverage {
	c := &Coverage{ps: ps, rules: map[*rules.Program]*RuleCoverage{}}
	for _, p := range ps.Programs() {
		rc := &RuleCoverage{Rule: p.ID, Path: p.Expr.Path, Line: p.Expr.Line, Column: p.Expr.Column, Constant: p.Constant()}
		for _, n := range p.BoolNodes() {
			rc.Branches = append(rc.Branches, BranchCoverage{Text: n.Text, Line: n.Line, Column: n.Column, node: n.Node})
		}
		c.rules[p] = rc
	}
	return c
}

// Observe implements rules.Observer.
func (c *Coverage) Observe(p *rules.Program, value bool, subs []rules.SubValue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rc := c.rules[p]
	if rc == nil {
		return
	}
	if value {
		rc.True++
	} else {
		rc.False++
	}
	for _, s := range subs {
		for i := range rc.Branches {
			if rc.Branches[i].node == s.Node {
				if s.Value {
					rc.Branches[i].SeenTrue = true
				} else {
					rc.Branches[i].SeenFalse = true
				}
			}
		}
	}
}

// Report lists every program in criteria order.
func (c *Coverage) Report() []RuleCoverage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []RuleCoverage
	for _, p := range c.ps.Programs() {
		out = append(out, *c.rules[p])
	}
	return out
}

// Gaps lists the programs that were never true or never false (constants excepted) and the
// branches not seen both ways.
func (c *Coverage) Gaps() (rulesOneWay []RuleCoverage, branchesOneWay int) {
	for _, rc := range c.Report() {
		if !rc.Constant && (rc.True == 0 || rc.False == 0) {
			rulesOneWay = append(rulesOneWay, rc)
		}
		for _, b := range rc.Branches {
			if !b.SeenTrue || !b.SeenFalse {
				branchesOneWay++
			}
		}
	}
	return rulesOneWay, branchesOneWay
}
