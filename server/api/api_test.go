package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"
	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

// walletKey is the test caller's keypair; wallet is its base58 address.
var (
	walletKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{42}, ed25519.SeedSize))
	wallet    = solana.PublicKeyFromBytes(walletKey.Public().(ed25519.PublicKey)).String()
)

// export is a synthetic, canary-free export: two scopes sharing one text (one undeclared cluster).
func export(extra map[string]any) []byte {
	m := map[string]any{
		"family": "mem0", "form": "full_text",
		"records": []any{
			map[string]any{"id": "r1", "content_text": "prefers tea", "user_id": "alice"},
			map[string]any{"id": "r2", "content_text": "prefers tea", "user_id": "bob"},
			map[string]any{"id": "r3", "content_text": "lives in Lyon", "user_id": "alice"},
		},
	}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// normalize blanks the members that change with the criteria file or the key.
var volatile = regexp.MustCompile(`"(criteria_digest|value)":"[^"]*"`)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = volatile.ReplaceAll(got, []byte(`"$1":"<volatile>"`))
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("%s: not JSON: %s", name, got)
	}
	pretty, _ := json.MarshalIndent(v, "", "  ")
	pretty = append(pretty, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(want, pretty) {
		t.Fatalf("%s differs from %s:\n%s", name, path, pretty)
	}
}

func TestCriteria(t *testing.T) {
	h := newHarness(t, sqliteStore(t))
	r := h.do(http.MethodGet, "/criteria", nil, nil)
	if r.Status != http.StatusOK || r.Header.Get("ETag") == "" {
		t.Fatalf("GET /criteria: %d %v", r.Status, r.Header)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"criteria_id", "criteria_revision", "criteria_digest", "interpretations", "corpus",
		"assessability_matrix", "texts", "price", "free_tier", "endpoints", "ledger_closed_fields", sign.CriteriaKeyMember} {
		if doc[k] == nil {
			t.Errorf("criteria document lacks %q", k)
		}
	}
	pub, err := sign.ParsePublicKey(r.Body)
	if err != nil || !pub.Equal(h.signer.Public()) {
		t.Fatalf("published key: %v", err)
	}
	if !bytes.Contains(r.Body, []byte(`"criteria_digest":"`+h.ps.Digest()+`"`)) {
		t.Fatal("criteria document lacks the program digest")
	}
	etag := r.Header.Get("ETag")
	for _, tc := range []struct {
		inm  string
		want int
	}{{etag, 304}, {`W/` + etag, 304}, {`"other", ` + etag, 304}, {"*", 304}, {`"other"`, 200}} {
		r := h.do(http.MethodGet, "/criteria", nil, map[string]string{"If-None-Match": tc.inm})
		if r.Status != tc.want || (tc.want == 304 && len(r.Body) != 0) {
			t.Errorf("If-None-Match %s: %d (%d bytes), want %d", tc.inm, r.Status, len(r.Body), tc.want)
		}
	}
}

