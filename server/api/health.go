package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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
	turn    chan struct{} // one check at a time; a caller waits for its turn within its context
	running atomic.Bool
}

func newReadiness(st store.Store, timeout time.Duration) *readiness {
	r := &readiness{timeout: timeout, turn: make(chan struct{}, 1)}
	if ch, ok := st.(store.Checker); ok {
		r.check = ch.Ready
	} else {
		r.check = func(ctx context.Context) error { _, err := st.ListLedger(ctx, 0, 1); return err }
	}
	return r
}

// run checks now (one check at a time).
func (r *readiness) run(ctx context.Context) error {
	select {
	case r.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.turn }()
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

// ReadyCheck is one named condition of /readyz: the replica is ready when every check returns
// nil within the readiness timeout. Its name is the key of its state in the body's "checks"
// ("ok" or "unavailable"). A condition added later (shedding for memory, a payment network
// reachable) is one more entry: Config.ReadyChecks, or the list in New.
type ReadyCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// Readiness bounds and windows.
const (
	// ReadyTimeout bounds each readiness check: a store that does not answer in time is not ready.
	ReadyTimeout = 2 * time.Second
	// WriteProbeEvery is the most often the write probe commits (a /readyz flood shares one).
	WriteProbeEvery = 500 * time.Millisecond
	// WriteFailureWindow is how long a failed request write keeps the replica not ready, unless a
	// write has succeeded since.
	WriteFailureWindow = 5 * time.Second
	// LookupTimeout bounds the look-up of a write key after a failed write.
	LookupTimeout = 2 * time.Second
)

// writeHealth is the store_write check: a bounded write probe (store.Keyed.ProbeWrite) and the
// writes requests made, so a store that can read but not write is not ready.
type writeHealth struct {
	probe func(ctx context.Context, now time.Time) error
	now   func() time.Time
	// lastFailure and lastSuccess are the times (Unix ns) of the latest
	// request write that failed and that succeeded.
	lastFailure, lastSuccess atomic.Int64

	turn      chan struct{} // one probe at a time; the others wait within their context
	probedAt  time.Time
	probedErr error
}

// errShedding is the memory check's failure: request bodies are being refused for memory.
var errShedding = errors.New("api: shedding request bodies for memory")

// memoryCheck fails while the server sheds request bodies for memory (Shedding): a load balancer
// should send new work to another replica until it stops.
func (s *Server) memoryCheck(context.Context) error {
	if s.Shedding() {
		return errShedding
	}
	return nil
}

var errRecentWriteFailure = errors.New("api: a write failed within the window and none succeeded since")

// newWriteHealth runs on the monotonic clock, never the configured one: its windows are real time.
func newWriteHealth(st store.Store) *writeHealth {
	w := &writeHealth{now: time.Now, turn: make(chan struct{}, 1)}
	if k, ok := st.(store.Keyed); ok {
		w.probe = k.ProbeWrite
	}
	return w
}

func (w *writeHealth) failed()    { w.lastFailure.Store(w.now().UnixNano()) }
func (w *writeHealth) succeeded() { w.lastSuccess.Store(w.now().UnixNano()) }

// check fails on a request write failure within WriteFailureWindow with no success since, then
// on the write probe (run at most every WriteProbeEvery).
func (w *writeHealth) check(ctx context.Context) error {
	now := w.now()
	if f := w.lastFailure.Load(); f > w.lastSuccess.Load() && now.UnixNano()-f < int64(WriteFailureWindow) {
		return errRecentWriteFailure
	}
	if w.probe == nil {
		return nil
	}
	select {
	case w.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.turn }()
	now = w.now()
	if !w.probedAt.IsZero() && now.Sub(w.probedAt) >= 0 && now.Sub(w.probedAt) < WriteProbeEvery {
		return w.probedErr
	}
	w.probedErr = w.probe(ctx, now)
	w.probedAt = w.now()
	return w.probedErr
}

// readyChecks are the built-in conditions of /readyz, then the configured ones.
func (s *Server) readyChecks() []ReadyCheck {
	checks := append([]ReadyCheck{
		{Name: "store", Check: s.ready.run},
		{Name: "store_write", Check: s.writes.check},
		{Name: "memory", Check: s.memoryCheck},
	}, s.cfg.ReadyChecks...)
	if _, ok := s.cfg.Payments.(ReadinessChecker); ok { // paid audits: the payment network's RPC
		checks = append(checks, ReadyCheck{Name: PaymentsCheck, Check: s.paymentsReady})
	}
	return checks
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

// readyz runs every readiness check at once, each bounded by ReadyTimeout, and answers 200 when
// all pass; the criteria gate has passed (the server is only built after it passes).
func (s *Server) readyz(c echo.Context) error {
	checks := s.readyChecks()
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, ch := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(c.Request().Context(), ReadyTimeout)
			defer cancel()
			errs[i] = ch.Check(ctx)
		}()
	}
	wg.Wait()
	states := map[string]string{"criteria_gate": checkPassed}
	status, code := healthReady, http.StatusOK
	for i, ch := range checks {
		states[ch.Name] = checkOK
		if errs[i] != nil {
			s.cfg.Logger.Warn("not ready", "check", ch.Name, "cause", store.Cause(errs[i]))
			states[ch.Name], status, code = checkFailed, healthNotReady, http.StatusServiceUnavailable
		}
	}
	if code != http.StatusOK {
		c.Response().Header().Set("Retry-After", itoa(s.retryAfterSeconds()))
	}
	return c.JSON(code, map[string]any{"status": status, "criteria_revision": s.cfg.Criteria.Revision(), "checks": states})
}

