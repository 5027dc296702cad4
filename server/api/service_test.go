package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/postgres"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
	"github.com/scopehygiene/scope-hygiene/server/store/storetest"
)

var (
	serviceSchemaOnce sync.Once
	serviceSchemas    map[string]*jsonschema.Schema
	serviceSchemaErr  error
)

// validate checks body against schema/<name>.schema.json.
func validate(t *testing.T, name string, body []byte) {
	t.Helper()
	serviceSchemaOnce.Do(func() {
		serviceSchemas = map[string]*jsonschema.Schema{}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		for _, n := range []string{"service-limit", "health"} {
			b, err := os.ReadFile(filepath.Join("..", "..", "schema", n+".schema.json"))
			if err != nil {
				serviceSchemaErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				serviceSchemaErr = err
				return
			}
			url := "https://scope-hygiene.invalid/schema/" + n + ".schema.json"
			if err := c.AddResource(url, doc); err != nil {
				serviceSchemaErr = err
				return
			}
			if serviceSchemas[n], err = c.Compile(url); err != nil {
				serviceSchemaErr = err
				return
			}
		}
	})
	if serviceSchemaErr != nil {
		t.Fatal(serviceSchemaErr)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s body is not one JSON document: %q", name, body)
	}
	if err := serviceSchemas[name].Validate(v); err != nil {
		t.Fatalf("%s body %s does not validate: %v", name, body, err)
	}
}

func TestMethodsOnPublishedPaths(t *testing.T) {
	h := newHarness(t, sqliteStore(t))
	for _, tc := range []struct {
		method, path string
		status       int
		allow, body  string
	}{
		{"GET", "/precheck", 405, "POST, OPTIONS", ""},
		{"PUT", "/audit", 405, "POST, OPTIONS", ""},
		{"DELETE", "/precheck", 405, "POST, OPTIONS", ""},
		{"PUT", "/criteria", 405, "GET, HEAD, OPTIONS", ""},
		{"OPTIONS", "/audit", 204, "POST, OPTIONS", ""},
		{"OPTIONS", "/readyz", 204, "GET, HEAD, OPTIONS", ""},
		{"POST", "/criteria", 404, "", "NOT COVERED"},
		{"POST", "/livez", 404, "", "NOT COVERED"},
		{"POST", "/nowhere", 404, "", "NOT COVERED"},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			r := h.do(tc.method, tc.path, nil, nil)
			if r.Status != tc.status || r.Header.Get("Allow") != tc.allow {
				t.Fatalf("%d Allow %q, want %d %q", r.Status, r.Header.Get("Allow"), tc.status, tc.allow)
			}
			if tc.body != "" && string(r.Body) != tc.body {
				t.Fatalf("body %q, want %q", r.Body, tc.body)
			}
			if tc.status == 405 {
				validate(t, "service-limit", r.Body)
			}
		})
	}
	for _, p := range []string{"/criteria", "/healthz", "/livez", "/readyz", "/metrics"} {
		if r := h.do("HEAD", p, nil, nil); r.Status != 200 {
			t.Errorf("HEAD %s: %d, want 200", p, r.Status)
		}
	}
}

func TestCORS(t *testing.T) {
	const origin = "https://app.example.test"
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.CORSOrigins = []string{origin} })
	pre := h.do("OPTIONS", "/audit", nil, map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "payment-signature, sign-in-with-x, content-type"})
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Fatalf("preflight: %d %v", pre.Status, pre.Header)
	}
	for _, hd := range []string{"PAYMENT-SIGNATURE", "SIGN-IN-WITH-X"} {
		if !strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), hd) {
			t.Errorf("preflight does not allow %s: %q", hd, pre.Header.Get("Access-Control-Allow-Headers"))
		}
	}
	r := h.do("POST", "/audit", export(nil), map[string]string{"Origin": origin})
	if r.Status != 402 || r.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Fatalf("unpaid audit: %d %v", r.Status, r.Header)
	}
	for _, hd := range []string{"PAYMENT-REQUIRED", "PAYMENT-RESPONSE", "SIGN-IN-WITH-X-CHALLENGE"} {
		if !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), hd) {
			t.Errorf("%s not exposed: %q", hd, r.Header.Get("Access-Control-Expose-Headers"))
		}
	}
	if r := h.do("GET", "/criteria", nil, map[string]string{"Origin": "https://other.example.test"}); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("an origin not configured was allowed: %v", r.Header)
	}
	if r := h.do("OPTIONS", "/audit", nil, nil); r.Status != 204 || r.Header.Get("Allow") != "POST, OPTIONS" {
		t.Fatalf("OPTIONS without Origin: %d Allow %q", r.Status, r.Header.Get("Allow"))
	}
	plain := newHarness(t, sqliteStore(t))
	if r := plain.do("GET", "/criteria", nil, map[string]string{"Origin": origin}); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS without configured origins: %v", r.Header)
	}
}

