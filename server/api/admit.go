package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/limit"
)

// Admission, the first stage of every evaluating route: what a request may cost the service
// before its body is read or its export decoded (the unpaid-audit and house-token budgets, the
// in-flight caps taken once the body is in), and the request's own end (outOfTime).

// admitAudit is the admission stage of a paid /audit: the unpaid-audit budget, then the budget
// of failed house-token attempts, both before the body is read.
func (r *request) admitAudit() error {
	if !r.s.unpaidBudget(r.c) || !r.s.houseBudget(r.c) {
		return errAnswered
	}
	return nil
}

// admitUnpaid is the admission stage of an unpriced audit: the unpaid-audit budget.
func (r *request) admitUnpaid() error {
	if !r.s.unpaidBudget(r.c) {
		return errAnswered
	}
	return nil
}

// Defaults of the service's limits (the serve flags set them).
const (
	// DefaultMaxInflightAudits is the in-flight audit cap when Config leaves it 0.
	DefaultMaxInflightAudits = 64
	// DefaultRetryAfter is the Retry-After of a 503 when Config leaves it 0.
	DefaultRetryAfter = 5 * time.Second
	// DefaultMaxInflightPrechecks is the in-flight pre-check cap when Config leaves it 0.
	DefaultMaxInflightPrechecks = 32
	// DefaultBodyBudgetBytes is the budget of request body bytes held at once when Config leaves
	// it 0: 256 bodies at the 256 KiB cap.
	DefaultBodyBudgetBytes = 64 << 20
	// DefaultBodyTimeout is the time a request body has to arrive when Config leaves it 0 (a
	// 256 KiB body needs at least 52 KB/s).
	DefaultBodyTimeout = 5 * time.Second
	// DefaultHouseTokenFailuresPerMinute and DefaultHouseTokenFailureBurst are the per-address
	// budget of failed house-token attempts when Config leaves them 0.
	DefaultHouseTokenFailuresPerMinute = 6
	DefaultHouseTokenFailureBurst      = 6
)

// Static bodies of the limits added here (schema/service-limit.schema.json).
const (
	errHouseTokenBudget = "house token attempts exhausted"
	errBodySlowMsg      = "request body too slow"
)

// setLimitDefaults fills the limits Config leaves 0; a negative value turns a limit off.
func (cfg *Config) setLimitDefaults() {
	if cfg.MaxInflightPrechecks <= 0 {
		cfg.MaxInflightPrechecks = DefaultMaxInflightPrechecks
	}
	switch {
	case cfg.BodyBudgetBytes == 0:
		cfg.BodyBudgetBytes = DefaultBodyBudgetBytes
	case cfg.BodyBudgetBytes < 0:
		cfg.BodyBudgetBytes = 0
	}
	switch {
	case cfg.BodyTimeout == 0:
		cfg.BodyTimeout = DefaultBodyTimeout
	case cfg.BodyTimeout < 0:
		cfg.BodyTimeout = 0
	}
	if cfg.HouseTokenFailuresPerMinute == 0 {
		cfg.HouseTokenFailuresPerMinute = DefaultHouseTokenFailuresPerMinute
	}
	if cfg.HouseTokenFailureBurst <= 0 {
		cfg.HouseTokenFailureBurst = DefaultHouseTokenFailureBurst
	}
}

// shedAudit caps in-flight audits; past the cap the answer is a fast 503 with Retry-After.
func (s *Server) shedAudit(next echo.HandlerFunc) echo.HandlerFunc {
	return shed(s.inflight, next)
}

// shedPrecheck caps in-flight pre-checks (one cap for every criteria's pre-check, MCP's
// included); past the cap the answer is a fast 503 with Retry-After.
func (s *Server) shedPrecheck(next echo.HandlerFunc) echo.HandlerFunc {
	return shed(s.prechecks, next)
}

const keyAdmission = "scope_hygiene.admission"

// shed caps a route's requests in flight. The slot is taken when the body has arrived (readBody),
// not before: an upload that trickles in holds memory under the body budget and the body timeout,
// never a slot that real requests need.
func shed(in *limit.Inflight, next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		a := &admission{in: in}
		c.Set(keyAdmission, a)
		defer a.release()
		return next(c)
	}
}

// admission is one request's in-flight slot, taken once its body is in.
type admission struct {
	in   *limit.Inflight
	held bool
}

