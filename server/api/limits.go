package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scopehygiene/scope-hygiene/server/limit"
)

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
	// slotWait is the longest a request waits for an evaluation slot before it is shed.
	slotWait = 2 * time.Second
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

// Request and response headers of the payment and sign-in exchanges a browser client needs.
var (
	corsAllowHeaders  = []string{echo.HeaderContentType, echo.HeaderAuthorization, "PAYMENT-SIGNATURE", "SIGN-IN-WITH-X", "Mcp-Protocol-Version", HeaderIdempotencyKey}
	corsExposeHeaders = []string{"PAYMENT-REQUIRED", "PAYMENT-RESPONSE", "SIGN-IN-WITH-X-CHALLENGE", "Retry-After", HeaderIdempotencyKey}
)

// cors answers preflights and sets the CORS headers for the configured origins only.
// A request without Origin is not a CORS request: it skips the middleware, so a plain OPTIONS
// gets the route's Allow list.
func cors(origins []string) echo.MiddlewareFunc {
	mw := middleware.CORSWithConfig(middleware.CORSConfig{
		Skipper:       func(c echo.Context) bool { return c.Request().Header.Get(echo.HeaderOrigin) == "" },
		AllowOrigins:  origins,
		AllowMethods:  []string{http.MethodGet, http.MethodHead, http.MethodPost},
		AllowHeaders:  corsAllowHeaders,
		ExposeHeaders: corsExposeHeaders,
		MaxAge:        600,
	})
	return mw
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

// allowed lists the methods each published path answers (HEAD and OPTIONS included).
func (s *Server) allowed(path string) (string, bool) {
	switch path {
	case "/precheck", "/audit":
		return "POST, OPTIONS", true
	case "/criteria", "/healthz", "/livez", "/readyz", "/openapi.json":
		return "GET, HEAD, OPTIONS", true
	case "/mcp":
		if s.cfg.MCP != nil {
			return "POST, OPTIONS", true
		}
	case "/metrics":
		if !s.cfg.SeparateMetrics {
			return "GET, HEAD, OPTIONS", true
		}
	}
	if isSchemaPath(path) {
		return "GET, HEAD, OPTIONS", true
	}
	if allow, ok := s.mounted[path]; ok {
		return allow, true
	}
	return "", false
}

// methodFallback answers a published path asked with a method it does not serve: OPTIONS
// lists the methods, anything else is 405 with Allow. It reports false for other paths. A path
// is published only as the router sees it, byte for byte: a percent-encoded letter, a trailing
// or doubled slash or another case is another path (a POST to it is NOT COVERED).
func (s *Server) methodFallback(c echo.Context) (bool, error) {
	req := c.Request()
	allow, ok := s.allowed(echo.GetPath(req))
	if !ok || (req.Method == http.MethodPost && !strings.HasPrefix(allow, "POST")) {
		return false, nil // a POST to a path that is not a POST route stays NOT COVERED
	}
	c.Set(keyRoute, echo.GetPath(req))
	c.Response().Header().Set("Allow", allow)
	if req.Method == http.MethodOptions {
		return true, c.NoContent(http.StatusNoContent)
	}
	c.Set(keyRule, "method_not_allowed")
	if req.Method == http.MethodHead {
		return true, c.NoContent(http.StatusMethodNotAllowed)
	}
	return true, c.JSON(http.StatusMethodNotAllowed, limitError(errMethodNotAllowed))
}

// untilNextDay is the whole seconds until the next UTC day, when a daily allowance starts again
// (store.Day is the UTC date).
func untilNextDay(now time.Time) int {
	now = now.UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return max(int((next.Sub(now)+time.Second-1)/time.Second), 1)
}
