package api

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// readiness runs the store's readiness check (round trip, schema at the expected migration,
// the schema applied again when it is missing) for /readyz and, in the background, after a
// store failure, so a store that comes back serves again without a restart.
type readiness struct {
	check   func(ctx context.Context) error
	timeout time.Duration
	mu      sync.Mutex // one check at a time
	running atomic.Bool
}

func newReadiness(st store.Store, timeout time.Duration) *readiness {
	r := &readiness{timeout: timeout}
	if ch, ok := st.(store.Checker); ok {
		r.check = ch.Ready
	} else {
		r.check = func(ctx context.Context) error { _, err := st.ListLedger(ctx, 0, 1); return err }
	}
	return r
}

// run checks now (one check at a time).
func (r *readiness) run(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	return r.check(ctx)
}

// kick starts one background re-check unless one is already running.
func (r *readiness) kick(onDone func(error)) {
	if !r.running.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.running.Store(false)
		onDone(r.run(context.Background()))
	}()
}

// Health bodies (schema/health.schema.json).
const (
	healthLive     = "live"
	healthReady    = "ready"
	healthNotReady = "not_ready"
	checkOK        = "ok"
	checkFailed    = "unavailable"
	checkPassed    = "passed"
)

// livez answers while the process serves HTTP; it touches nothing else.
func (s *Server) livez(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]any{"status": healthLive})
}

// readyz answers 200 when the store makes a round trip with its schema at the expected
// migration; the criteria gate has passed (the server is only built after it passes).
func (s *Server) readyz(c echo.Context) error {
	err := s.ready.run(c.Request().Context())
	storeState := checkOK
	status, code := healthReady, http.StatusOK
	if err != nil {
		s.cfg.Logger.Warn("store not ready", "cause", store.Cause(err))
		storeState, status, code = checkFailed, healthNotReady, http.StatusServiceUnavailable
		c.Response().Header().Set("Retry-After", itoa(s.retryAfterSeconds()))
	}
	checks := map[string]string{"store": storeState, "criteria_gate": checkPassed}
	if !s.paymentsReadyState(c.Request().Context(), checks) { // paid audits: the payment network's RPC
		status, code = healthNotReady, http.StatusServiceUnavailable
		c.Response().Header().Set("Retry-After", itoa(s.retryAfterSeconds()))
	}
	return c.JSON(code, map[string]any{"status": status, "criteria_revision": s.cfg.Criteria.Revision(), "checks": checks})
}

func (s *Server) retryAfterSeconds() int {
	return max(int(s.cfg.RetryAfter.Round(time.Second)/time.Second), 1)
}

// Static bodies of the service's limits (schema/service-limit.schema.json).
const (
	errStoreUnavailable = "store unavailable"
	errOverloaded       = "overloaded"
	errUnpaidBudget     = "unpaid audit budget exhausted"
	errMethodNotAllowed = "method not allowed"
	errBodyUnreadable   = "request body could not be read"
)

// limitError is the body of a 503, 429 or 405 the service sends on its own account.
func limitError(msg string) map[string]string {
	return map[string]string{"kind": "error", "error": msg}
}

// storeFailed answers 503 with Retry-After for a store that failed, logs the cause (a fixed
// word or code, never the error's text), and starts a schema re-check in the background.
func (s *Server) storeFailed(c echo.Context, msg string, err error) error {
	s.cfg.Logger.Error(msg, "route", route(c), "cause", store.Cause(err))
	s.ready.kick(func(err error) {
		if err != nil {
			s.cfg.Logger.Warn("store re-check failed", "cause", store.Cause(err))
		} else {
			s.cfg.Logger.Info("store re-check passed")
		}
	})
	c.Response().Header().Set("Retry-After", itoa(s.retryAfterSeconds()))
	return c.JSON(http.StatusServiceUnavailable, limitError(errStoreUnavailable))
}
