package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	scopehygiene "github.com/scopehygiene/scope-hygiene"
	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/engine"
	"github.com/scopehygiene/scope-hygiene/server/limit"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/web"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: scope-hygiene serve [flags]\n\nEvery flag also reads SCOPE_HYGIENE_<FLAG> from the environment; a flag wins.\n\n")
		fs.PrintDefaults()
	}
	if err := serveFlags(fs, &c, getenv); err != nil {
		fmt.Fprintln(stderr, "serve:", err)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	logger := newLogger(stdout, c.LogLevel)
	if err := runServer(ctx, c, logger, nil); err != nil {
		logger.Error("serve failed", "error", err.Error())
		return 1
	}
	return 0
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// runServer serves until ctx ends, then shuts down gracefully. ready, when not nil, receives the
// bound address.
func runServer(ctx context.Context, c config, logger *slog.Logger, ready chan<- string) error {
	maxConns, err := c.checkStart()
	if err != nil {
		return err
	}
	// The store first: one that does not answer fails the start within seconds.
	st, err := openStore(ctx, c.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	crit, err := gateCriteria(c, logger)
	if err != nil {
		return err
	}
	signer, created, err := sign.LoadOrCreateKey(c.KeyFile)
	if err != nil {
		return err
	}
	if created {
		logger.Warn("generated a development signing key", "key_file", c.KeyFile, "key_id", signer.KeyID())
	}
	pay, proofKey, err := startPaid(ctx, c, logger, st, crit.ps)
	if err != nil {
		return err
	}
	if sw, ok := st.(store.Sweeper); ok {
		go sweep(ctx, sw, crit.ps, logger)
	}
	m := newMetrics(c, logger, crit, pay, st)
	srv, err := api.New(apiConfig(c, logger, crit, st, signer, pay, proofKey, m))
	if err != nil {
		return err
	}
	hs, ln, err := listenHTTP(ctx, c, logger, srv.Handler(), maxConns)
	if err != nil {
		return err
	}
	// The binary's pages the start read go back once the whole start is done: what runs after the
	// gates (the key, the payments, the API and its page, the listener) touches much of the
	// function table again (about 10 MB resident at rest when dropped right after the gates).
	if err := dropStartPages(); err != nil {
		logger.Debug("binary pages stay resident", "reason", "madvise_failed")
	}
	logger.Info("serving", "addr", ln.Addr().String(), "criteria_id", crit.ps.ID(), "criteria_revision", crit.ps.Revision(),
		"criteria_digest", crit.ps.Digest(), "key_id", signer.KeyID(), "house_audits", c.HouseToken != "")
	return serveUntilDone(ctx, c, logger, hs, ln, m, maxConns, ready)
}

// checkStart checks the settings that need no store (the house token, the connection cap) and
// sets the memory limit; it returns the connection cap.
func (c *config) checkStart() (int, error) {
	if err := c.loadHouseToken(); err != nil {
		return 0, err
	}
	if err := c.checkHouseToken(); err != nil {
		return 0, err
	}
	maxConns, err := connCap(c.MaxConns)
	if err != nil {
		return 0, err
	}
	if c.MemoryLimitMB > 0 {
		debug.SetMemoryLimit(int64(c.MemoryLimitMB) << 20)
	}
	return maxConns, nil
}

// servedCriteria are the criteria the server serves: the primary one and its published
// document, and the further criteria mounted beside it.
type servedCriteria struct {
	ps     *rules.ProgramSet
	doc    map[string]any
	mounts []api.Mount
}

// gateCriteria loads the criteria. A revision serves only if it re-passes its pinned corpus (and
// is not stopped).
func gateCriteria(c config, logger *slog.Logger) (servedCriteria, error) {
	ps, err := loadCriteria(c.CriteriaFile)
	if err != nil {
		return servedCriteria{}, err
	}
	started := time.Now()
	sum, err := corpus.Gate(ps, corpusFS(c.CorpusDir), splitList(c.StoppedRevisions))
	if err != nil {
		return servedCriteria{}, err
	}
	logger.Info("corpus re-passed", "criteria_revision", ps.Revision(), "cases", sum.Passed,
		"pin", ps.Criteria().Corpus.SHA256, "duration_ms", time.Since(started).Milliseconds())
	doc, err := engine.Document(ps)
	if err != nil {
		return servedCriteria{}, err
	}
	mounts, err := loadMounts(logger, splitList(c.StoppedRevisions))
	if err != nil {
		return servedCriteria{}, err
	}
	// The corpus gates decoded every pinned case: give their garbage back to the system now,
	// once, rather than carry it as the resting heap (the runtime returns it only slowly).
	debug.FreeOSMemory()
	return servedCriteria{ps: ps, doc: doc, mounts: mounts}, nil
}

// startPaid starts the payments of paid audits and loads the sign-in-with-x key. The request
// budget covers the confirmation budget: a payment still unconfirmed when the request must end
// is answered 202 with its transaction, never a bare timeout.
func startPaid(ctx context.Context, c config, logger *slog.Logger, st store.Store, ps *rules.ProgramSet) (api.Payments, []byte, error) {
	pr := ps.Criteria().Price
	pay, err := startPayments(ctx, c.Pay, c.PublicBaseURL, x402.Price{Units: uint64(pr.USDCUnitsPerCall), Label: pr.Label, Status: pr.Status},
		st, logger)
	if err != nil {
		return nil, nil, err
	}
	proofKey, err := loadChallengeKey(c.ProofKeyFile, "SCOPE_HYGIENE_SIWX_KEY", getenv)
	if err != nil {
		return nil, nil, fmt.Errorf("sign-in-with-x key: %w", err)
	}
	if s := settlerOf(pay); s != nil {
		if budget := c.RequestTimeout - 2*time.Second; budget > time.Second && budget < s.ConfirmTimeout {
			s.ConfirmTimeout = budget
		}
	}
	return pay, proofKey, nil
}

// settlerOf is the x402 settler of payments on a network (nil without).
func settlerOf(pay api.Payments) *x402.Settler {
	if g, ok := pay.(interface{ Settler() *x402.Settler }); ok {
		return g.Settler()
	}
	return nil
}

// newMetrics is the service's metrics: the API's, the settler's fee losses and pause, and the
// Day-0 tripwires over the store.
func newMetrics(c config, logger *slog.Logger, crit servedCriteria, pay api.Payments, st store.Store) *metrics.Metrics {
	m := metrics.New()
	if s := settlerOf(pay); s != nil {
		lost := prometheus.NewCounter(prometheus.CounterOpts{Name: "scope_hygiene_x402_failed_fee_lamports_total",
			Help: "Lamports the fee payer paid for payment transactions that landed with an error."})
		m.Registry().MustRegister(lost)
		s.OnFailedFee = func(l int64) { lost.Add(float64(l)) }
		paused := prometheus.NewGauge(prometheus.GaugeOpts{Name: "scope_hygiene_x402_payments_paused",
			Help: "1 while paid audits are paused: the fee payer's hourly budget of lamports lost on failed transactions is spent (a tripwire)."})
		refused := prometheus.NewCounter(prometheus.CounterOpts{Name: "scope_hygiene_x402_payments_paused_total",
			Help: "Payments refused 503 payments_paused before any broadcast."})
		m.Registry().MustRegister(paused, refused)
		s.OnPaused = func(p bool) {
			if p {
				paused.Set(1)
				refused.Inc()
			} else {
				paused.Set(0)
			}
		}
	}
	if limits, err := killLineLimits(crit.ps); err == nil {
		m.RegisterTripwires(st, limits, 2*time.Second, time.Now)
		m.RegisterKillLine(st, limits, 2*time.Second, time.Now, logger)
	} else {
		logger.Warn("kill-line tripwire gauges off", "error", err.Error())
	}
	return m
}

// apiConfig wires the API from the settings and what the start built.
func apiConfig(c config, logger *slog.Logger, crit servedCriteria, st store.Store, signer *sign.Signer, pay api.Payments,
	proofKey []byte, m *metrics.Metrics) api.Config {
	ps := crit.ps
	return api.Config{Criteria: ps, Document: crit.doc, Engine: engine.Engine{PS: ps}, Store: st,
		Signer: signer, Payments: pay, PriceStatus: ps.Criteria().Price.Status, HouseToken: c.HouseToken, PublicBaseURL: c.PublicBaseURL, ProofKey: proofKey, ProofBudgetPerMinute: c.ProofBudget, Logger: logger, Metrics: m, TrustProxy: c.TrustProxy,
		MaxInflightAudits: c.MaxInflightAudits, MaxInflightPrechecks: c.MaxInflightPrechecks, BodyBudgetBytes: int64(c.BodyBudgetMB) << 20,
		BodyTimeout: c.BodyTimeout, HouseTokenFailuresPerMinute: c.HouseTokenFailuresPerMinute, HouseTokenFailureBurst: c.HouseTokenFailureBurst,
		UnpaidAuditsPerMinute: c.UnpaidAuditsPerMinute, UnpaidAuditBurst: c.UnpaidAuditBurst,
		RetryAfter: c.StoreRetryAfter, CORSOrigins: splitList(c.CORSOrigins), SeparateMetrics: c.MetricsAddr != "",
		Page: web.Handler(), MCP: mcp.Handler(c.MCPConformanceTools), Mounts: crit.mounts}
}

// listenHTTP listens on the service address under the connection cap, and builds the HTTP server
// of handler with the request timeout and the header, idle and write bounds.
func listenHTTP(ctx context.Context, c config, logger *slog.Logger, handler http.Handler, maxConns int) (*http.Server, net.Listener, error) {
	ln, err := listen(ctx, c.Addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen: %w", err)
	}
	conns := limit.NewConns(maxConns, shedResponse, nil)
	ln = conns.Listener(ln)
	hs := &http.Server{
		ConnState:         conns.ConnState,
		ConnContext:       conns.ConnContext,
		Handler:           limit.Guard(withTimeout(handler, c.RequestTimeout), []byte(smuggledBody)),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       c.RequestTimeout,
		WriteTimeout:      c.RequestTimeout + 5*time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(staticHandler{logger.Handler()}, slog.LevelWarn),
	}
	return hs, ln, nil
}

// serveUntilDone serves on ln (and the metrics on their own address when one is configured)
// until ctx ends or a server fails, then shuts down within the shutdown timeout.
func serveUntilDone(ctx context.Context, c config, logger *slog.Logger, hs *http.Server, ln net.Listener, m *metrics.Metrics,
	maxConns int, ready chan<- string) error {
	errc := make(chan error, 2)
	if c.MetricsAddr != "" {
		mln, err := net.Listen("tcp", c.MetricsAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("listen for metrics: %w", err)
		}
		ms := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 60 * time.Second}
		logger.Info("serving metrics", "addr", mln.Addr().String())
		go func() { errc <- ms.Serve(mln) }()
		defer ms.Close()
	}
	backlog, ok := listenBacklog()
	if !ok {
		backlog = -1 // unknown: not Linux, or /proc not mounted
	}
	logger.Info("limits", "max_conns", maxConns, "listen_backlog", backlog, "defer_accept", deferAcceptSecs, "max_inflight_audits", c.MaxInflightAudits, "max_inflight_prechecks", c.MaxInflightPrechecks,
		"body_budget_mb", c.BodyBudgetMB, "body_timeout", c.BodyTimeout.String(), "memory_limit_mb", c.MemoryLimitMB,
		"unpaid_audits_per_minute", c.UnpaidAuditsPerMinute, "unpaid_audit_burst", c.UnpaidAuditBurst)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// sweepBatch bounds every sweep statement, so a sweep never holds a table for long.
const sweepBatch = 500

// sweep deletes spent nonces, finished free-tier rows and finished settlement rows every
// minute, in batches of sweepBatch rows per statement, looping until no table fills a batch.
func sweep(ctx context.Context, sw store.Sweeper, ps *rules.ProgramSet, logger *slog.Logger) {
	_, interval := ps.FreeTier()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := sweepAll(ctx, sw, time.Now(), interval, sweepBatch); err != nil {
				logger.Warn("sweep failed", "reason", "store_error")
			}
		}
	}
}

