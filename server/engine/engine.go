// Package engine adapts the rules engine (rules + evaluator) to the API's Engine interface and
// renders the published criteria document.
package engine

import (
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
)

// Engine runs one ProgramSet.
type Engine struct {
	PS *rules.ProgramSet
}

var _ api.Engine = Engine{}

func refusal(r *evaluator.Refusal) *api.Refusal {
	if r == nil {
		return nil
	}
	return &api.Refusal{Rule: r.Rule, Status: r.HTTPStatus(), Body: r}
}

// CheckBodySize implements api.Engine.
func (e Engine) CheckBodySize(n int) *api.Refusal {
	return refusal(evaluator.CheckBodySize(e.PS, n))
}

// Precheck implements api.Engine.
func (e Engine) Precheck(body []byte, now time.Time) (any, *api.Refusal, error) {
	res, ref, err := evaluator.Precheck(e.PS, body, now)
	if err != nil || ref != nil {
		return nil, refusal(ref), err
	}
	return res, nil, nil
}

// Audit implements api.Engine. The check-end time is read from clock when the check has ended.
func (e Engine) Audit(body []byte, clock func() time.Time) (*api.AuditResult, *api.Refusal, error) {
	rep, ref, err := evaluator.Audit(e.PS, body, time.Time{})
	if err != nil || ref != nil {
		return nil, refusal(ref), err
	}
	evaluator.Stamp(e.PS, rep, clock())
	return &api.AuditResult{Report: rep, VerdictLine: rep.VerdictLine, Undeclared: rep.UndeclaredCount(),
		CriteriaRevision: rep.CriteriaRevision}, nil, nil
}

// Document is the published criteria document of ps (rules.ProgramSet.Document).
func Document(ps *rules.ProgramSet) (map[string]any, error) { return ps.Document() }
