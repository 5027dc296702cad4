package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// The answer stage, and every answer a stage gives on its own (a refusal, a static 500): a signed
// document is sent with its length declared; a paid audit's report is marked delivered only once
// the whole of it has been written.

// answerReport is the answer stage of a paid audit: the signed report, counted under its payer.
// Once written, the report's buffer is given back for the next one to be signed in: writing it
// kept no reference to it, and nothing after this stage reads it. The body's buffer goes back too:
// the export was released by the audit, the report was dropped by the commit, and its signing
// (the last reader of the report's strings, which may point into the body) has ended, since its
// document was received (awaitSignature).
func (r *request) answerReport() error {
	r.s.countResult(store.OpAudit, r.payer())
	err := document(r.c, r.signed)
	sign.Recycle(r.signed)
	r.signed = nil
	recycleBody(r.bodyBuf)
	r.bodyBuf = nil
	return err
}

// payer is the payer label of an audit's result: an operator's house audit, or a paid one.
func (r *request) payer() string {
	if r.house {
		return "house"
	}
	return "paid"
}

// markDelivered records a paid report delivered once it has been written whole (or holds the
// mark back for the answer it was written inside: WithDeferredDelivery).
func (r *request) markDelivered() error {
	if d, ok := r.s.cfg.Payments.(Deliverer); ok && r.pay != nil && r.c.Request().Context().Err() == nil {
		deliver(r.c.Request().Context(), d, r.pay)
	}
	return nil
}

// answerPrecheck is the answer stage of a pre-check: its result, signed.
func (r *request) answerPrecheck() error {
	res := r.checked
	r.checked = nil
	r.s.countResult("precheck", "free")
	return r.s.signed(r.c, res)
}

// answerFreeReport is the answer stage of an unpriced audit: its report, signed.
func (r *request) answerFreeReport() error {
	report := r.report.Report
	r.report = nil
	r.s.countResult(store.OpAudit, "free")
	return r.s.signed(r.c, report)
}

// countResult counts one signed result under the criteria id; the primary criteria's results are
// also counted by revision alone (results_total), as before a second criteria was served, so that
// series never mixes two rule sets. A mount's gate carries its criteria id as scope.
func (s *Server) countResult(op, payer string) {
	if s.gate.Scope == "" {
		s.cfg.Metrics.Results.WithLabelValues(s.cfg.Criteria.Revision(), op, payer).Inc()
	}
	s.cfg.Metrics.CriteriaResults.WithLabelValues(s.cfg.Criteria.ID(), s.cfg.Criteria.Revision(), op, payer).Inc()
}

func (s *Server) signed(c echo.Context, v any) error {
	doc, err := s.cfg.Signer.Sign(v)
	if err != nil {
		return s.internal(c, "signing failed")
	}
	return document(c, doc)
}

// document answers 200 with a signed document. Its length is declared, so that it is sent as it
// is (not in chunks) and a client can size its buffer once.
func document(c echo.Context, doc []byte) error {
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(doc)))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, doc)
}

// errAnswered marks a request whose response is already written.
var errAnswered = errors.New("answered")

// answered is errAnswered once an answer has been written (err is the error of writing it).
func answered(err error) error {
	if err != nil {
		return err
	}
	return errAnswered
}

// done is a route's result once its stages have ended: nil when a stage answered the call.
func done(err error) error {
	if errors.Is(err, errAnswered) {
		return nil
	}
	return err
}

// refuse answers a refusal (rule id and numbers only) and returns errAnswered.
func (s *Server) refuse(c echo.Context, r *Refusal) error {
	c.Set(keyRule, r.Rule)
	s.cfg.Metrics.Refusals.WithLabelValues(r.Rule).Inc()
	s.cfg.Metrics.CriteriaRefusals.WithLabelValues(s.cfg.Criteria.ID(), r.Rule).Inc()
	if err := c.JSON(r.Status, r.Body); err != nil {
		return err
	}
	return errAnswered
}

// internal answers a static 500; msg is a static string and goes to the log only.
func (s *Server) internal(c echo.Context, msg string) error {
	s.cfg.Logger.Error(msg, "route", route(c))
	return c.JSON(http.StatusInternalServerError, staticError(http.StatusInternalServerError))
}

// internalAnswered answers a static 500 and returns errAnswered (so a caller cannot mistake the
// answered request for a proven one).
func (s *Server) internalAnswered(c echo.Context, msg string) error {
	return answered(s.internal(c, msg))
}

func staticError(code int) map[string]string {
	return map[string]string{"kind": "error", "error": http.StatusText(code)}
}

// httpError answers errors that reach echo with static JSON: never an error's text.
func (s *Server) httpError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code := http.StatusInternalServerError
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code = he.Code
	}
	if code == http.StatusInternalServerError {
		s.cfg.Logger.Error("handler error", "route", route(c))
	}
	if c.Request().Method == http.MethodHead {
		c.NoContent(code)
		return
	}
	c.JSON(code, staticError(code))
}

func itoa(n int) string {
	return strconv.Itoa(n)
}

// Deliverer is implemented by a Payments that records delivery: the API calls Delivered only
// after the whole 200 body was written without error, to the client itself or, for a request
// made on a caller's behalf (WithDeferredDelivery), once the outer answer has been.
type Deliverer interface {
	Delivered(ctx context.Context, p *Payment)
}

// Deliveries holds back the delivery marks of paid audits answered inside another answer: the
// MCP endpoint puts a route's answer into its own, so the route's 200 written in memory is not
// the report reaching the payer. Done marks them once the outer answer has been sent; when it
// never is, they stay undelivered and the payer may resume.
type Deliveries struct {
	mu    sync.Mutex
	marks []func()
	done  bool
}

type deliveriesKey struct{}

// WithDeferredDelivery marks the requests made under ctx as answered inside another answer: a paid
// audit among them is delivered only by d.Done.
func WithDeferredDelivery(ctx context.Context, d *Deliveries) context.Context {
	return context.WithValue(ctx, deliveriesKey{}, d)
}

// deliver marks p delivered now, or holds the mark back for the outer answer.
func deliver(ctx context.Context, d Deliverer, p *Payment) {
	ctx = context.WithoutCancel(ctx)
	later, _ := ctx.Value(deliveriesKey{}).(*Deliveries)
	if later == nil {
		d.Delivered(ctx, p)
		return
	}
	later.mu.Lock()
	defer later.mu.Unlock()
	if !later.done {
		later.marks = append(later.marks, func() { d.Delivered(ctx, p) })
	}
}

// Done marks every paid audit held back delivered. It is called once, when the outer answer has
// been written whole; a mark held back after Done is dropped (that answer was not in it).
func (d *Deliveries) Done() {
	d.mu.Lock()
	marks := d.marks
	d.marks, d.done = nil, true
	d.mu.Unlock()
	for _, mark := range marks {
		mark()
	}
}
