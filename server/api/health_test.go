package api_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// faultyStore is a store whose consuming writes can be made to fail after they commit (a
// connection cut right after the commit), before they begin, and whose write probe and look-ups
// can be made to fail (issue 21).
type faultyStore struct {
	store.Store
	k store.Keyed
	// cutAfterCommit makes a write commit, then report a failure that does not say nothing was
	// committed; lookupDown makes the look-ups fail too; notApplied makes a write fail before it
	// begins; probeDown makes the write probe fail.
	cutAfterCommit, lookupDown, notApplied, probeDown atomic.Bool
	// unsynced makes a write commit, then report that its sync failed (store.NotDurable).
	unsynced atomic.Bool
	// hang makes the readiness round trip and the write probe wait until their context ends (a
	// database that does not answer).
	hang atomic.Bool
}

var errCut = errors.New("connection reset after the commit " + canaryContent)

func newFaulty(st store.Store) *faultyStore { return &faultyStore{Store: st, k: st.(store.Keyed)} }

func (f *faultyStore) Ready(ctx context.Context) error {
	if f.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return f.Store.(store.Checker).Ready(ctx)
}

// ConsumeNonce keeps the sign-in-with-x nonce table of the store under test.
func (f *faultyStore) ConsumeNonce(ctx context.Context, n string, exp time.Time) (bool, error) {
	return f.Store.(siwx.NonceStore).ConsumeNonce(ctx, n, exp)
}

func (f *faultyStore) TakeFreeOnce(ctx context.Context, key string, wk store.WriteKey, now time.Time, l store.FreeLimits) (store.FreeDecision, error) {
	if f.notApplied.Load() {
		return store.FreeDecision{}, store.NotApplied(errCut)
	}
	d, err := f.k.TakeFreeOnce(ctx, key, wk, now, l)
	if err == nil && f.unsynced.Load() {
		return store.FreeDecision{}, store.NotDurable(errCut)
	}
	if err == nil && f.cutAfterCommit.Load() {
		return store.FreeDecision{}, errCut
	}
	return d, err
}

func (f *faultyStore) AppendLedgerOnce(ctx context.Context, e store.LedgerEntry, wk store.WriteKey, now time.Time) (int64, bool, error) {
	if f.notApplied.Load() {
		return 0, false, store.NotApplied(errCut)
	}
	id, replayed, err := f.k.AppendLedgerOnce(ctx, e, wk, now)
	if err == nil && f.unsynced.Load() {
		return 0, false, store.NotDurable(errCut)
	}
	if err == nil && f.cutAfterCommit.Load() {
		return 0, false, errCut
	}
	return id, replayed, err
}

func (f *faultyStore) FindWrite(ctx context.Context, wk store.WriteKey, now time.Time) (store.Replay, error) {
	if f.lookupDown.Load() {
		return store.Replay{}, errCut
	}
	return f.k.FindWrite(ctx, wk, now)
}

func (f *faultyStore) FindPayment(ctx context.Context, tx string) (int64, error) {
	if f.lookupDown.Load() {
		return 0, errCut
	}
	return f.k.FindPayment(ctx, tx)
}

func (f *faultyStore) ProbeWrite(ctx context.Context, now time.Time) error {
	if f.probeDown.Load() {
		return errCut
	}
	if f.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return f.k.ProbeWrite(ctx, now)
}