func (s *Server) retryAfterSeconds() int {
	return max(int(s.cfg.RetryAfter.Round(time.Second)/time.Second), 1)
}

// Static bodies of the service's limits (schema/service-limit.schema.json).
const (
	errStoreUnavailable = "store unavailable"
	errOutcomeUnknown   = "outcome unknown"
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
	if over, err := s.outOfTime(c, err); over { // overload is not a store failure (admit.go)
		return err
	}
	s.cfg.Logger.Error(msg, "route", route(c), "cause", store.Cause(err))
	s.recheck()
	c.Response().Header().Set("Retry-After", itoa(s.retryAfterSeconds()))
	return c.JSON(http.StatusServiceUnavailable, limitError(errStoreUnavailable))
}

func (s *Server) recheck() {
	s.ready.kick(func(err error) {
		if err != nil {
			s.cfg.Logger.Warn("store re-check failed", "cause", store.Cause(err))
		} else {
			s.cfg.Logger.Info("store re-check passed")
		}
	})
}

// HeaderIdempotencyKey carries the key of a consuming write (docs/api.md, Idempotent writes).
const HeaderIdempotencyKey = "Idempotency-Key"

// writeKeyText is the request's Idempotency-Key, or a key minted for this request (which a
// 503 outcome unknown hands back, so the caller can retry with it).
func writeKeyText(c echo.Context) string {
	if k := c.Request().Header.Get(HeaderIdempotencyKey); k != "" {
		return k
	}
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeFailed answers a consuming write that failed and whose commit was not found. A write that
// committed nothing answers 503 store unavailable; any other answers 503 outcome unknown with the
// key (keyText, "" for a paid audit, whose key is its payment) to retry with: the retry is
// counted at most once.
func (s *Server) writeFailed(c echo.Context, msg string, err error, keyText string) error {
	if c.Request().Context().Err() == nil {
		s.writes.failed() // a write cut short by the caller leaving says nothing about the store
	}
	if errors.Is(err, store.ErrNotApplied) {
		return s.storeFailed(c, msg, err)
	}
	s.cfg.Logger.Error(msg+": outcome unknown", "route", route(c), "cause", store.Cause(err))
	s.recheck()
	h := c.Response().Header()
	h.Set("Retry-After", itoa(s.retryAfterSeconds()))
	if keyText != "" {
		h.Set(HeaderIdempotencyKey, keyText)
	}
	return c.JSON(http.StatusServiceUnavailable, limitError(errOutcomeUnknown))
}

// lookupContext bounds the look-up of a write after a failed one: it outlives neither the
// request nor LookupTimeout.
func lookupContext(c echo.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Request().Context(), LookupTimeout)
}