func TestSeparateMetrics(t *testing.T) {
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.SeparateMetrics = true })
	if r := h.do("GET", "/metrics", nil, nil); r.Status != 404 {
		t.Fatalf("GET /metrics on the API address: %d, want 404", r.Status)
	}
}

// failingReader yields part of a body, then fails (a connection cut mid-upload).
type failingReader struct{ b []byte }

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, errors.New("connection reset " + canaryContent)
	}
	n := copy(p, f.b[:min(len(f.b), 16)])
	f.b = f.b[n:]
	return n, nil
}

func TestBodyReadErrorEndsTheRequest(t *testing.T) {
	for _, path := range []string{"/precheck", "/audit"} {
		t.Run(path, func(t *testing.T) {
			h := newHarness(t, sqliteStore(t))
			req := httptest.NewRequest("POST", path, nil)
			req.Body = io.NopCloser(&failingReader{b: export(nil)})
			req.ContentLength = -1
			rec := httptest.NewRecorder()
			h.srv.Handler().ServeHTTP(rec, req)
			if rec.Code != 400 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			validate(t, "service-limit", rec.Body.Bytes())
			if strings.Contains(h.logs.String(), canaryContent) {
				t.Fatal("the read error's text reached the log")
			}
			// Nothing was consumed: the caller's free call is still there.
			if r := h.do("POST", "/precheck", export(nil), nil); r.Status != 200 {
				t.Fatalf("precheck after a failed read: %d %s", r.Status, r.Body)
			}
		})
	}
}

func TestUnpaidAuditBudget(t *testing.T) {
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.UnpaidAuditsPerMinute, c.UnpaidAuditBurst = 2, 2 })
	for i, want := range []int{402, 402, 429} {
		r := h.do("POST", "/audit", export(nil), nil)
		if r.Status != want {
			t.Fatalf("unpaid audit %d: %d, want %d", i, r.Status, want)
		}
		if want == 429 {
			validate(t, "service-limit", r.Body)
			if r.Header.Get("Retry-After") != "30" {
				t.Fatalf("Retry-After %q, want 30", r.Header.Get("Retry-After"))
			}
		}
	}
	if r := h.do("POST", "/audit", export(nil), map[string]string{"Authorization": "Bearer " + houseToken}); r.Status != 200 {
		t.Fatalf("house audit under an exhausted unpaid budget: %d", r.Status)
	}
	h.clock.Advance(30 * time.Second)
	if r := h.do("POST", "/audit", export(nil), nil); r.Status != 402 {
		t.Fatalf("after the refill: %d", r.Status)
	}
}

// downStore fails every call while down (a store that went away).
type downStore struct {
	store.Store
	down atomic.Bool
}

// ConsumeNonce keeps the sign-in-with-x nonce table of the store under test.
func (d *downStore) ConsumeNonce(ctx context.Context, n string, now time.Time) (bool, error) {
	if d.down.Load() {
		return false, errDown
	}
	return d.Store.(siwx.NonceStore).ConsumeNonce(ctx, n, now)
}

var errDown = errors.New("connection refused " + canaryContent)

func (d *downStore) Ready(ctx context.Context) error {
	if d.down.Load() {
		return errDown
	}
	return d.Store.(store.Checker).Ready(ctx)
}

func (d *downStore) TakeFree(ctx context.Context, key string, now time.Time, l store.FreeLimits) (store.FreeDecision, error) {
	if d.down.Load() {
		return store.FreeDecision{}, errDown
	}
	return d.Store.TakeFree(ctx, key, now, l)
}

func (d *downStore) AppendLedger(ctx context.Context, e store.LedgerEntry) (int64, error) {
	if d.down.Load() {
		return 0, errDown
	}
	return d.Store.AppendLedger(ctx, e)
}