// counts reads the ledger rows and the free uses counted.
func counts(t *testing.T, st store.Store) (ledger int, free int64) {
	t.Helper()
	rows, err := st.ListLedger(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	tw, err := st.Tripwires(context.Background(), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return len(rows), tw.FreeCalls
}

// TestCommittedWriteIsNeverReportedLost (issue 21): a free use or a house audit's ledger row that
// committed before the connection was cut answers as committed (200, one row, one use); when the
// look-up fails too the answer is 503 "outcome unknown" with the Idempotency-Key to retry with,
// and the retry with it answers 200 without a second row or use; only a write that began nothing
// answers 503 "store unavailable", and then nothing was recorded.
func TestCommittedWriteIsNeverReportedLost(t *testing.T) {
	house := map[string]string{"Authorization": "Bearer " + houseToken}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			fs := newFaulty(b.open(t))
			h := newHarness(t, fs)
			fs.cutAfterCommit.Store(true)
			for _, path := range []string{"/precheck", "/audit"} {
				if r := h.do("POST", path, export(nil), house); r.Status != 200 {
					t.Fatalf("%s cut after its commit: %d %s, want 200 (the write was found)", path, r.Status, r.Body)
				}
				h.clock.Advance(time.Minute)
			}
			if l, f := counts(t, fs); l != 1 || f != 1 {
				t.Fatalf("after two cut commits: %d ledger rows, %d free uses; want 1 and 1", l, f)
			}

			fs.lookupDown.Store(true)
			keys := map[string]string{}
			for _, path := range []string{"/precheck", "/audit"} {
				r := h.do("POST", path, export(nil), house)
				if r.Status != 503 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), `"outcome unknown"`) {
					t.Fatalf("%s cut after its commit, look-up failing: %d %s, want 503 outcome unknown", path, r.Status, r.Body)
				}
				validate(t, "service-limit", r.Body)
				if keys[path] = r.Header.Get(api.HeaderIdempotencyKey); len(keys[path]) != 32 {
					t.Fatalf("%s: minted key %q", path, keys[path])
				}
			}
			if l, f := counts(t, fs); l != 2 || f != 2 {
				t.Fatalf("the unknown outcomes did commit: %d ledger rows, %d free uses; want 2 and 2", l, f)
			}
			fs.cutAfterCommit.Store(false)
			fs.lookupDown.Store(false)
			h.clock.Advance(time.Minute)
			for _, path := range []string{"/precheck", "/audit"} {
				hdr := map[string]string{"Authorization": "Bearer " + houseToken, api.HeaderIdempotencyKey: keys[path]}
				if r := h.do("POST", path, export(nil), hdr); r.Status != 200 {
					t.Fatalf("%s retried with its key: %d %s", path, r.Status, r.Body)
				}
			}
			if l, f := counts(t, fs); l != 2 || f != 2 {
				t.Fatalf("the retries with the key wrote again: %d ledger rows, %d free uses; want 2 and 2", l, f)
			}

			fs.notApplied.Store(true)
			for _, path := range []string{"/precheck", "/audit"} {
				r := h.do("POST", path, export(nil), house)
				if r.Status != 503 || !strings.Contains(string(r.Body), `"store unavailable"`) || r.Header.Get(api.HeaderIdempotencyKey) != "" {
					t.Fatalf("%s that began nothing: %d %s", path, r.Status, r.Body)
				}
			}
			if l, f := counts(t, fs); l != 2 || f != 2 {
				t.Fatalf("store unavailable, yet recorded: %d ledger rows, %d free uses; want 2 and 2", l, f)
			}
			if logs := h.logs.String(); strings.Contains(logs, canaryContent) || strings.Contains(logs, "prefers tea") {
				t.Fatal("an error's text or content reached the log")
			}
		})
	}
}

// TestReadyzTellsWhetherTheStoreTakesAWrite (issue 21): a store that answers reads but cannot
// commit a write is not ready (503 with Retry-After, store_write unavailable) and is ready again
// by itself once the probe commits; /livez stays 200.
func TestReadyzTellsWhetherTheStoreTakesAWrite(t *testing.T) {
	fs := newFaulty(sqliteStore(t))
	h := newHarness(t, fs)
	if r := h.do("GET", "/readyz", nil, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"store_write":"ok"`) {
		t.Fatalf("readyz: %d %s", r.Status, r.Body)
	}
	fs.probeDown.Store(true)
	time.Sleep(api.WriteProbeEvery)
	r := h.do("GET", "/readyz", nil, nil)
	if r.Status != 503 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), `"store":"ok","store_write":"unavailable"`) {
		t.Fatalf("readyz with the write probe failing: %d %s", r.Status, r.Body)
	}
	validate(t, "health", r.Body)
	if r := h.do("GET", "/livez", nil, nil); r.Status != 200 {
		t.Fatalf("livez: %d", r.Status)
	}
	fs.probeDown.Store(false)
	time.Sleep(api.WriteProbeEvery)
	if r := h.do("GET", "/readyz", nil, nil); r.Status != 200 {
		t.Fatalf("readyz after the probe commits again: %d %s", r.Status, r.Body)
	}
}

// TestReadyzAfterAFailedWrite: a request write that failed keeps the replica not ready for
// WriteFailureWindow unless a write succeeds since.
func TestReadyzAfterAFailedWrite(t *testing.T) {
	fs := newFaulty(sqliteStore(t))
	h := newHarness(t, fs)
	fs.notApplied.Store(true)
	if r := h.do("POST", "/precheck", export(nil), nil); r.Status != 503 {
		t.Fatalf("precheck: %d", r.Status)
	}
	if r := h.do("GET", "/readyz", nil, nil); r.Status != 503 || !strings.Contains(string(r.Body), `"store_write":"unavailable"`) {
		t.Fatalf("readyz after a failed write: %d %s", r.Status, r.Body)
	}
	fs.notApplied.Store(false)
	if r := h.do("POST", "/precheck", export(nil), nil); r.Status != 200 {
		t.Fatalf("precheck: %d", r.Status)
	}
	if r := h.do("GET", "/readyz", nil, nil); r.Status != 200 {
		t.Fatalf("readyz after a write succeeded: %d %s", r.Status, r.Body)
	}
}

// TestReadyChecksAreANamedList: a condition added through Config.ReadyChecks is named in the
// body and makes the replica not ready when it fails.
func TestReadyChecksAreANamedList(t *testing.T) {
	var down atomic.Bool
	h := newHarness(t, sqliteStore(t), func(c *api.Config) {
		c.ReadyChecks = append(c.ReadyChecks, api.ReadyCheck{Name: "memory", Check: func(context.Context) error {
			if down.Load() {
				return errors.New("shedding for memory")
			}
			return nil
		}})
	})
	if r := h.do("GET", "/readyz", nil, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"memory":"ok"`) {
		t.Fatalf("readyz: %d %s", r.Status, r.Body)
	}
	down.Store(true)
	r := h.do("GET", "/readyz", nil, nil)
	if r.Status != 503 || !strings.Contains(string(r.Body), `"memory":"unavailable"`) || !strings.Contains(string(r.Body), `"store":"ok"`) {
		t.Fatalf("readyz with memory down: %d %s", r.Status, r.Body)
	}
	validate(t, "health", r.Body)
}

