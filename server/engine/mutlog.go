package engine

import (
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
)

// MutLog runs a criteria revision of kind mutation-log (evaluator/mutlog).
type MutLog struct {
	MS *rules.MutLogSet
}

var _ api.Engine = MutLog{}

func mutLogRefusal(r *mutlog.Refusal) *api.Refusal {
	if r == nil {
		return nil
	}
	return &api.Refusal{Rule: r.Rule, Status: r.HTTPStatus(), Body: r}
}

// CheckBodySize implements api.Engine.
func (e MutLog) CheckBodySize(n int) *api.Refusal {
	return mutLogRefusal(mutlog.CheckBodySize(e.MS, n))
}

// Precheck implements api.Engine.
func (e MutLog) Precheck(body []byte, now time.Time) (any, *api.Refusal, error) {
	res, ref, err := mutlog.Precheck(e.MS, body, now)
	if err != nil || ref != nil {
		return nil, mutLogRefusal(ref), err
	}
	return res, nil, nil
}

// Audit implements api.Engine. The check-end time is read from clock when the check has ended.
func (e MutLog) Audit(body []byte, clock func() time.Time) (*api.AuditResult, *api.Refusal, error) {
	rep, ref, err := mutlog.Audit(e.MS, body, time.Time{})
	if err != nil || ref != nil {
		return nil, mutLogRefusal(ref), err
	}
	mutlog.Stamp(e.MS, rep, clock())
	return &api.AuditResult{Report: rep, VerdictLine: rep.VerdictLine, CriteriaRevision: rep.CriteriaRevision}, nil, nil
}
