package api

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// route is the metric/log label of a request: the matched route template (every registered
// route, a further criteria's too), "not_covered" for a POST the criteria do not publish,
// "unmatched" otherwise. Never a raw path a caller chose.
func route(c echo.Context) string {
	if r, ok := c.Get(keyRoute).(string); ok {
		if isSchemaPath(r) {
			return "/schema/:name" // a method fallback names the published path it answered
		}
		return r
	}
	switch p := c.Path(); p {
	case "", "/*":
		return routeNone
	default:
		return p
	}
}

// observe logs one JSON line per request (method, route, status, duration, refusal rule id) and
// records the request metrics. Nothing from the body, the path or the query is logged.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err)
		}
		d := time.Since(start)
		status := c.Response().Status
		r := route(c)
		method := c.Request().Method
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
			http.MethodPatch, http.MethodOptions:
		default:
			method = "OTHER" // client-chosen method names stay out of labels
		}
		s.cfg.Metrics.Requests.WithLabelValues(r, method, strconv.Itoa(status)).Inc()
		s.cfg.Metrics.Latency.WithLabelValues(r, method).Observe(d.Seconds())
		attrs := []slog.Attr{slog.String("method", method), slog.String("route", r), slog.Int("status", status),
			slog.Float64("duration_ms", float64(d.Microseconds())/1000)}
		if rule, ok := c.Get(keyRule).(string); ok {
			attrs = append(attrs, slog.String("rule", rule))
		}
		s.cfg.Logger.LogAttrs(c.Request().Context(), slog.LevelInfo, "request", attrs...)
		return nil
	}
}

// recoverStatic turns a panic into a static 500. The panic value and stack are dropped: they
// may hold request data. Only a static message and the route are logged.
func (s *Server) recoverStatic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.cfg.Logger.Error("panic recovered", "route", route(c))
				if !c.Response().Committed {
					err = c.JSON(http.StatusInternalServerError, staticError(http.StatusInternalServerError))
				}
			}
		}()
		return next(c)
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