func TestRoutes(t *testing.T) {
	h := newHarness(t, sqliteStore(t))
	cap := h.ps.BodyCap()
	big := bytes.Repeat([]byte(" "), cap+1)
	exact := append(export(nil), bytes.Repeat([]byte(" "), cap-len(export(nil)))...)
	tests := []struct {
		name   string
		method string
		path   string
		body   []byte
		hdr    map[string]string
		status int
		body2  string // exact body when set
		golden string
	}{
		{"precheck", "POST", "/precheck", export(nil), nil, 200, "", "precheck"},
		{"precheck too soon", "POST", "/precheck", export(nil), nil, 429, "", "free_tier_interval"},
		{"precheck other wallet", "POST", "/precheck", export(map[string]any{"caller": wallet}), map[string]string{"X-Prove": "1"}, 200, "", ""},
		{"caller invalid", "POST", "/precheck", export(map[string]any{"caller": "not-base58-0OIl"}), nil, 400,
			`{"kind":"refusal","rule":"caller_invalid"}` + "\n", ""},
		{"malformed precheck", "POST", "/precheck?x=1", []byte(`{"caller":"TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA","family":"mem0","form":"full_text","records":[]}`),
			map[string]string{"X-Forwarded-For": "198.51.100.7"}, 400, "", "refusal_records_empty"},
		{"over cap declared", "POST", "/audit", big, nil, 413,
			`{"kind":"refusal","rule":"body_bytes_cap","cap":262144,"observed":262145}` + "\n", ""},
		{"over cap chunked", "POST", "/precheck", append(big, big...), map[string]string{"X-Chunked": "1"}, 413,
			`{"kind":"refusal","rule":"body_bytes_cap","cap":262144,"observed":262145}` + "\n", ""},
		{"exactly the cap", "POST", "/audit", exact, nil, 402, "", ""},
		{"audit malformed is free", "POST", "/audit", []byte(`{"family":"mem0","form":"full_text","records":[{"id":1,"content_text":"x"}]}`),
			nil, 400, `{"kind":"refusal","rule":"record_id_required","record_index":0}` + "\n", ""},
		{"audit malformed before house check", "POST", "/audit", []byte(`[]`), map[string]string{"Authorization": "Bearer wrong"},
			400, `{"kind":"refusal","rule":"export_required"}` + "\n", ""},
		{"audit unpaid", "POST", "/audit", export(nil), nil, 402, "", "payment_required"},
		{"audit wrong house token", "POST", "/audit", export(nil), map[string]string{"Authorization": "Bearer wrong"}, 401,
			`{"kind":"refusal","rule":"house_token_invalid"}` + "\n", ""},
		{"audit house", "POST", "/audit", export(nil), map[string]string{"Authorization": "Bearer " + houseToken}, 200, "", "audit_house"},
		{"not covered", "POST", "/report", export(nil), nil, 404, "NOT COVERED", ""},
		{"not covered root", "POST", "/", nil, nil, 404, "NOT COVERED", ""},
		{"not covered criteria", "POST", "/criteria", nil, nil, 404, "NOT COVERED", ""},
		{"not covered nested", "POST", "/audit/extra", export(nil), nil, 404, "NOT COVERED", ""},
		{"unknown GET", "GET", "/nope", nil, nil, 404, `{"error":"Not Found","kind":"error"}` + "\n", ""},
		{"GET precheck", "GET", "/precheck", nil, nil, 405, `{"error":"method not allowed","kind":"error"}` + "\n", ""},
		{"forwarded address is not trusted", "POST", "/precheck", export(nil), map[string]string{"X-Forwarded-For": "198.51.100.7"}, 429, "", ""},
		{"healthz", "GET", "/healthz", nil, nil, 200, `{"criteria_revision":"1.0.2","status":"ok"}` + "\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hdr := tc.hdr
			if tc.hdr["X-Prove"] != "" { // sign a fresh sign-in-with-x challenge with walletKey first
				hdr = h.proven(tc.path, tc.body, walletKey)
			}
			r := h.do(tc.method, tc.path, tc.body, hdr)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			if tc.body2 != "" && string(r.Body) != tc.body2 {
				t.Fatalf("body %q, want %q", r.Body, tc.body2)
			}
			if tc.golden != "" {
				golden(t, tc.golden, r.Body)
			}
			if r.Status == 200 && strings.HasPrefix(tc.path, "/precheck") || strings.HasPrefix(tc.path, "/audit") && r.Status == 200 {
				if _, err := sign.Verify(r.Body, h.signer.Public()); err != nil {
					t.Fatalf("signed result does not verify: %v", err)
				}
			}
		})
	}
	if got := h.do("POST", "/precheck", export(nil), nil); got.Header.Get("Retry-After") != "5" {
		t.Fatalf("Retry-After = %q, want 5", got.Header.Get("Retry-After"))
	}
	rows, err := h.st.ListLedger(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !rows[0].House || rows[0].Op != "audit" || rows[0].UndeclaredClusters == nil || *rows[0].UndeclaredClusters != 1 ||
		rows[0].PriceUSDCUnits != 0 || rows[0].CriteriaVersion != "1.0.2" || !strings.HasPrefix(rows[0].VerdictLine, "MEMORY SCOPE-HYGIENE") {
		t.Fatalf("ledger after one house audit: %+v", rows)
	}
	m := h.metricsText()
	for _, want := range []string{
		`scope_hygiene_http_requests_total{method="POST",route="/precheck",status="200"} 2`,
		`scope_hygiene_http_requests_total{method="POST",route="not_covered",status="404"} 4`,
		`scope_hygiene_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`scope_hygiene_http_requests_total{method="GET",route="/precheck",status="405"} 1`,
		`scope_hygiene_refusals_total{rule="body_bytes_cap"} 2`,
		`scope_hygiene_refusals_total{rule="free_tier_interval"} 3`,
		`scope_hygiene_free_tier_refusals_total{status="429"} 3`,
		`scope_hygiene_results_total{criteria_revision="1.0.2",op="audit",payer="house"} 1`,
		`scope_hygiene_results_total{criteria_revision="1.0.2",op="precheck",payer="free"} 2`,
		`scope_hygiene_tripwire_free_calls 2`, // the malformed pre-check consumed nothing (published refusals come first)
		`scope_hygiene_tripwire_house_calls 1`,
		`scope_hygiene_tripwire_paid_calls 0`,
		`scope_hygiene_tripwire_tripped{tripwire="free_over_10x_paid"} 1`,
		`scope_hygiene_http_request_duration_seconds_bucket{method="POST",route="/audit",le="+Inf"}`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(m, "/report") || strings.Contains(m, "/nope") {
		t.Error("metrics carry a raw path")
	}
}

func TestFreeTierDailyExhaustion(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			h := newHarness(t, be.open(t))
			perDay, interval := h.ps.FreeTier()
			body := export(map[string]any{"caller": wallet})
			for i := 0; i < perDay; i++ {
				if r := h.do("POST", "/precheck", body, h.proven("/precheck", body, walletKey)); r.Status != 200 {
					t.Fatalf("call %d: %d %s", i, r.Status, r.Body)
				}
				h.clock.Advance(interval)
			}
			r := h.do("POST", "/precheck", body, h.proven("/precheck", body, walletKey))
			if r.Status != http.StatusPaymentRequired {
				t.Fatalf("call %d: %d, want 402", perDay+1, r.Status)
			}
			golden(t, "free_tier_daily", r.Body)
			// Another caller (by address) is unaffected; the next UTC day resets.
			if r := h.do("POST", "/precheck", export(nil), nil); r.Status != 200 {
				t.Fatalf("address caller: %d", r.Status)
			}
			h.clock.Advance(24 * time.Hour)
			if r := h.do("POST", "/precheck", body, h.proven("/precheck", body, walletKey)); r.Status != 200 {
				t.Fatalf("next day: %d", r.Status)
			}
		})
	}
}

// TestFreeTierConcurrent fires simultaneous pre-checks from one wallet at two servers sharing one
// store (two replicas): exactly one is answered, the rest are 429.
func TestFreeTierConcurrent(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			st := be.open(t)
			a, b := newHarness(t, st), newHarness(t, st)
			body := export(map[string]any{"caller": wallet})
			codes := make(chan int, 20)
			for i := 0; i < 20; i++ {
				h := a
				if i%2 == 1 {
					h = b
				}
				hdr := h.proven("/precheck", body, walletKey)
				go func() { codes <- h.do("POST", "/precheck", body, hdr).Status }()
			}
			n := map[int]int{}
			for i := 0; i < 20; i++ {
				n[<-codes]++
			}
			if n[200] != 1 || n[429] != 19 {
				t.Fatalf("status counts %v, want one 200 and nineteen 429", n)
			}
		})
	}
}

// fakePayments accepts any request carrying X-Test-Paid.
type fakePayments struct{ abandoned int }

func (f *fakePayments) Require(c echo.Context, q api.Quote) (*api.Payment, error) {
	if c.Request().Header.Get("X-Test-Paid") == "" {
		return api.NoPayments{}.Require(c, q)
	}
	fee := int64(5000)
	return &api.Payment{Payer: wallet, TxID: "tx-1", FeeLamports: &fee, USDCUnits: q.USDCUnits, CAD: store.CADBlock{Pending: true}}, nil
}

func (f *fakePayments) Settle(c echo.Context, p *api.Payment, e store.LedgerEntry, add func(store.LedgerEntry) (int64, error)) error {
	return api.NoPayments{}.Settle(c, p, e, add)
}

func (f *fakePayments) Abandon(echo.Context, *api.Payment) { f.abandoned++ }

func TestPaidAudit(t *testing.T) {
	pay := &fakePayments{}
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.Payments = pay })
	r := h.do("POST", "/audit", export(map[string]any{"caller": "ignored on audit"}), map[string]string{"X-Test-Paid": "1"})
	if r.Status != 200 {
		t.Fatalf("paid audit: %d %s", r.Status, r.Body)
	}
	if _, err := sign.Verify(r.Body, h.signer.Public()); err != nil {
		t.Fatal(err)
	}
	rows, _ := h.st.ListLedger(context.Background(), 0, 10)
	if len(rows) != 1 || rows[0].House || rows[0].PayerWallet != wallet || rows[0].PriceUSDCUnits != h.ps.PriceUnits() ||
		rows[0].PaymentTx != "tx-1" || *rows[0].SolanaFeeLamports != 5000 || !rows[0].CAD.Pending {
		t.Fatalf("ledger: %+v", rows)
	}
	tw, _ := h.st.Tripwires(context.Background(), h.clock.Now(), 30*24*time.Hour)
	if tw.PaidCalls != 1 {
		t.Fatalf("tripwires: %+v", tw)
	}
}

// failingEngine wraps the real engine and fails or panics on demand.
type failingEngine struct {
	api.Engine
	mode string
}

func (f failingEngine) Audit(body []byte, now func() time.Time) (*api.AuditResult, *api.Refusal, error) {
	switch f.mode {
	case "panic":
		panic("engine exploded on " + string(body))
	case "error":
		return nil, nil, &json.SyntaxError{}
	}
	return f.Engine.Audit(body, now)
}

func TestStaticServerErrors(t *testing.T) {
	for _, mode := range []string{"panic", "error"} {
		t.Run(mode, func(t *testing.T) {
			pay := &fakePayments{}
			h := newHarness(t, sqliteStore(t), func(c *api.Config) {
				c.Engine = failingEngine{Engine: c.Engine, mode: mode}
				c.Payments = pay
			})
			r := h.do("POST", "/audit", export(nil), map[string]string{"X-Test-Paid": "1"})
			if r.Status != 500 || string(r.Body) != `{"error":"Internal Server Error","kind":"error"}`+"\n" {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if pay.abandoned != 1 {
				t.Fatalf("payment abandoned %d times, want 1", pay.abandoned)
			}
			if rows, _ := h.st.ListLedger(context.Background(), 0, 10); len(rows) != 0 {
				t.Fatalf("ledger written on failure: %+v", rows)
			}
			logs := h.logs.String()
			if strings.Contains(logs, "prefers tea") || strings.Contains(logs, "goroutine") || strings.Contains(logs, "exploded") {
				t.Fatalf("log carries the panic value or a stack:\n%s", logs)
			}
			if mode == "panic" && !strings.Contains(logs, `"msg":"panic recovered"`) {
				t.Fatalf("no static panic line:\n%s", logs)
			}
		})
	}
}

func TestLogLines(t *testing.T) {
	h := newHarness(t, sqliteStore(t))
	h.do("POST", "/precheck", []byte(`{"family":"mem0","form":"full_text","records":[]}`), nil)
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(h.logs.String())), &line); err != nil {
		t.Fatalf("log line: %v: %s", err, h.logs.String())
	}
	delete(line, "time")
	delete(line, "duration_ms")
	want := map[string]any{"level": "INFO", "msg": "request", "method": "POST", "route": "/precheck", "status": float64(400), "rule": "records_empty"}
	if len(line) != len(want) {
		t.Fatalf("log line members: %v", line)
	}
	for k, v := range want {
		if line[k] != v {
			t.Fatalf("log %s = %v, want %v", k, line[k], v)
		}
	}
	_ = strconv.Itoa
}

// switchEngine panics (with the body in the panic value) while *panicky is set.
type switchEngine struct {
	real    api.Engine
	panicky *bool
}

func (s switchEngine) CheckBodySize(n int) *api.Refusal { return s.real.CheckBodySize(n) }
func (s switchEngine) Precheck(b []byte, now time.Time) (any, *api.Refusal, error) {
	return s.real.Precheck(b, now)
}
func (s switchEngine) Audit(b []byte, now func() time.Time) (*api.AuditResult, *api.Refusal, error) {
	if *s.panicky {
		panic("engine exploded on " + string(b))
	}
	return s.real.Audit(b, now)
}

// deliveringPayments is fakePayments that counts the payments marked delivered.
type deliveringPayments struct {
	fakePayments
	mu        sync.Mutex
	delivered []string
}

func (d *deliveringPayments) Delivered(_ context.Context, p *api.Payment) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.delivered = append(d.delivered, p.TxID)
}

func (d *deliveringPayments) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.delivered)
}

// TestPaidAuditDeliveredWithTheOuterAnswer: a paid audit answered to its client is marked
// delivered when its 200 is written; one answered inside another answer (the MCP endpoint's) only
// when that layer says its own answer went out, once, and never after it said so.
func TestPaidAuditDeliveredWithTheOuterAnswer(t *testing.T) {
	pay := &deliveringPayments{}
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.Payments = pay })
	if r := h.do("POST", "/audit", export(nil), map[string]string{"X-Test-Paid": "1"}); r.Status != 200 || pay.count() != 1 {
		t.Fatalf("plain paid audit: status %d, %d delivered", r.Status, pay.count())
	}
	d := &api.Deliveries{}
	req := httptest.NewRequest("POST", "/audit", bytes.NewReader(export(nil)))
	req = req.WithContext(api.WithDeferredDelivery(req.Context(), d))
	req.Header.Set("X-Test-Paid", "1")
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || pay.count() != 1 {
		t.Fatalf("held-back paid audit: status %d, %d delivered before the outer answer", rec.Code, pay.count())
	}
	d.Done()
	d.Done()
	if pay.count() != 2 {
		t.Fatalf("%d delivered after the outer answer, want 2", pay.count())
	}
	req = httptest.NewRequest("POST", "/audit", bytes.NewReader(export(nil)))
	req = req.WithContext(api.WithDeferredDelivery(req.Context(), d))
	req.Header.Set("X-Test-Paid", "1")
	rec = httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 || pay.count() != 2 {
		t.Fatalf("an answer after Done: status %d, %d delivered", rec.Code, pay.count())
	}
}