// admit takes the request's in-flight slot if its route has a cap; past the cap it answers the
// fast 503 and reports false.
func admit(c echo.Context) (bool, error) {
	a, ok := c.Get(keyAdmission).(*admission)
	if !ok || a.held {
		return true, nil
	}
	if a.held = a.in.TryAcquire(); a.held {
		return true, nil
	}
	return false, overloaded(c)
}

func (a *admission) release() {
	if a.held {
		a.in.Release()
		a.held = false
	}
}

// overloaded answers a fast 503 overloaded with Retry-After.
func overloaded(c echo.Context) error {
	c.Set(keyRule, "overloaded")
	c.Response().Header().Set("Retry-After", "1")
	return c.JSON(http.StatusServiceUnavailable, limitError(errOverloaded))
}

// outOfTime reports whether a store error is the request's own end (its time ran out, or the
// client left) rather than a store failure: that is overload, never logged or answered as a
// store that failed. It answers it (a 503 overloaded with Retry-After, when the answer has not
// been sent by the request timeout already).
func (s *Server) outOfTime(c echo.Context, err error) (bool, error) {
	ctx := c.Request().Context()
	if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return false, nil
	}
	s.cfg.Logger.Warn("request out of time", "route", route(c))
	if c.Response().Committed {
		return true, nil
	}
	return true, overloaded(c)
}

// houseBudget refuses, before the body is read, a house-token attempt from an address whose
// budget of failed attempts is spent: 429 with Retry-After.
func (s *Server) houseBudget(c echo.Context) bool {
	if !strings.HasPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ") {
		return true
	}
	spent, wait := s.houseFailures.Spent(c.RealIP())
	if !spent {
		return true
	}
	s.houseTokenTooMany(c, wait)
	return false
}

// houseFailed spends one failed attempt of the address's budget; past it the answer is a 429
// with Retry-After (and false) instead of the refusal.
func (s *Server) houseFailed(c echo.Context) bool {
	ok, wait := s.houseFailures.Allow(c.RealIP())
	if ok {
		return true
	}
	s.houseTokenTooMany(c, wait)
	return false
}

func (s *Server) houseTokenTooMany(c echo.Context, wait time.Duration) {
	c.Set(keyRule, "house_token_budget")
	c.Response().Header().Set("Retry-After", itoa(max(int((wait+time.Second-1)/time.Second), 1)))
	_ = c.JSON(http.StatusTooManyRequests, limitError(errHouseTokenBudget))
}

// unpaidBudget spends the caller address's budget for an /audit that carries neither a
// payment that verifies nor the house token (it can only end in a refusal). Past the budget: 429 with
// Retry-After, before the export is read or validated.
func (s *Server) unpaidBudget(c echo.Context) bool {
	if s.paidOrHouse(c) {
		return true
	}
	ok, wait := s.unpaid.Allow(c.RealIP())
	if ok {
		return true
	}
	c.Set(keyRule, "unpaid_audit_budget")
	c.Response().Header().Set("Retry-After", itoa(max(int((wait+time.Second-1)/time.Second), 1)))
	_ = c.JSON(http.StatusTooManyRequests, limitError(errUnpaidBudget))
	return false
}

// house reports whether the request is an operator's house audit. A bearer token that does not
// match (or any bearer when house audits are disabled) is an error.
func (s *Server) house(c echo.Context) (bool, error) {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	if h == "" {
		return false, nil
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || s.cfg.HouseToken == "" {
		return false, errors.New("house token invalid")
	}
	want := sha256.Sum256([]byte(s.cfg.HouseToken))
	got := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
		return false, errors.New("house token invalid")
	}
	return true, nil
}

// paidOrHouse reports whether the request carries the house token or a payment header that
// verifies offline: only those skip the unpaid-audit budget (a dummy header of either kind
// spends it like any unpaid call).
func (s *Server) paidOrHouse(c echo.Context) bool {
	h := c.Request().Header
	if h.Get(echo.HeaderAuthorization) != "" {
		house, err := s.house(c)
		return err == nil && house
	}
	if p := h.Get("PAYMENT-SIGNATURE"); p != "" {
		v, ok := s.cfg.Payments.(PaymentVerifier)
		return ok && v.VerifiesOffline(p)
	}
	return false
}