// sweepAll runs Sweep until no table filled its batch (or ctx ends) and sums what it deleted.
func sweepAll(ctx context.Context, sw store.Sweeper, now time.Time, interval time.Duration, batch int) (store.SweepResult, error) {
	var total store.SweepResult
	for ctx.Err() == nil {
		r, err := sw.Sweep(ctx, now, interval, batch)
		if err != nil {
			return total, err
		}
		total.Nonces += r.Nonces
		total.FreeTier += r.FreeTier
		total.Settlements += r.Settlements
		total.WriteKeys += r.WriteKeys
		if !r.More(batch) {
			break
		}
	}
	return total, ctx.Err()
}

// timeoutBody is the static answer to a request that ran out of time.
const timeoutBody = `{"kind":"error","error":"request timeout"}`

// smuggledBody is the static answer to a request carrying both Content-Length and
// Transfer-Encoding (limit.Guard).
const smuggledBody = `{"kind":"error","error":"Bad Request"}`

// withTimeout bounds every request: the handler's context ends after d, and a request that has
// not begun its answer by then is answered with the static timeout body (503). Unlike
// net/http's TimeoutHandler, which copies every body through a buffer of its own, the handler's
// answer goes straight to the connection: a handler begins its answer when it writes, and from
// then on the answer is its own (it still sees its context end at d, and the server's write
// timeout bounds the writing). The API's routes write their whole body in one write, so an answer
// is either all sent or replaced by the timeout body, as before. The JSON type is set on the
// outer writer first, for the timeout body; a handler's own content type replaces it.
func withTimeout(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		tw := &timeoutWriter{w: w, h: make(http.Header)}
		done := make(chan struct{})
		panicked := make(chan any, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					panicked <- p
					return
				}
				close(done)
			}()
			h.ServeHTTP(tw, r.WithContext(ctx))
		}()
		select {
		case p := <-panicked:
			panic(p)
		case <-done:
			tw.finish()
		case <-ctx.Done():
			if tw.timeOut() {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, timeoutBody)
				return
			}
			// The answer has begun: it is the handler's to end (its context has ended).
			select {
			case p := <-panicked:
				panic(p)
			case <-done:
				tw.finish()
			}
		}
	})
}

