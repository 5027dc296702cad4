package api_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
)

// blockingStore holds every ledger write and free-tier call until gate closes, so a request can
// be kept in flight after its body has arrived.
type blockingStore struct {
	*sqlite.Store
	entered chan struct{}
	gate    chan struct{}
}

func newBlockingStore(t *testing.T) *blockingStore {
	return &blockingStore{Store: sqliteStore(t).(*sqlite.Store), entered: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (b *blockingStore) AppendLedger(ctx context.Context, e store.LedgerEntry) (int64, error) {
	b.entered <- struct{}{}
	<-b.gate
	return b.Store.AppendLedger(ctx, e)
}

func (b *blockingStore) TakeFree(ctx context.Context, key string, now time.Time, l store.FreeLimits) (store.FreeDecision, error) {
	b.entered <- struct{}{}
	<-b.gate
	return b.Store.TakeFree(ctx, key, now, l)
}

func (b *blockingStore) AppendLedgerOnce(ctx context.Context, e store.LedgerEntry, wk store.WriteKey, now time.Time) (int64, bool, error) {
	b.entered <- struct{}{}
	<-b.gate
	return b.Store.AppendLedgerOnce(ctx, e, wk, now)
}

func (b *blockingStore) TakeFreeOnce(ctx context.Context, key string, wk store.WriteKey, now time.Time, l store.FreeLimits) (store.FreeDecision, error) {
	b.entered <- struct{}{}
	<-b.gate
	return b.Store.TakeFreeOnce(ctx, key, wk, now, l)
}

// serveAsync sends one request in the background and returns its status when it ends.
func serveAsync(h *harness, req *http.Request) chan int {
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		h.srv.Handler().ServeHTTP(rec, req)
		done <- rec.Code
	}()
	return done
}

// TestInflightCaps: an audit or pre-check whose body is still arriving holds no in-flight slot;
// one being evaluated or written does, and past the cap the next gets a fast 503 with
// Retry-After (the pre-checks of a second criteria share the cap).
func TestInflightCaps(t *testing.T) {
	for _, path := range []string{"/audit", "/precheck", "/v1/forget-envelope/precheck"} {
		t.Run(path, func(t *testing.T) {
			st := newBlockingStore(t)
			h := newHarness(t, st, withForgetEnvelope(t), func(c *api.Config) { c.MaxInflightAudits, c.MaxInflightPrechecks = 1, 1 })
			body := export(nil)
			if strings.HasPrefix(path, "/v1/") {
				body = feExport(false)
			}
			hdr := map[string]string{"Authorization": "Bearer " + houseToken}
			newReq := func(r io.Reader) *http.Request {
				req := httptest.NewRequest("POST", path, r)
				if path == "/audit" {
					req.Header.Set("Authorization", hdr["Authorization"])
				}
				return req
			}
			// A body trickling in: it must not keep the next request out.
			pr, pw := io.Pipe()
			trickling := serveAsync(h, newReq(pr))
			pw.Write(body[:10])
			// A request in flight past its body (held in the store).
			held := serveAsync(h, newReq(strings.NewReader(string(body))))
			select {
			case <-st.entered:
			case <-time.After(5 * time.Second):
				t.Fatal("the first complete request never reached the store: the trickling body held its slot")
			}
			// Timed at the handler: the harness's own schema checks of the answer are not the
			// server's time.
			rec := httptest.NewRecorder()
			start := time.Now()
			h.srv.Handler().ServeHTTP(rec, newReq(strings.NewReader(string(body))))
			took := time.Since(start)
			if rec.Code != 503 || rec.Header().Get("Retry-After") == "" || took > time.Second {
				t.Fatalf("over the cap: %d Retry-After %q after %s: %s", rec.Code, rec.Header().Get("Retry-After"), took, rec.Body)
			}
			validate(t, "service-limit", rec.Body.Bytes())
			close(st.gate)
			if code := <-held; code != 200 {
				t.Fatalf("held request: %d", code)
			}
			pw.Write(body[10:])
			pw.Close()
			if code := <-trickling; code != 200 && code != 429 {
				t.Fatalf("trickled request: %d", code)
			}
		})
	}
}

// TestBodyMemoryFollowsArrival: a request declaring the largest body and sending a few bytes
// allocates for the bytes sent, not for the length declared.
func TestBodyMemoryFollowsArrival(t *testing.T) {
	h := newHarness(t, sqliteStore(t))
	send := func() uint64 {
		req := httptest.NewRequest("POST", "/precheck", strings.NewReader(`{"family":`))
		req.ContentLength = 262144 // declared, never sent: the read ends early (unexpected EOF)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rec := httptest.NewRecorder()
		h.srv.Handler().ServeHTTP(rec, req)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	send() // warm the pools
	var least uint64 = 1 << 62
	for range 5 {
		least = min(least, send())
	}
	if least > 96<<10 {
		t.Fatalf("a request declaring 262,144 bytes and sending 10 allocated %d bytes", least)
	}
}

// TestBodyBudget: past the budget of body bytes held, a new body gets a fast 503 with
// Retry-After; the bytes come back when the request ends.
func TestBodyBudget(t *testing.T) {
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.BodyBudgetBytes = 300 })
	pr, pw := io.Pipe()
	held := serveAsync(h, httptest.NewRequest("POST", "/precheck", pr))
	pw.Write([]byte(strings.Repeat(" ", 300))) // the budget is held by a body in progress
	deadline := time.Now().Add(5 * time.Second)
	for !h.srv.Shedding() && time.Now().Before(deadline) {
		r := h.do("POST", "/precheck", export(nil), nil)
		if r.Status == 503 {
			if r.Header.Get("Retry-After") == "" {
				t.Fatal("503 for the body budget without Retry-After")
			}
			validate(t, "service-limit", r.Body)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !h.srv.Shedding() {
		t.Fatal("a body past the budget was not refused")
	}
	// A replica shedding for memory is not ready: a load balancer sends new work elsewhere.
	if r := h.do("GET", "/readyz", nil, nil); r.Status != 503 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), `"memory":"unavailable"`) {
		t.Fatalf("/readyz while shedding for memory: %d %s", r.Status, r.Body)
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	<-held
	// The budget is free again; a body past it is refused while it arrives.
	h2 := newHarness(t, sqliteStore(t), func(c *api.Config) { c.BodyBudgetBytes = 64 })
	if r := h2.do("POST", "/precheck", export(nil), nil); r.Status != 503 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a body larger than the whole budget: %d", r.Status)
	}
	if r := h2.do("POST", "/precheck", []byte(`{}`), nil); r.Status == 503 {
		t.Fatal("the budget was not given back")
	}
}

