package api

import (
	"time"

	"github.com/labstack/echo/v4"
)

// request is one call's state as it passes through the stages of its route (audit.go,
// precheck.go, forget.go). Each stage is a method that reads what the stages before it left here
// and adds its own; one that answers the call (a refusal, a 402, a 503) returns errAnswered, or
// the error of writing that answer, and the route ends there.
type request struct {
	s *Server
	c echo.Context

	body []byte // the export as it arrived (body.go)
	// bodyBuf is the body's buffer when it came from idleBodies: the audit gives it back once its
	// answer is written (answerReport), when neither the export nor its report is read any more.
	bodyBuf []byte
	slot    *slot     // the evaluation slot while one is held (slot.go)
	now     time.Time // the request's time, read once its slot is held (prepare.go)
	prep    Prepared  // the export, decoded or checked; nil once audited or released (prepare.go)

	// caller is the export's caller member, callerErr why it could not be read (caller.go).
	caller    string
	callerErr error

	house   bool     // an operator's house audit (charge.go)
	pay     *Payment // the verified payment of a paid audit (charge.go)
	settled bool     // Settle owns the payment (commit.go)

	checked any          // the pre-check's result (evaluate.go)
	report  *AuditResult // the audit's result, until the commit takes it (evaluate.go)
	signing chan []byte  // the signed report, once signed (commit.go)
	signed  []byte       // the signed report (commit.go)
}

func (s *Server) newRequest(c echo.Context) *request { return &request{s: s, c: c} }

// run runs the stages in order until one answers the call or fails.
func (r *request) run(stages ...func() error) error {
	for _, stage := range stages {
		if err := stage(); err != nil {
			return err
		}
	}
	return nil
}

// finish gives back what the request still holds when it ends, however it ends (a panic too): a
// verified payment whose audit produced nothing is abandoned, an export not audited is released,
// and the evaluation slot is freed.
func (r *request) finish() {
	if r.pay != nil && !r.settled {
		r.s.cfg.Payments.Abandon(r.c, r.pay)
	}
	if r.prep != nil {
		release(r.prep)
	}
	r.slot.release()
}