// timeoutWriter is the handler's side of withTimeout: headers of its own until the answer begins,
// then the connection itself; after a timeout, nothing.
type timeoutWriter struct {
	w        http.ResponseWriter
	h        http.Header
	mu       sync.Mutex
	begun    bool // the status and headers went to w
	timedOut bool // the timeout body went to w
}

func (tw *timeoutWriter) Header() http.Header { return tw.h }

// begin sends the handler's headers and status; mu is held.
func (tw *timeoutWriter) begin(code int) {
	dst := tw.w.Header()
	for k, vv := range tw.h {
		dst[k] = vv
	}
	tw.begun = true
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) WriteHeader(code int) {
	if code < 200 { // an informational status is not the answer
		return
	}
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.timedOut && !tw.begun {
		tw.begin(code)
	}
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	if !tw.begun {
		tw.begin(http.StatusOK)
	}
	return tw.w.Write(p)
}

// FlushError sends what the handler has written so far (its status and headers first, 200 when
// it set none, as net/http does). After a timeout nothing is sent and it fails. Without it, a
// flush through Echo's response (a streamed MCP answer) would find no flusher and panic.
func (tw *timeoutWriter) FlushError() error {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return http.ErrHandlerTimeout
	}
	if !tw.begun {
		tw.begin(http.StatusOK)
	}
	return http.NewResponseController(tw.w).Flush()
}

