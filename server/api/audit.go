package api

import (
	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/metrics"
)

// audit is POST /audit (and a priced further criteria's <prefix>/audit): one paid or house audit,
// from the route to the signed answer. Each stage lives in the file named after it (admit.go,
// body.go, slot.go, prepare.go, charge.go, evaluate.go, commit.go, answer.go) and is observed as
// the audit step it is timed as; a stage that answers the call early (a budget, a refusal, a
// 402) ends it there. A malformed export is refused free, before any payment or house check.
func (s *Server) audit(c echo.Context) error {
	r := s.newRequest(c)
	defer r.finish()
	return done(r.run(
		r.admitAudit,
		r.timed(metrics.AuditStepRead, r.readBody),
		r.timed(metrics.AuditStepSlotWait, r.takeSlot),
		r.timed(metrics.AuditStepPrepare, r.prepare),
		r.chargeAudit, // a payment's verification is not a step of its own
		r.timed(metrics.AuditStepAudit, r.evaluateAudit),
		r.timedAs(r.commitStep, r.commit),
		r.timed(metrics.AuditStepSignWait, r.awaitSignature),
		r.timed(metrics.AuditStepWrite, r.answerReport),
		r.markDelivered,
	))
}