// TestBodyTimeout: a body that does not arrive within the body timeout ends with a static 408
// and the connection closes.
func TestBodyTimeout(t *testing.T) {
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.BodyTimeout = 300 * time.Millisecond })
	ts := httptest.NewServer(h.srv.Handler())
	defer ts.Close()
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	fmt.Fprintf(c, "POST /precheck HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
	br := bufio.NewReader(c)
	r, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 408 || time.Since(start) > 3*time.Second {
		t.Fatalf("stalled body: %d after %s", r.StatusCode, time.Since(start))
	}
	validate(t, "service-limit", b)
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open after the 408")
	}
	// A body that arrives in time is unaffected, and the handler's time after it is its own.
	resp, err := http.Post(ts.URL+"/precheck", "application/json", strings.NewReader(string(export(nil))))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a body in time: %d", resp.StatusCode)
	}
}

// TestPathVariantsAreNotCovered: a POST to a variant of a published route (a percent-encoded
// letter, a trailing or doubled slash, another case) is another path: 404 NOT COVERED.
func TestPathVariantsAreNotCovered(t *testing.T) {
	h := newHarness(t, sqliteStore(t), withForgetEnvelope(t))
	for _, p := range []string{"/%61udit", "/audit/", "//audit", "/AUDIT", "/Precheck", "/pre%63heck", "/precheck/",
		"/v1/forget-envelope/%61udit", "/v1//forget-envelope/precheck", "/v1/forget-envelope/precheck/", "/mc%70"} {
		// Sent as is (the OpenAPI check of h.do would decode the path to the route's).
		rec := httptest.NewRecorder()
		h.srv.Handler().ServeHTTP(rec, httptest.NewRequest("POST", p, strings.NewReader(string(export(nil)))))
		if rec.Code != 404 || rec.Body.String() != api.NotCovered {
			t.Errorf("POST %s: %d %q, want 404 NOT COVERED", p, rec.Code, rec.Body)
		}
	}
	if r := h.do("GET", "/%61udit", nil, nil); r.Status != 404 {
		t.Errorf("GET /%%61udit: %d, want 404", r.Status)
	}
	if r := h.do("GET", "/audit", nil, nil); r.Status != 405 {
		t.Errorf("GET /audit: %d, want 405", r.Status)
	}
}

// TestHouseTokenFailureBudget: past the per-address budget of failed house-token attempts the
// answer is 429 with Retry-After (before the body is read), for a right token too; another
// address keeps its own budget.
func TestHouseTokenFailureBudget(t *testing.T) {
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.HouseTokenFailuresPerMinute, c.HouseTokenFailureBurst = 2, 2 })
	from := func(addr, token string) response {
		req := httptest.NewRequest("POST", "/audit", strings.NewReader(string(export(nil))))
		req.RemoteAddr = addr + ":1234"
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.srv.Handler().ServeHTTP(rec, req)
		return response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	}
	for i, want := range []int{401, 401, 429, 429} {
		if r := from("192.0.2.7", "guess"); r.Status != want {
			t.Fatalf("guess %d: %d, want %d", i, r.Status, want)
		} else if want == 429 {
			if r.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			validate(t, "service-limit", r.Body)
		}
	}
	if r := from("192.0.2.7", houseToken); r.Status != 429 {
		t.Fatalf("the right token from a spent address: %d, want 429", r.Status)
	}
	if r := from("192.0.2.8", houseToken); r.Status != 200 {
		t.Fatalf("the right token from another address: %d, want 200", r.Status)
	}
}