func TestStoreDownAnswers503AndReadyzTellsTheTruth(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ds := &downStore{Store: b.open(t)}
			h := newHarness(t, ds)
			r := h.do("GET", "/readyz", nil, nil)
			if r.Status != 200 {
				t.Fatalf("readyz: %d %s", r.Status, r.Body)
			}
			validate(t, "health", r.Body)
			r = h.do("GET", "/livez", nil, nil)
			validate(t, "health", r.Body)
			ds.down.Store(true)
			for _, path := range []string{"/precheck", "/audit"} {
				r := h.do("POST", path, export(nil), map[string]string{"Authorization": "Bearer " + houseToken})
				if r.Status != 503 || r.Header.Get("Retry-After") != "5" {
					t.Fatalf("%s with the store down: %d Retry-After %q %s", path, r.Status, r.Header.Get("Retry-After"), r.Body)
				}
				validate(t, "service-limit", r.Body)
			}
			r = h.do("GET", "/readyz", nil, nil)
			if r.Status != 503 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), `"store":"unavailable"`) {
				t.Fatalf("readyz with the store down: %d %s", r.Status, r.Body)
			}
			validate(t, "health", r.Body)
			if r := h.do("GET", "/livez", nil, nil); r.Status != 200 {
				t.Fatalf("livez with the store down: %d", r.Status)
			}
			logs := h.logs.String()
			if !strings.Contains(logs, `"cause":"connection"`) && !strings.Contains(logs, `"cause":"other"`) {
				t.Fatalf("no cause logged:\n%s", logs)
			}
			if strings.Contains(logs, canaryContent) || strings.Contains(logs, "prefers tea") {
				t.Fatal("an error's text or content reached the log")
			}
			ds.down.Store(false)
			// The writes that failed keep it not ready (for api.WriteFailureWindow) until one succeeds.
			if r := h.do("GET", "/readyz", nil, nil); r.Status != 503 || !strings.Contains(string(r.Body), `"store":"ok","store_write":"unavailable"`) {
				t.Fatalf("readyz right after recovery: %d %s", r.Status, r.Body)
			}
			if r := h.do("POST", "/precheck", export(nil), nil); r.Status != 200 {
				t.Fatalf("precheck after recovery: %d %s", r.Status, r.Body)
			}
			if r := h.do("GET", "/readyz", nil, nil); r.Status != 200 {
				t.Fatalf("readyz after recovery: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestRecreatedDatabaseRecovers drops every table under a running server (a database dropped
// and recreated): requests answer 503, the server re-checks and re-applies its schema, and
// serves again without a restart.
func TestRecreatedDatabaseRecovers(t *testing.T) {
	ctx := context.Background()
	type backend struct {
		name string
		open func(t *testing.T) (store.Store, func(t *testing.T))
	}
	for _, b := range []backend{
		{"sqlite", func(t *testing.T) (store.Store, func(t *testing.T)) {
			path := filepath.Join(t.TempDir(), "db.sqlite")
			s, err := sqlite.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, func(t *testing.T) {
				db, err := sql.Open("sqlite", "file:"+path)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				for _, tb := range mustTables(t, s) {
					if _, err := db.Exec(`DROP TABLE "` + tb + `"`); err != nil {
						t.Fatal(err)
					}
				}
			}
		}},
		{"postgres", func(t *testing.T) (store.Store, func(t *testing.T)) {
			dsn := storetest.PostgresDSN(t)
			s, err := postgres.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, func(t *testing.T) {
				conn, err := pgx.Connect(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				for _, tb := range mustTables(t, s) {
					if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+pgx.Identifier{tb}.Sanitize()+` CASCADE`); err != nil {
						t.Fatal(err)
					}
				}
			}
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			st, drop := b.open(t)
			h := newHarness(t, st)
			drop(t)
			r := h.do("POST", "/audit", export(nil), map[string]string{"Authorization": "Bearer " + houseToken})
			if r.Status != 503 {
				t.Fatalf("audit on a dropped database: %d %s", r.Status, r.Body)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				r := h.do("GET", "/readyz", nil, nil)
				if r.Status == 200 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("never ready again: %d %s", r.Status, r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if r := h.do("POST", "/audit", export(nil), map[string]string{"Authorization": "Bearer " + houseToken}); r.Status != 200 {
				t.Fatalf("audit after recovery: %d %s", r.Status, r.Body)
			}
			rows, err := st.ListLedger(ctx, 0, 10)
			if err != nil || len(rows) != 1 {
				t.Fatalf("ledger after recovery: %d rows, %v", len(rows), err)
			}
		})
	}
}

func mustTables(t *testing.T, s store.Store) []string {
	t.Helper()
	tables, err := s.Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tb := range tables {
		if !strings.HasPrefix(tb, "sqlite_") {
			out = append(out, tb)
		}
	}
	return out
}