// SetReadDeadline sets the connection's read deadline (the API's body timeout), through
// http.ResponseController.
func (tw *timeoutWriter) SetReadDeadline(t time.Time) error {
	return http.NewResponseController(tw.w).SetReadDeadline(t)
}

// finish begins an answer the handler ended without writing (status 200, its headers).
func (tw *timeoutWriter) finish() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.begun && !tw.timedOut {
		tw.begin(http.StatusOK)
	}
}

// timeOut marks the request timed out unless the answer has begun; it reports whether it did.
func (tw *timeoutWriter) timeOut() bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.begun {
		return false
	}
	tw.timedOut = true
	return true
}

// corpusFS is the corpus directory, or the corpus embedded in the binary.
func corpusFS(dir string) fs.FS {
	if dir != "" {
		return os.DirFS(dir)
	}
	sub, err := fs.Sub(scopehygiene.Corpus, "corpus")
	if err != nil {
		return scopehygiene.Corpus
	}
	return sub
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func loadCriteria(path string) (*rules.ProgramSet, error) {
	if path == "" {
		return rules.Default()
	}
	return rules.LoadFile(path)
}

// staticHandler logs net/http's own error lines as one static message: they can quote
// request bytes (a malformed request line, a TLS handshake record).
type staticHandler struct{ slog.Handler }

func (h staticHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.Handler.Handle(ctx, slog.NewRecord(r.Time, r.Level, "http server error", 0))
}

var getenv = os.Getenv