// TestUnsyncedWriteIsNeverAnsweredCommitted: a write whose sync failed may be visible and yet not
// on disk, so it is answered 503 outcome unknown with its key even though a look-up would find
// it; the retry with the key answers 200 once its own commit is synced, and writes nothing more.
func TestUnsyncedWriteIsNeverAnsweredCommitted(t *testing.T) {
	fs := newFaulty(sqliteStore(t))
	h := newHarness(t, fs)
	fs.unsynced.Store(true)
	keys := map[string]string{}
	for _, path := range []string{"/precheck", "/audit"} {
		r := h.do("POST", path, export(nil), map[string]string{"Authorization": "Bearer " + houseToken})
		if r.Status != 503 || !strings.Contains(string(r.Body), `"outcome unknown"`) {
			t.Fatalf("%s whose sync failed: %d %s, want 503 outcome unknown", path, r.Status, r.Body)
		}
		keys[path] = r.Header.Get(api.HeaderIdempotencyKey)
	}
	fs.unsynced.Store(false)
	h.clock.Advance(time.Minute)
	for _, path := range []string{"/precheck", "/audit"} {
		hdr := map[string]string{"Authorization": "Bearer " + houseToken, api.HeaderIdempotencyKey: keys[path]}
		if r := h.do("POST", path, export(nil), hdr); r.Status != 200 {
			t.Fatalf("%s retried with its key: %d %s", path, r.Status, r.Body)
		}
	}
	if l, f := counts(t, fs); l != 1 || f != 1 {
		t.Fatalf("%d ledger rows, %d free uses; want 1 and 1", l, f)
	}
}

// TestIdempotencyKeyCrossesCORS: a browser may send Idempotency-Key and read the one a 503 hands
// back.
func TestIdempotencyKeyCrossesCORS(t *testing.T) {
	const origin = "https://app.example.test"
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { c.CORSOrigins = []string{origin} })
	pre := h.do("OPTIONS", "/precheck", nil, map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "idempotency-key, content-type"})
	if pre.Status != 204 || !strings.Contains(strings.ToLower(pre.Header.Get("Access-Control-Allow-Headers")), "idempotency-key") {
		t.Fatalf("preflight: %d %q", pre.Status, pre.Header.Get("Access-Control-Allow-Headers"))
	}
	r := h.do("POST", "/audit", export(nil), map[string]string{"Origin": origin})
	if !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), api.HeaderIdempotencyKey) {
		t.Fatalf("Idempotency-Key not exposed: %q", r.Header.Get("Access-Control-Expose-Headers"))
	}
}

// TestReadyzAnswersInTimeWhenTheStoreHangs: with a database that does not answer, concurrent
// probes each answer 503 within the readiness timeout (plus a margin), none queued behind another.
func TestReadyzAnswersInTimeWhenTheStoreHangs(t *testing.T) {
	fs := newFaulty(sqliteStore(t))
	h := newHarness(t, fs)
	fs.hang.Store(true)
	time.Sleep(api.WriteProbeEvery)
	began := time.Now()
	codes := make(chan int, 4)
	for range 4 {
		go func() {
			rec := httptest.NewRecorder()
			h.srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
			codes <- rec.Code
		}()
	}
	for range 4 {
		if code := <-codes; code != 503 {
			t.Fatalf("readyz with the store hanging: %d", code)
		}
	}
	if took := time.Since(began); took > api.ReadyTimeout+time.Second {
		t.Fatalf("4 concurrent probes took %s, want within %s", took, api.ReadyTimeout+time.Second)
	}
}
