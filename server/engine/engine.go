// Package engine adapts the rules engine (rules + evaluator) to the API's Engine interface and
// renders the published criteria document.
package engine

import (
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/freetier"
)

// Engine runs one ProgramSet.
type Engine struct {
	PS *rules.ProgramSet
}

var (
	_ api.Engine   = Engine{}
	_ api.Preparer = Engine{}
)

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
	return auditResult(rep), nil, nil
}

// Prepare implements api.Preparer: the export is decoded and validated once, and the pre-check,
// the audit and the caller member are answered from that decode. The body is handed over, not
// copied (api.Preparer: the server reads each request's body into a buffer of its own and never
// writes to it again).
func (e Engine) Prepare(body []byte) (api.Prepared, *api.Refusal, error) {
	p, ref, err := evaluator.PrepareWith(e.PS, body, evaluator.Options{OwnedBody: true})
	if err != nil || ref != nil {
		return nil, refusal(ref), err
	}
	return prepared{ps: e.PS, p: p}, nil, nil
}

type prepared struct {
	ps *rules.ProgramSet
	p  *evaluator.Prepared
}

func (p prepared) Precheck(now time.Time) (any, error) { return p.p.Precheck(now), nil }

// Release gives the export's buffers back when it will not be audited.
func (p prepared) Release() { p.p.Release() }

func (p prepared) Audit(clock func() time.Time) (*api.AuditResult, error) {
	rep, err := p.p.Audit(time.Time{})
	if err != nil {
		return nil, err
	}
	evaluator.Stamp(p.ps, rep, clock())
	return auditResult(rep), nil
}

// Caller reads the top-level caller member as freetier.CallerFromBody does (null means absent).
func (p prepared) Caller() (string, error) {
	s, present, isString := p.p.Caller()
	if !present {
		return "", nil
	}
	if !isString {
		return "", freetier.ErrInvalidCaller
	}
	if _, err := freetier.ParseCaller(s); err != nil {
		return "", err
	}
	return s, nil
}

func auditResult(rep *evaluator.Report) *api.AuditResult {
	return &api.AuditResult{Report: rep, VerdictLine: rep.VerdictLine, Undeclared: rep.UndeclaredCount(),
		CriteriaRevision: rep.CriteriaRevision}
}

// Document is the published criteria document of ps (rules.ProgramSet.Document).
func Document(ps *rules.ProgramSet) (map[string]any, error) { return ps.Document() }
