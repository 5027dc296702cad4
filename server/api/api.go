// Package api serves the criteria's endpoints block over HTTP with echo: GET /criteria,
// POST /precheck (free, signed), POST /audit (paid, signed), GET /metrics, GET /healthz, and
// NOT COVERED for every other POST path.
//
// The export lives in memory for one request: no handler, middleware, log line, metric label or
// error path ever carries any part of a request body.
package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/freetier"
	"github.com/scopehygiene/scope-hygiene/server/limit"
	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Criteria is what the API needs to know of the serving criteria (*rules.ProgramSet has it).
type Criteria interface {
	ID() string
	Revision() string
	Digest() string
	BodyCap() int
	FreeTier() (perDay int, minInterval time.Duration)
	PriceUnits() int64
	PriceLabel() string
}

// Refusal is an engine refusal: its rule id, HTTP status and the JSON body of docs/contract.md.
type Refusal struct {
	Rule   string
	Status int
	Body   any
}

// AuditResult is an audit report with the facts the ledger keeps.
type AuditResult struct {
	Report           any
	VerdictLine      string
	Undeclared       *int
	CriteriaRevision string
}

// Engine runs the criteria on one export held in memory.
type Engine interface {
	// CheckBodySize refuses a body of n bytes when it is over the cap (nil otherwise).
	CheckBodySize(n int) *Refusal
	// Precheck validates the export and resolves assessability (no factor computed).
	Precheck(body []byte, now time.Time) (any, *Refusal, error)
	// Audit computes the report; it reads clock when the check has ended (the check-end time).
	Audit(body []byte, clock func() time.Time) (*AuditResult, *Refusal, error)
}

// Preparer is an Engine that decodes an export once per request: Prepare validates and decodes
// the body, and the Prepared answers the pre-check, the audit and the caller member from that one
// decode. The server uses it when its Engine implements it.
// The body is the request's own: the server never writes to it or reuses it after Prepare, so a
// Preparer may keep pointing into it (and results may, for as long as they live) instead of
// copying it.
type Preparer interface {
	Prepare(body []byte) (Prepared, *Refusal, error)
}

// Prepared is one export decoded by a Preparer, used by one request.
type Prepared interface {
	// Precheck resolves assessability (no factor computed).
	Precheck(now time.Time) (any, error)
	// Audit computes the report; it reads clock when the check has ended. It is called once.
	Audit(clock func() time.Time) (*AuditResult, error)
	// Caller is the export's top-level caller member as freetier.CallerFromBody reads it.
	Caller() (string, error)
}

// release lets a Prepared that can give its memory back do so (it must not be used afterwards).
func release(p Prepared) {
	if r, ok := p.(interface{ Release() }); ok {
		r.Release()
	}
}

// prepared adapts an Engine without Prepare: each answer decodes the body again.
type prepared struct {
	e    Engine
	body []byte
}

func (p prepared) Precheck(now time.Time) (any, error) {
	res, ref, err := p.e.Precheck(p.body, now)
	if err == nil && ref != nil {
		err = errors.New("engine refused a body it had accepted")
	}
	return res, err
}

func (p prepared) Audit(clock func() time.Time) (*AuditResult, error) {
	res, ref, err := p.e.Audit(p.body, clock)
	if err == nil && (ref != nil || res == nil) {
		err = errors.New("engine refused a body it had accepted")
	}
	return res, err
}

func (p prepared) Caller() (string, error) { return freetier.CallerFromBody(p.body) }

// prepare decodes the export once (Preparer), or checks it and keeps the body for an Engine that
// cannot (a refusal or rule failure is found before anything else happens either way).
func (s *Server) prepare(body []byte, now time.Time) (Prepared, *Refusal, error) {
	if p, ok := s.cfg.Engine.(Preparer); ok {
		return p.Prepare(body)
	}
	if _, ref, err := s.cfg.Engine.Precheck(body, now); err != nil || ref != nil {
		return nil, ref, err
	}
	return prepared{e: s.cfg.Engine, body: body}, nil, nil
}

