package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/engine"
	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/metrics/tripwire"
	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/postgres"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
	"github.com/scopehygiene/scope-hygiene/server/store/storetest"
)

// syncBuffer collects log output from concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type harness struct {
	t      *testing.T
	ps     *rules.ProgramSet
	srv    *api.Server
	st     store.Store
	logs   *syncBuffer
	clock  *clock
	signer *sign.Signer
}

const houseToken = "house-token-for-tests"

var (
	psOnce sync.Once
	psVal  *rules.ProgramSet
	psErr  error
)

func programSet(t *testing.T) *rules.ProgramSet {
	psOnce.Do(func() { psVal, psErr = rules.Default() })
	if psErr != nil {
		t.Fatalf("rules.Default: %v", psErr)
	}
	return psVal
}

func sqliteStore(t *testing.T) store.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func postgresStore(t *testing.T) store.Store {
	s, err := postgres.Open(context.Background(), storetest.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// backends are the stores every behaviour runs against (PostgreSQL only with its DSN set).
var backends = []struct {
	name string
	open func(t *testing.T) store.Store
}{{"sqlite", sqliteStore}, {"postgres", postgresStore}}

func newHarness(t *testing.T, st store.Store, edit ...func(*api.Config)) *harness {
	t.Helper()
	ps := programSet(t)
	doc, err := engine.Document(ps)
	if err != nil {
		t.Fatal(err)
	}
	seed := bytes.Repeat([]byte{7}, ed25519.SeedSize)
	h := &harness{t: t, ps: ps, st: st, logs: &syncBuffer{}, signer: sign.NewSigner(ed25519.NewKeyFromSeed(seed)),
		clock: &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}}
	cfg := api.Config{Criteria: ps, Document: doc, Engine: engine.Engine{PS: ps}, Store: st, Signer: h.signer,
		PriceStatus: ps.Criteria().Price.Status, HouseToken: houseToken,
		Logger: slog.New(slog.NewJSONHandler(h.logs, nil)), Metrics: metrics.New(), Now: h.clock.Now,
		ProofKey: bytes.Repeat([]byte{5}, 32)}
	killLine, ok := ps.KillLine()
	if !ok {
		t.Fatal("the embedded criteria carry no kill_line_tripwires block")
	}
	cfg.Metrics.RegisterTripwires(st, tripwire.Limits(killLine), time.Second, h.clock.Now)
	for _, f := range edit {
		f(&cfg)
	}
	h.srv, err = api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends one request. contentLength -1 sends the body without a declared length (chunked).
func (h *harness) do(method, path string, body []byte, hdr map[string]string) response {
	h.t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if hdr["X-Chunked"] != "" {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = -1
	}
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	resp := response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	checkBody(h.t, method, path, resp) // every body against its published schema
	checkOpenAPI(h.t, req, resp)       // every answer against the OpenAPI document
	return resp
}

// proven asks for a sign-in-with-x challenge (the request unproven: a 401) and returns the
// headers of a retry that carries key's proof over it.
func (h *harness) proven(path string, body []byte, key ed25519.PrivateKey) map[string]string {
	h.t.Helper()
	r := h.do(http.MethodPost, path, body, nil)
	if r.Status != http.StatusUnauthorized {
		h.t.Fatalf("unproven request: status %d, want 401: %s", r.Status, r.Body)
	}
	var ch api.ProofChallenge
	if err := json.Unmarshal(r.Body, &ch); err != nil {
		h.t.Fatal(err)
	}
	hv, err := siwx.Sign(ch.Extensions[siwx.Extension], key)
	if err != nil {
		h.t.Fatal(err)
	}
	return map[string]string{siwx.HeaderProof: hv}
}

func (h *harness) metricsText() string {
	return string(h.do(http.MethodGet, "/metrics", nil, nil).Body)
}

// srvProver is a prover with the harness's key over its store (to forge challenges bound to
// another host or purpose).
func (h *harness) srvProver() *siwx.Prover {
	p, err := siwx.New(bytes.Repeat([]byte{5}, 32), []string{"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}, h.st.(siwx.NonceStore), h.clock.Now)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}
