package mutlog

import (
	"sort"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// Explanation says why a log's report reads as it does: the log facts the gates read, every
// does-not-apply gate, every factor gate and fact gate in order with its value, and every per-event
// decision with its value. It carries event seqs only, never a key, a scope value or a principal.
type Explanation struct {
	Facts        map[string]any     `json:"facts"`
	Counts       map[string]int64   `json:"counts,omitempty"`
	DoesNotApply []RuleValue        `json:"does_not_apply"`
	Gates        []GateExplanation  `json:"gates"`
	FactGates    []GateExplanation  `json:"fact_gates"`
	Events       []EventExplanation `json:"events"`
	Report       *Report            `json:"report"`
}

// RuleValue is one rule and the value it took: its name (a decision's name, a gate's reason) and
// the text of its expression.
type RuleValue struct {
	Rule  string `json:"rule"`
	Text  string `json:"text"`
	Value bool   `json:"value"`
}

// GateExplanation is one factor's (or gated fact's) gates in order and the status they gave.
type GateExplanation struct {
	Factor string      `json:"factor"`
	Gates  []RuleValue `json:"gates"`
}

// EventExplanation is one event's decisions, by subject (forget, reinsert, reopen, reassign).
type EventExplanation struct {
	Seq       int64       `json:"seq"`
	Op        string      `json:"op"`
	Subject   string      `json:"subject"`
	Decisions []RuleValue `json:"decisions"`
}

// Explain evaluates a log as Audit does and says why. A refusal is returned as for Audit.
func Explain(ms *rules.MutLogSet, body []byte, now time.Time) (*Explanation, *Refusal, error) {
	ex := &Explanation{}
	rep, ref, err := AuditWith(ms, body, now, Options{explain: ex})
	if ref != nil || err != nil {
		return nil, ref, err
	}
	ex.Report = rep
	return ex, nil, nil
}

func (st *state) explainEvent(ev *event, subject string, vals []bool) {
	ex := st.opts.explain
	if ex == nil {
		return
	}
	ee := EventExplanation{Seq: ev.seq, Op: ev.op, Subject: subject}
	progs := st.ms.Decisions(subject)
	for i, name := range rules.DecisionSlots(subject) {
		ee.Decisions = append(ee.Decisions, RuleValue{Rule: name, Text: progs[i].Expr.Text, Value: vals[i]})
	}
	ex.Events = append(ex.Events, ee)
}

// explainGates evaluates every gate (no short cut) once the audit is complete.
func (st *state) explainGates() error {
	ex := st.opts.explain
	sort.SliceStable(ex.Events, func(i, j int) bool { return ex.Events[i].Seq < ex.Events[j].Seq })
	f := &st.facts
	ex.Facts = f.Named()
	act := &rules.LogActivation{Log: f}
	values := func(gates []rules.GateProgram) ([]RuleValue, error) {
		out := []RuleValue{}
		for _, g := range gates {
			v, err := g.When.Bool(act)
			if err != nil {
				return nil, err
			}
			out = append(out, RuleValue{Rule: g.Reason, Text: g.When.Expr.Text, Value: v})
		}
		return out, nil
	}
	var err error
	if ex.DoesNotApply, err = values(st.ms.DoesNotApplyGates()); err != nil {
		return err
	}
	for _, name := range rules.MutLogFactors {
		gv, err := values(st.ms.Gates(name))
		if err != nil {
			return err
		}
		ex.Gates = append(ex.Gates, GateExplanation{Factor: name, Gates: gv})
	}
	if c := st.counts; c != nil {
		ex.Counts = map[string]int64{"reinserts": c.Reinserts, "checked": c.Checked, "no_envelope": c.NoEnvelope,
			"unattributed": c.Unattributed, "judged": c.Judged, "unjudged": c.Unjudged}
		act.Counts = c
		for _, fact := range rules.MutLogGatedFacts {
			gv, err := values(st.ms.FactGates(fact))
			if err != nil {
				return err
			}
			ex.FactGates = append(ex.FactGates, GateExplanation{Factor: fact, Gates: gv})
		}
	}
	return nil
}