// Config wires a Server.
type Config struct {
	Criteria Criteria
	// Document is the published criteria document; the server adds the program digest and the
	// report-signing key.
	Document map[string]any
	Engine   Engine
	Store    store.Store
	Signer   *sign.Signer
	// Payments gates /audit (NoPayments when nil).
	Payments Payments
	// PriceStatus is the price's published status (e.g. RULED), stated with the price.
	PriceStatus string
	// HouseToken enables house audits with "Authorization: Bearer <token>" (disabled when "").
	HouseToken string
	Logger     *slog.Logger
	Metrics    *metrics.Metrics
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// PublicBaseURL is the service's public origin (e.g. https://audit.example.com): absolute
	// resource URLs and sign-in-with-x domain and uri. Empty: http://<request Host>.
	PublicBaseURL string
	// ProofKey is the HMAC key of sign-in-with-x nonces, shared by replicas (random per process
	// when empty: a challenge is then answerable on this replica only).
	ProofKey []byte
	// ProofBudgetPerMinute is how many challenges and failed proofs one client address gets a
	// minute on this replica (siwx.DefaultPerMinute when 0).
	ProofBudgetPerMinute int
	// TrustProxy takes the client address from X-Forwarded-For (only behind a trusted proxy).
	TrustProxy bool
	// MaxInflightAudits caps concurrent /audit requests; past it the answer is a fast 503
	// (DefaultMaxInflightAudits when 0).
	MaxInflightAudits int
	// UnpaidAuditsPerMinute is each client address's budget of /audit calls that carry neither
	// a payment nor a house token, with UnpaidAuditBurst at once (0 disables the budget).
	UnpaidAuditsPerMinute, UnpaidAuditBurst int
	// MaxInflightPrechecks caps concurrent pre-checks (both criteria's, and those made through
	// MCP); past it the answer is a fast 503 (DefaultMaxInflightPrechecks when 0).
	MaxInflightPrechecks int
	// BodyBudgetBytes bounds the bytes of request bodies held at once, being read or evaluated;
	// past it a new body gets a fast 503 (DefaultBodyBudgetBytes when 0, none when negative).
	BodyBudgetBytes int64
	// BodyTimeout is the time a request body has to arrive, from the end of its headers; past it
	// the answer is a static 408 and the connection closes (DefaultBodyTimeout when 0, none when
	// negative).
	BodyTimeout time.Duration
	// HouseTokenFailuresPerMinute is each client address's budget of failed house-token attempts,
	// with HouseTokenFailureBurst at once; past it a 429 (defaults when 0, none when negative).
	HouseTokenFailuresPerMinute, HouseTokenFailureBurst int
	// RetryAfter is the Retry-After of a 503 for a failed store (DefaultRetryAfter when 0).
	RetryAfter time.Duration
	// CORSOrigins are the browser origins allowed to call the API (no CORS when empty).
	CORSOrigins []string
	// SeparateMetrics leaves /metrics off this handler (it is served on its own address).
	SeparateMetrics bool
	// MCP builds the handler of POST /mcp over routes, this server's own handler (no /mcp when
	// nil; server/mcp.New is the implementation).
	MCP func(routes http.Handler, o MCPOptions) http.Handler
	// Page serves the web page at "/" and its files under "/assets/" (none when nil).
	Page http.Handler
	// Mounts are further criteria served beside this one, each at its own routes (mounts.go).
	Mounts []Mount
	// ReadyChecks are conditions /readyz checks beside the store's (health.go).
	ReadyChecks []ReadyCheck
}

