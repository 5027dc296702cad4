package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// Defaults of the service's limits (the serve flags set them).
const (
	// DefaultMaxInflightAudits is the in-flight audit cap when Config leaves it 0.
	DefaultMaxInflightAudits = 64
	// DefaultRetryAfter is the Retry-After of a 503 when Config leaves it 0.
	DefaultRetryAfter = 5 * time.Second
)

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

// shedAudit takes an in-flight audit slot; past the cap it answers a fast 503 with Retry-After.
func (s *Server) shedAudit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.inflight.TryAcquire() {
			c.Set(keyRule, "overloaded")
			c.Response().Header().Set("Retry-After", "1")
			return c.JSON(http.StatusServiceUnavailable, limitError(errOverloaded))
		}
		defer s.inflight.Release()
		return next(c)
	}
}

// unpaidBudget spends the caller address's budget for an /audit that carries neither a
// payment nor a house token (it can only end in a 402). Past the budget: 429 with
// Retry-After, before the export is read or validated.
func (s *Server) unpaidBudget(c echo.Context) bool {
	h := c.Request().Header
	if h.Get("PAYMENT-SIGNATURE") != "" || h.Get(echo.HeaderAuthorization) != "" {
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
// lists the methods, anything else is 405 with Allow. It reports false for other paths.
func (s *Server) methodFallback(c echo.Context) (bool, error) {
	req := c.Request()
	allow, ok := s.allowed(req.URL.Path)
	if !ok || (req.Method == http.MethodPost && !strings.HasPrefix(allow, "POST")) {
		return false, nil // a POST to a path that is not a POST route stays NOT COVERED
	}
	c.Set(keyRoute, req.URL.Path)
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
