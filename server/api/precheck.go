package api

import "github.com/labstack/echo/v4"

// precheck is POST /precheck (and each further criteria's <prefix>/precheck), free and signed, in
// the published order: body cap, every published refusal (engine refusals, then caller_invalid),
// then the caller's proof when a wallet is named, then the allowance. A refused or unproven
// request consumes no allowance and writes no row. The stages are audit's (audit.go), with the
// caller's proof and the free allowance in place of the payment.
func (s *Server) precheck(c echo.Context) error {
	r := s.newRequest(c)
	defer r.finish()
	return done(r.run(
		r.readBody,
		r.takeSlot,
		r.prepare,
		r.evaluatePrecheck,
		r.identifyCaller,
		r.chargeFree,
		r.answerPrecheck,
	))
}