// Server is the HTTP service.
type Server struct {
	cfg      Config
	e        *echo.Echo
	gate     *freetier.Gate
	criteria []byte
	etag     string
	ready    *readiness
	writes   *writeHealth
	inflight *limit.Inflight
	// prechecks caps concurrent pre-checks; bodies bounds the request body bytes held.
	prechecks *limit.Inflight
	bodies    *limit.Bytes
	// houseFailures is the per-address budget of failed house-token attempts.
	houseFailures *limit.Budget
	// evalSlots bounds the exports being decoded, evaluated or signed at once to the number of
	// CPUs: a request waiting for a slot holds its body only, never a decoded export.
	evalSlots chan struct{}
	unpaid    *limit.Budget
	// prover and proofBudget check sign-in-with-x proofs of caller wallets (caller.go).
	prover      *siwx.Prover
	proofBudget *siwx.Budget
	// mounted lists the methods of the routes mount added (the index, each criteria's document
	// route, each further criteria's pre-check and audit), for the method fallback.
	mounted map[string]string
}

// Context keys set by handlers for the observing middleware.
const (
	keyRule   = "scope_hygiene.rule"
	keyRoute  = "scope_hygiene.route"
	routeNone = "unmatched"
)

// New builds the server.
func New(cfg Config) (*Server, error) {
	if cfg.Criteria == nil || cfg.Engine == nil || cfg.Store == nil || cfg.Signer == nil || cfg.Metrics == nil {
		return nil, errors.New("api: Criteria, Engine, Store, Signer and Metrics are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Payments == nil {
		cfg.Payments = NoPayments{}
	}
	if cfg.MaxInflightAudits <= 0 {
		cfg.MaxInflightAudits = DefaultMaxInflightAudits
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	cfg.setLimitDefaults()
	perDay, minInterval := cfg.Criteria.FreeTier()
	s := &Server{cfg: cfg, gate: &freetier.Gate{Store: cfg.Store, Limits: store.FreeLimits{PerDay: perDay, MinInterval: minInterval}, Now: cfg.Now}}
	s.ready = newReadiness(cfg.Store, ReadyTimeout)
	s.writes = newWriteHealth(cfg.Store)
	s.inflight = limit.NewInflight(cfg.MaxInflightAudits)
	s.prechecks = limit.NewInflight(cfg.MaxInflightPrechecks)
	s.bodies = limit.NewBytes(cfg.BodyBudgetBytes)
	s.houseFailures = limit.NewBudget(cfg.HouseTokenFailuresPerMinute, cfg.HouseTokenFailureBurst, 100_000, cfg.Now)
	s.evalSlots = make(chan struct{}, runtime.GOMAXPROCS(0))
	s.unpaid = limit.NewBudget(cfg.UnpaidAuditsPerMinute, cfg.UnpaidAuditBurst, 100_000, cfg.Now)
	if err := s.renderCriteria(); err != nil {
		return nil, err
	}
	var err error
	if s.prover, err = newProver(cfg); err != nil {
		return nil, err
	}
	s.proofBudget = siwx.NewBudget(cfg.ProofBudgetPerMinute, time.Minute, cfg.Now)
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = s.httpError
	if cfg.TrustProxy {
		e.IPExtractor = echo.ExtractIPFromXFFHeader()
	} else {
		e.IPExtractor = echo.ExtractIPDirect()
	}
	e.Use(s.observe, s.recoverStatic, s.guardBody)
	if len(cfg.CORSOrigins) > 0 {
		e.Use(cors(cfg.CORSOrigins))
	}
	get := func(path string, h echo.HandlerFunc) {
		e.GET(path, h)
		e.HEAD(path, h) // net/http drops the body of a HEAD answer
	}
	get("/criteria", s.getCriteria)
	get("/healthz", s.healthz)
	get("/livez", s.livez)
	get("/readyz", s.readyz)
	if !cfg.SeparateMetrics {
		get("/metrics", echo.WrapHandler(cfg.Metrics.Handler()))
	}
	get("/openapi.json", s.openAPI)
	get("/schema/:name", s.schemaFile)
	e.POST("/precheck", s.precheck, s.shedPrecheck)
	e.POST("/audit", s.audit, s.shedAudit)
	if cfg.MCP != nil {
		e.POST("/mcp", mounted(cfg.MCP(e, MCPOptions{BodyCap: cfg.Criteria.BodyCap(),
			BehindProxy: cfg.TrustProxy || cfg.PublicBaseURL != "", Mounts: mcpMounts(cfg.Mounts)})))
	}
	if cfg.Page != nil {
		e.GET("/", echo.WrapHandler(cfg.Page))
		e.GET("/assets/*", echo.WrapHandler(cfg.Page))
		e.POST("/assets/*", s.fallback) // still NOT COVERED, not 405
	}
	if err := s.mount(e, get); err != nil {
		return nil, err
	}
	e.Any("/*", s.fallback)
	s.e = e
	return s, nil
}

// Handler is the server's http.Handler.
func (s *Server) Handler() http.Handler { return s.e }

// Echo exposes the router (tests add routes through it).
func (s *Server) Echo() *echo.Echo { return s.e }

func (s *Server) renderCriteria() error {
	doc := make(map[string]any, len(s.cfg.Document)+3)
	for k, v := range s.cfg.Document {
		doc[k] = v
	}
	doc["criteria_id"] = s.cfg.Criteria.ID()
	doc["criteria_revision"] = s.cfg.Criteria.Revision()
	doc["criteria_digest"] = s.cfg.Criteria.Digest()
	doc[sign.CriteriaKeyMember] = sign.Publish(s.cfg.Signer.Public())
	doc["payments"] = s.paymentsDoc()
	b, err := sign.Canonical(doc)
	if err != nil {
		return errors.New("api: render criteria document")
	}
	sum := sha256.Sum256(b)
	s.criteria, s.etag = b, `"sha256:`+hex.EncodeToString(sum[:])+`"`
	return nil
}

// CriteriaDocument is the GET /criteria body.
func (s *Server) CriteriaDocument() []byte { return s.criteria }

func (s *Server) getCriteria(c echo.Context) error {
	h := c.Response().Header()
	h.Set("ETag", s.etag)
	h.Set("Cache-Control", "public, max-age=300")
	if etagMatch(c.Request().Header.Get("If-None-Match"), s.etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, s.criteria)
}

// etagMatch implements If-None-Match (weak comparison, "*" and lists).
func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok", "criteria_revision": s.cfg.Criteria.Revision()})
}

// NotCovered is the exact body of every POST path the criteria do not publish.
const NotCovered = "NOT COVERED"

func (s *Server) fallback(c echo.Context) error {
	if ok, err := s.methodFallback(c); ok {
		return err
	}
	if c.Request().Method == http.MethodPost {
		c.Set(keyRoute, "not_covered")
		return c.String(http.StatusNotFound, NotCovered)
	}
	return c.JSON(http.StatusNotFound, staticError(http.StatusNotFound))
}

// readBody reads the request body up to the cap: a declared Content-Length over the cap
// is refused unread; otherwise at most cap+1 bytes are read, into memory that grows with the bytes
// received (body.go).
func (s *Server) readBody(c echo.Context) ([]byte, error) {
	limit := s.cfg.Criteria.BodyCap()
	if cl := c.Request().ContentLength; cl > int64(limit) {
		return nil, s.refuse(c, s.cfg.Engine.CheckBodySize(int(min(cl, int64(1)<<40))))
	}
	body, err := readAtMost(c.Request().Body, limit+1)
	if err != nil {
		// One static answer, and the request ends here: nothing is consumed.
		switch {
		case errors.Is(err, errBodyBudget):
			err = s.shedBody(c)
		case errors.Is(err, errBodySlow):
			err = s.slowBody(c)
		default:
			c.Set(keyRule, "body_unreadable")
			err = c.JSON(http.StatusBadRequest, limitError(errBodyUnreadable))
		}
		if err != nil {
			return nil, err
		}
		return nil, errAnswered
	}
	if ref := s.cfg.Engine.CheckBodySize(len(body)); ref != nil {
		return nil, s.refuse(c, ref)
	}
	if ok, err := admit(c); !ok {
		if err != nil {
			return nil, err
		}
		return nil, errAnswered
	}
	return body, nil
}

// slot is one held evaluation slot; release is idempotent.
type slot struct{ s *Server }

// evalSlot waits for an evaluation slot, at most slotWait and never past the request's end (then
// it answers a fast 503 with Retry-After).
func (s *Server) evalSlot(c echo.Context) (*slot, error) {
	select {
	case s.evalSlots <- struct{}{}:
		return &slot{s: s}, nil
	default:
	}
	wait := time.NewTimer(slotWait)
	defer wait.Stop()
	select {
	case s.evalSlots <- struct{}{}:
		return &slot{s: s}, nil
	case <-wait.C:
	case <-c.Request().Context().Done():
	}
	if err := overloaded(c); err != nil {
		return nil, err
	}
	return nil, errAnswered
}

func (sl *slot) release() {
	if sl != nil && sl.s != nil {
		<-sl.s.evalSlots
		sl.s = nil
	}
}

// handOff gives the held slot to another goroutine, which must release it by receiving from the
// returned channel; sl holds nothing afterwards.
func (sl *slot) handOff() chan struct{} {
	ch := sl.s.evalSlots
	sl.s = nil
	return ch
}

// errAnswered marks a request whose response is already written.
var errAnswered = errors.New("answered")

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

// Refusal rules of the service layer (the engine's are in the criteria).
const (
	RuleCallerInvalid     = "caller_invalid"
	RuleFreeTierDaily     = "free_tier_daily"
	RuleFreeTierInterval  = "free_tier_interval"
	RuleHouseTokenInvalid = "house_token_invalid"
)

// precheck runs in the published order: body cap, every published refusal (engine refusals,
// then caller_invalid), then the caller's proof when a wallet is named, then the allowance. A
// refused or unproven request consumes no allowance and writes no row.
func (s *Server) precheck(c echo.Context) error {
	body, err := s.readBody(c)
	if err != nil {
		return done(err)
	}
	sl, err := s.evalSlot(c)
	if err != nil {
		return done(err)
	}
	defer sl.release()
	now := s.cfg.Now()
	p, ref, err := s.prepare(body, now)
	if err != nil {
		return s.internal(c, "rule failed at run time")
	}
	if ref != nil {
		return done(s.refuse(c, ref))
	}
	res, err := p.Precheck(now)
	if err != nil {
		return s.internal(c, "rule failed at run time")
	}
	caller, err := p.Caller()
	release(p)
	sl.release() // the proof and the allowance are store work
	if ok, err := s.admitFree(c, caller, err); !ok {
		return err
	}
	s.countResult("precheck", "free")
	return s.signed(c, res)
}

func (s *Server) audit(c echo.Context) error {
	if !s.unpaidBudget(c) || !s.houseBudget(c) {
		return nil
	}
	t := time.Now()
	body, err := s.readBody(c)
	if err != nil {
		return done(err)
	}
	t = s.step(metrics.AuditStepRead, t)
	sl, err := s.evalSlot(c)
	if err != nil {
		return done(err)
	}
	defer func() { sl.release() }()
	t = s.step(metrics.AuditStepSlotWait, t)
	now := s.cfg.Now()
	// A malformed export is refused free, before any payment or house check. The export is
	// decoded here, once; the audit after the payment runs on this decode.
	prep, ref, err := s.prepare(body, now)
	if err != nil {
		return s.internal(c, "rule failed at run time")
	} else if ref != nil {
		return done(s.refuse(c, ref))
	}
	s.step(metrics.AuditStepPrepare, t)
	defer func() { // when no audit runs (no payment, a bad house token)
		if prep != nil {
			release(prep)
		}
	}()
	house, err := s.house(c)
	if err != nil {
		if !s.houseFailed(c) {
			return nil
		}
		return done(s.refuse(c, &Refusal{Rule: RuleHouseTokenInvalid, Status: http.StatusUnauthorized,
			Body: map[string]any{"kind": "refusal", "rule": RuleHouseTokenInvalid}}))
	}
	var pay *Payment
	settled := false
	defer func() { // also on a panic: a paid audit that produced nothing is abandoned
		if pay != nil && !settled {
			s.cfg.Payments.Abandon(c, pay)
		}
	}()
	if !house {
		sl.release() // a payment is network work: the slot waits for it no more
		pay, err = s.cfg.Payments.Require(c, Quote{Op: store.OpAudit, USDCUnits: s.cfg.Criteria.PriceUnits(),
			Label: s.cfg.Criteria.PriceLabel(), Status: s.cfg.PriceStatus, CriteriaRevision: s.cfg.Criteria.Revision(),
			ResourceURL: s.absURL(c, "/audit"), MCPTool: MCPTool(c.Request().Context()), Discovery: s.auditDiscovery(c),
			ProveCaller: func(wallet, purpose string) error { return s.proveCaller(c, wallet, purpose) },
			Challenge:   func(purpose string) (siwx.Challenge, error) { return s.prover.Challenge(s.proofTarget(c, purpose)) }})
		if err != nil {
			return s.internal(c, "payment check failed")
		}
		if pay == nil {
			return nil // Require answered (402 with the price)
		}
		// A verified payment is audited whatever happens to the request meanwhile.
		s.evalSlots <- struct{}{}
		sl = &slot{s: s}
	}
	t = time.Now() // a paid audit's payment check is not a step of its own
	res, err := prep.Audit(s.cfg.Now)
	// The decoded export is dropped now, not when the answer has been written: a slow reader
	// must not hold an export's memory while its report is sent.
	prep = nil
	if err != nil || res == nil {
		return s.internal(c, "rule failed at run time")
	}
	t = s.step(metrics.AuditStepAudit, t)
	// Everything about signing that can fail happens before the ledger row (or the settlement).
	// The report's canonical form and its signature cannot fail: both are written while the row
	// commits (sign.Canonicaler).
	unsigned, err := s.cfg.Signer.Canonicalize(res.Report)
	if err != nil {
		return s.internal(c, "signing failed")
	}
	signed := make(chan []byte, 1)
	go func(slot chan struct{}) { // the signature is evaluation work: it keeps the slot
		defer func() {
			if recover() != nil { // a defect, never an input: the request answers 500
				signed <- nil
			}
			<-slot
		}()
		t := time.Now()
		doc := unsigned.Sign()
		s.step(metrics.AuditStepSign, t)
		signed <- doc
	}(sl.handOff())
	entry := store.LedgerEntry{Timestamp: now, Day: store.Day(now), CriteriaVersion: res.CriteriaRevision,
		VerdictLine: res.VerdictLine, Op: store.OpAudit, UndeclaredClusters: res.Undeclared, House: house}
	keyText := ""
	if house {
		keyText = writeKeyText(c)
	}
	appendLedger := func(e store.LedgerEntry) (int64, error) { return s.appendLedger(c, e, keyText) }
	payer, written := "house", metrics.AuditStepLedger
	if house {
		_, err = appendLedger(entry)
	} else {
		payer, written = "paid", metrics.AuditStepSettle
		err = s.cfg.Payments.Settle(c, pay, entry, appendLedger)
	}
	settled = true // Settle owns the payment from here, whatever it returns
	if err != nil {
		return s.writeFailed(c, "ledger write failed", err, keyText)
	}
	t = s.step(written, t)
	doc := <-signed
	if doc == nil {
		return s.internal(c, "signing failed")
	}
	t = s.step(metrics.AuditStepSignWait, t)
	s.countResult(store.OpAudit, payer)
	if err := document(c, doc); err != nil {
		return err // not delivered (a timeout answered, the client left): the payer may resume
	}
	s.step(metrics.AuditStepWrite, t)
	if d, ok := s.cfg.Payments.(Deliverer); ok && pay != nil && c.Request().Context().Err() == nil {
		deliver(c.Request().Context(), d, pay)
	}
	return nil
}

// step observes one step of an audit begun at start (metrics.AuditSteps) and returns its end, the
// next step's start. Durations use the monotonic clock, never the configured Now.
func (s *Server) step(name string, start time.Time) time.Time {
	end := time.Now()
	s.cfg.Metrics.AuditSteps.WithLabelValues(s.cfg.Criteria.ID(), name).Observe(end.Sub(start).Seconds())
	return end
}

// absURL is the absolute URL of route on this service: the configured public base URL, or the
// request's own Host over http when none is configured (local use).
func (s *Server) absURL(c echo.Context, route string) string {
	if b := strings.TrimSuffix(s.cfg.PublicBaseURL, "/"); b != "" {
		return b + route
	}
	return "http://" + c.Request().Host + route
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

// internal answers a static 500; msg is a static string and goes to the log only.
func (s *Server) internal(c echo.Context, msg string) error {
	s.cfg.Logger.Error(msg, "route", route(c))
	return c.JSON(http.StatusInternalServerError, staticError(http.StatusInternalServerError))
}

func done(err error) error {
	if errors.Is(err, errAnswered) {
		return nil
	}
	return err
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

// admitFree runs the free tier's steps after the published refusals, in the criteria's order:
// caller_invalid (callerErr), the named wallet's sign-in-with-x proof, then the allowance. It
// reports false with the handler's result when the call was answered here.
func (s *Server) admitFree(c echo.Context, caller string, callerErr error) (bool, error) {
	if callerErr != nil {
		return false, done(s.refuse(c, &Refusal{Rule: RuleCallerInvalid, Status: http.StatusBadRequest,
			Body: map[string]any{"kind": "refusal", "rule": RuleCallerInvalid}}))
	}
	if caller != "" {
		if err := s.proveCaller(c, caller, siwx.PurposePrecheck); err != nil {
			return false, done(err)
		}
	}
	keyText := writeKeyText(c)
	wk := s.gate.WriteKey(c.Path(), caller, c.RealIP(), keyText)
	d, err := s.gate.TakeOnce(c.Request().Context(), caller, c.RealIP(), wk)
	if err != nil && !errors.Is(err, store.ErrNotApplied) && !errors.Is(err, store.ErrNotDurable) {
		// The commit may have happened before the failure: look for it.
		ctx, cancel := lookupContext(c)
		if found, ferr := s.gate.Find(ctx, wk); ferr == nil {
			d, err = found, nil
		}
		cancel()
	}
	if err != nil {
		return false, s.writeFailed(c, "free-tier store failed", err, keyText)
	}
	if d.Outcome == store.FreeAllowed { // a refusal commits nothing: it says nothing of writes
		s.writes.succeeded()
	}
	switch d.Outcome {
	case store.FreeExhausted:
		s.cfg.Metrics.FreeTier.WithLabelValues(itoa(s.exhaustedStatus())).Inc()
		if s.exhaustedStatus() == http.StatusTooManyRequests { // every 429 carries Retry-After
			c.Response().Header().Set("Retry-After", itoa(untilNextDay(s.cfg.Now())))
		}
		return false, done(s.refuse(c, &Refusal{Rule: RuleFreeTierDaily, Status: s.exhaustedStatus(),
			Body: map[string]any{"kind": "refusal", "rule": RuleFreeTierDaily, "cap": s.gate.Limits.PerDay, "observed": d.Used}}))
	case store.FreeTooSoon:
		s.cfg.Metrics.FreeTier.WithLabelValues("429").Inc()
		c.Response().Header().Set("Retry-After", itoa(freetier.RetryAfterSeconds(d.RetryAfter)))
		return false, done(s.refuse(c, &Refusal{Rule: RuleFreeTierInterval, Status: http.StatusTooManyRequests,
			Body: map[string]any{"kind": "refusal", "rule": RuleFreeTierInterval,
				"min_interval_ms": s.gate.Limits.MinInterval.Milliseconds(), "retry_after_ms": d.RetryAfter.Milliseconds()}}))
	}
	return true, nil
}
