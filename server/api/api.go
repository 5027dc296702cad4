// Package api serves the criteria's endpoints block over HTTP with echo: GET /criteria,
// POST /precheck (free, signed), POST /audit (paid, signed), GET /metrics, GET /healthz, and
// NOT COVERED for every other POST path.
//
// A request that evaluates an export runs as a list of named stages (request.go), which its
// handler reads as: audit.go (POST /audit), precheck.go, forget.go (an unpriced criteria's
// audit). Each stage is in the file named after it, in the order a paid audit runs them:
// admit.go, body.go, slot.go, prepare.go, caller.go, charge.go, evaluate.go, commit.go,
// answer.go; steps.go attaches the step metrics and deadlines to them.
//
// The export lives in memory for one request: no handler, middleware, log line, metric label or
// error path ever carries any part of a request body.
package api

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime"
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
	if s.e, err = s.routes(); err != nil {
		return nil, err
	}
	return s, nil
}

// routes is the router: the middleware every request passes (observe, recover, the body guard,
// CORS), then each published route with its handler.
func (s *Server) routes() (*echo.Echo, error) {
	cfg := s.cfg
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
	return e, nil
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

// absURL is the absolute URL of route on this service: the configured public base URL, or the
// request's own Host over http when none is configured (local use).
func (s *Server) absURL(c echo.Context, route string) string {
	if b := strings.TrimSuffix(s.cfg.PublicBaseURL, "/"); b != "" {
		return b + route
	}
	return "http://" + c.Request().Host + route
}