// TestOutOfTimeIsNotAStoreFailure: a store call that fails because the request's own time ran
// out is overload (503 overloaded with Retry-After), never logged or answered as a store failure.
func TestOutOfTimeIsNotAStoreFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st := &timingOutStore{Store: sqliteStore(t).(*sqlite.Store), cancel: cancel}
	h := newHarness(t, st)
	req := httptest.NewRequest("POST", "/precheck", strings.NewReader(string(export(nil)))).WithContext(ctx)
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), `"overloaded"`) {
		t.Fatalf("out of time: %d %q", rec.Code, rec.Body)
	}
	if strings.Contains(h.logs.String(), "store failed") || strings.Contains(rec.Body.String(), "store unavailable") {
		t.Fatalf("overload reported as a store failure: %s", h.logs.String())
	}
}

// timingOutStore ends the request's time while its free-tier call runs.
type timingOutStore struct {
	*sqlite.Store
	cancel func()
}

func (s *timingOutStore) TakeFreeOnce(ctx context.Context, key string, wk store.WriteKey, now time.Time, l store.FreeLimits) (store.FreeDecision, error) {
	s.cancel()
	return s.Store.TakeFreeOnce(ctx, key, wk, now, l)
}

func (s *timingOutStore) TakeFree(ctx context.Context, key string, now time.Time, l store.FreeLimits) (store.FreeDecision, error) {
	s.cancel()
	return s.Store.TakeFree(ctx, key, now, l)
}

// TestEvery429CarriesRetryAfter: the spent daily allowance of a criteria served free is a 429,
// and says when the next UTC day begins.
func TestEvery429CarriesRetryAfter(t *testing.T) {
	h := newHarness(t, sqliteStore(t), withForgetEnvelope(t))
	for i := range 200 {
		r := h.do("POST", "/v1/forget-envelope/precheck", feExport(false), nil)
		if r.Status == 429 && strings.Contains(string(r.Body), "free_tier_daily") {
			now := h.clock.Now()
			next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
			if got, want := r.Header.Get("Retry-After"), fmt.Sprint(int(next.Sub(now).Seconds())); got != want {
				t.Fatalf("daily allowance spent: Retry-After %q, want %s", got, want)
			}
			return
		}
		if r.Status != 200 {
			t.Fatalf("pre-check %d: %d %s", i, r.Status, r.Body)
		}
		h.clock.Advance(time.Minute)
	}
	t.Fatal("the daily allowance was never spent")
}

// holdEngine is a mount's engine whose pre-checks wait at gate while hold is set (each one
// holds its evaluation slot meanwhile).
type holdEngine struct {
	api.Engine
	hold    *atomic.Bool
	entered chan struct{}
	gate    chan struct{}
}

func (e holdEngine) Precheck(body []byte, now time.Time) (any, *api.Refusal, error) {
	if e.hold.Load() {
		e.entered <- struct{}{}
		<-e.gate
	}
	return e.Engine.Precheck(body, now)
}

// TestFreeAuditTakesAnEvaluationSlot: the free audit of an unpriced criteria evaluates in an
// evaluation slot like every evaluating route: with every slot held it is shed after the slot
// wait with 503 overloaded and Retry-After, and served once a slot is free.
func TestFreeAuditTakesAnEvaluationSlot(t *testing.T) {
	hold := &atomic.Bool{}
	eng := holdEngine{hold: hold, entered: make(chan struct{}, 64), gate: make(chan struct{})}
	h := newHarness(t, sqliteStore(t), withForgetEnvelope(t), func(c *api.Config) {
		eng.Engine = c.Mounts[0].Engine
		c.Mounts[0].Engine = eng
	})
	hold.Store(true)
	slots := runtime.GOMAXPROCS(0)
	held := make([]chan int, slots)
	for i := range held {
		held[i] = serveAsync(h, httptest.NewRequest("POST", "/v1/forget-envelope/precheck", bytes.NewReader(feExport(false))))
		select {
		case <-eng.entered:
		case <-time.After(5 * time.Second):
			t.Fatalf("pre-check %d never reached the engine", i+1)
		}
	}
	hold.Store(false)
	rec := httptest.NewRecorder()
	start := time.Now()
	h.srv.Handler().ServeHTTP(rec, httptest.NewRequest("POST", "/v1/forget-envelope/audit", bytes.NewReader(feExport(false))))
	took := time.Since(start)
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), `"overloaded"`) {
		t.Fatalf("a free audit with every evaluation slot held: %d Retry-After %q after %s: %.200s", rec.Code, rec.Header().Get("Retry-After"), took, rec.Body)
	}
	validate(t, "service-limit", rec.Body.Bytes())
	if took > 5*time.Second {
		t.Fatalf("shed after %s, want within the slot wait", took)
	}
	close(eng.gate)
	for i, ch := range held {
		if code := <-ch; code != 200 && code != 429 {
			t.Fatalf("held pre-check %d: %d", i+1, code)
		}
	}
	h.clock.Advance(time.Minute)
	if r := h.do("POST", "/v1/forget-envelope/audit", feExport(false), nil); r.Status != 200 {
		t.Fatalf("a free audit with slots free: %d %s", r.Status, r.Body)
	}
}
