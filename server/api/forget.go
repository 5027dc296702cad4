package api

import "github.com/labstack/echo/v4"

// freeAudit is /audit of an unpriced criteria (the forget envelope's <prefix>/audit): the
// published refusals, then the caller's proof when a wallet is named, then the free allowance
// (shared with this criteria's /precheck), then the signed report. No payment is asked and no
// ledger row is written: the ledger records payments. The evaluations hold an evaluation slot, as
// every evaluating route's do (past the slot wait the answer is 503 overloaded before anything is
// evaluated); the proof and the allowance are store work and hold none. Once the allowance is
// spent the audit runs whatever happens to the request meanwhile: it waits for a slot without a
// limit (holdSlot), as a paid audit does after its payment.
func (s *Server) freeAudit(c echo.Context) error {
	r := s.newRequest(c)
	defer r.finish()
	return done(r.run(
		r.admitUnpaid,
		r.readBody,
		r.takeSlot,
		r.checkBody,
		r.identifyCaller,
		r.chargeFree,
		r.holdSlot,
		r.evaluateFreeAudit,
		r.answerFreeReport,
	))
}
