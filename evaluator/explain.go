package evaluator

import (
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// Explanation says why an export's report reads as it does: for each record its liveness and
// marker facts, for each cluster every precedence rule in order with its value and the one that
// decided, and for each factor the gate that fired. It carries record ids and scopes, never content.
type Explanation struct {
	Records  []RecordExplanation  `json:"records"`
	Clusters []ClusterExplanation `json:"clusters"`
	Gates    []GateExplanation    `json:"gates"`
	Report   *Report              `json:"report"`
}

// RuleValue is one rule and the value it took: the rule by its id in the criteria (a predicate's
// name, a precedence id, a gate's reason), its published name where the criteria give one, and
// the text of its expression.
type RuleValue struct {
	Rule  string `json:"rule"`
	Name  string `json:"name,omitempty"`
	Text  string `json:"text,omitempty"`
	Value bool   `json:"value"`
}

// RecordExplanation is one record's facts.
type RecordExplanation struct {
	ID         string      `json:"id"`
	Scope      string      `json:"scope"`
	Live       bool        `json:"live"`
	Liveness   []RuleValue `json:"liveness"`
	Predicates []RuleValue `json:"predicates"`
	Pointer    []Step      `json:"pointer,omitempty"`
	Marks      []RuleValue `json:"marks,omitempty"`
}

// ClusterExplanation is one cluster's facts and decision.
type ClusterExplanation struct {
	Members         []string      `json:"members"`
	Facts           rules.Cluster `json:"facts"`
	TemplateLineage bool          `json:"template_lineage"`
	B5Runs          bool          `json:"b5_runs"`
	Precedence      []RuleValue   `json:"precedence"`
	DecidedBy       string        `json:"decided_by"`
}

// GateExplanation is one factor's gates in order.
type GateExplanation struct {
	Factor string      `json:"factor"`
	Gates  []RuleValue `json:"gates"`
	Status Status      `json:"status"`
}

// Explain evaluates an export as Audit does and says why. A refusal is returned as for Audit.
func Explain(ps *rules.ProgramSet, body []byte, now time.Time) (*Explanation, *Refusal, error) {
	ex := &Explanation{}
	rep, ref, err := AuditWith(ps, body, now, Options{explain: ex})
	if ref != nil || err != nil {
		return nil, ref, err
	}
	ex.Report = rep
	return ex, nil, nil
}

// explainRecord evaluates every liveness condition (no short cut) and lists the predicates.
func (st *state) explainRecord(i int) error {
	r := &st.x.records[i]
	re := RecordExplanation{ID: r.id, Scope: r.facts.ScopeString, Live: st.act.Live}
	for _, p := range st.ps.Liveness() {
		v, err := p.Bool(st.act)
		if err != nil {
			return err
		}
		re.Liveness = append(re.Liveness, RuleValue{Rule: p.ID, Text: p.Expr.Text, Value: v})
	}
	vals := st.act.Values()
	for j, p := range st.ps.RecordPredicates()[:st.ps.PredicateCount()] {
		re.Predicates = append(re.Predicates, RuleValue{Rule: p.ID, Text: p.Expr.Text, Value: vals[j]})
	}
	st.opts.explain.Records = append(st.opts.explain.Records, re)
	return nil
}

func (st *state) pointerTrace(i int) *[]Step {
	if st.opts.explain == nil {
		return nil
	}
	return &st.opts.explain.Records[i].Pointer
}

// explainCluster evaluates every precedence rule in order.
func (st *state) explainCluster(members []int, act *rules.ClusterActivation) error {
	ce := ClusterExplanation{Facts: *act.Cluster, B5Runs: act.B5}
	for _, i := range members {
		ce.Members = append(ce.Members, st.x.records[i].id)
	}
	for _, p := range st.ps.Precedence() {
		v, err := p.When.Bool(act)
		if err != nil {
			return err
		}
		ce.Precedence = append(ce.Precedence, RuleValue{Rule: p.ID, Name: p.Name, Text: p.When.Expr.Text, Value: v})
		if v && ce.DecidedBy == "" {
			ce.DecidedBy = p.ID
		}
	}
	st.opts.explain.Clusters = append(st.opts.explain.Clusters, ce)
	return nil
}

// explainTail adds the marks and the gates once the audit is complete.
func (st *state) explainTail() error {
	ex := st.opts.explain
	for i := range st.x.records {
		r := &st.x.records[i]
		if r.live {
			ex.Records[i].Marks = []RuleValue{{Rule: "covered", Text: st.predicateText("covered"), Value: r.covered},
				{Rule: "contradiction", Text: st.predicateText("contradiction"), Value: r.contradiction}}
		}
	}
	act := &rules.SubmissionActivation{Scope: st.x.scope, Submission: &st.sub}
	for _, f := range rules.Factors {
		ge := GateExplanation{Factor: f, Status: st.status(f)}
		for _, g := range st.ps.Gates(f) {
			v, err := g.When.Bool(act)
			if err != nil {
				return err
			}
			ge.Gates = append(ge.Gates, RuleValue{Rule: g.Reason, Text: g.When.Expr.Text, Value: v})
		}
		ex.Gates = append(ex.Gates, ge)
	}
	return nil
}

// predicateText is the expression of a record predicate or mark, by name.
func (st *state) predicateText(name string) string {
	for _, p := range st.ps.RecordPredicates() {
		if p.ID == name {
			return p.Expr.Text
		}
	}
	return ""
}
