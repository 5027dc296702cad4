package storetest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Group commit (issue 28): many callers' writes may share one transaction and one sync. These
// tests hold for any backend, grouped or not.

// groupCallers is enough callers at once that a grouping backend puts several in one group, and
// no more than a PostgreSQL pool holds (postgres.MaxConns), so no call waits out its bound for a
// connection on a loaded machine.
const groupCallers = 16

// each runs fn(i) for i in [0, n) at once and waits for all.
func each(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// again retries a write whose call ran out its bound (a loaded machine; PostgreSQL bounds each
// call), as a caller does, with the same key: a committed write is answered as such, once.
func again(write func() error) error {
	err := write()
	for range 5 {
		if !errors.Is(err, context.DeadlineExceeded) {
			break
		}
		err = write()
	}
	return err
}

func houseRow(now time.Time, price int64) store.LedgerEntry {
	return store.LedgerEntry{Timestamp: now, Day: store.Day(now), PriceUSDCUnits: price, CriteriaVersion: "1.0.0",
		VerdictLine: "v", Op: store.OpAudit, House: true}
}

// testGroupWritersDurable: concurrent paid rows, house rows under keys and free uses are all
// answered, and a second handle (a restarted replica) finds every one of them.
func testGroupWritersDurable(t *testing.T, open Opener) {
	s := open(t)
	k := keyed(t, s)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	lim := store.FreeLimits{PerDay: 1}
	ids := make([]int64, groupCallers)
	each(groupCallers, func(i int) {
		n := strconv.Itoa(i)
		err := again(func() (err error) {
			switch i % 3 {
			case 0:
				e := houseRow(now, 50000)
				e.House, e.PaymentTx, e.PayerWallet = false, "group-tx-"+n, "w"
				ids[i], _, err = k.AppendLedgerOnce(ctx, e, "", now)
			case 1:
				ids[i], _, err = k.AppendLedgerOnce(ctx, houseRow(now, 0), store.NewWriteKey(store.WriteHouse, "group", n), now)
			default:
				var d store.FreeDecision
				d, err = k.TakeFreeOnce(ctx, "caller-"+n, store.NewWriteKey(store.WriteFree, "caller-"+n, n), now, lim)
				if err == nil && (d.Outcome != store.FreeAllowed || d.Used != 1) {
					t.Errorf("free use %d: %+v, want the first use", i, d)
				}
			}
			return err
		})
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	})
	other := keyed(t, open(t))
	seen := map[int64]bool{}
	for i, id := range ids {
		n := strconv.Itoa(i)
		switch i % 3 {
		case 0:
			if got, err := other.FindPayment(ctx, "group-tx-"+n); err != nil || got != id || seen[id] {
				t.Errorf("paid row %d: %d %v, want %d, once", i, got, err, id)
			}
		case 1:
			if r, err := other.FindWrite(ctx, store.NewWriteKey(store.WriteHouse, "group", n), now); err != nil || r.LedgerID != id || seen[id] {
				t.Errorf("house row %d: %+v %v, want %d, once", i, r, err, id)
			}
		default:
			if r, err := other.FindWrite(ctx, store.NewWriteKey(store.WriteFree, "caller-"+n, n), now); err != nil || r.Used != 1 {
				t.Errorf("free use %d: %+v %v", i, r, err)
			}
			continue
		}
		seen[id] = true
	}
	rows, err := s.ListLedger(ctx, 0, 1000)
	if err != nil || len(rows) != len(seen) {
		t.Fatalf("ledger has %d rows (%v), want %d", len(rows), err, len(seen))
	}
}

// testGroupFailingWriteAlone: a write that breaks a constraint (a negative price) fails alone,
// marked NotApplied, with nothing of it written; the writes beside it commit.
func testGroupFailingWriteAlone(t *testing.T, open Opener) {
	s := open(t)
	k := keyed(t, s)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	errs := make([]error, groupCallers)
	each(groupCallers, func(i int) {
		price := int64(0)
		if i%4 == 1 {
			price = -1
		}
		errs[i] = again(func() error {
			_, _, err := k.AppendLedgerOnce(ctx, houseRow(now, price), store.NewWriteKey(store.WriteHouse, "fail", strconv.Itoa(i)), now)
			return err
		})
	})
	good := 0
	for i, err := range errs {
		_, ferr := k.FindWrite(ctx, store.NewWriteKey(store.WriteHouse, "fail", strconv.Itoa(i)), now)
		if i%4 == 1 {
			if !errors.Is(err, store.ErrNotApplied) || !errors.Is(ferr, store.ErrNotFound) {
				t.Errorf("failing write %d: %v (look-up %v), want ErrNotApplied and no key", i, err, ferr)
			}
			continue
		}
		good++
		if err != nil || ferr != nil {
			t.Errorf("write %d beside a failing one: %v (look-up %v), want committed", i, err, ferr)
		}
	}
	if rows, err := s.ListLedger(ctx, 0, 1000); err != nil || len(rows) != good {
		t.Fatalf("ledger has %d rows (%v), want %d", len(rows), err, good)
	}
}

// testGroupCancelledCallerWritesNothing: a caller whose context has ended writes nothing and is
// told NotApplied; callers whose contexts end while they wait are told NotApplied only when
// nothing of theirs was written, and a committed answer is always on the store.
func testGroupCancelledCallerWritesNothing(t *testing.T, open Opener) {
	s := open(t)
	k := keyed(t, s)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	wk := store.NewWriteKey(store.WriteHouse, "gone", "0")
	if _, _, err := k.AppendLedgerOnce(gone, houseRow(now, 0), wk, now); !errors.Is(err, store.ErrNotApplied) {
		t.Fatalf("a caller already gone: %v, want ErrNotApplied", err)
	}
	if _, err := k.TakeFreeOnce(gone, "gone", store.NewWriteKey(store.WriteFree, "gone", "0"), now, store.FreeLimits{PerDay: 1}); !errors.Is(err, store.ErrNotApplied) {
		t.Fatalf("a free use of a caller already gone: %v, want ErrNotApplied", err)
	}
	errs := make([]error, groupCallers)
	each(groupCallers, func(i int) {
		ctx := context.Background()
		if i%2 == 1 { // half the callers leave while the others' writes hold the writer
			c, cancel := context.WithCancel(ctx)
			ctx = c
			time.AfterFunc(time.Duration(i)*50*time.Microsecond, cancel)
		}
		_, _, errs[i] = k.AppendLedgerOnce(ctx, houseRow(now, 0), store.NewWriteKey(store.WriteHouse, "leave", strconv.Itoa(i)), now)
	})
	ctx := context.Background()
	want := 0
	for i, err := range errs {
		_, ferr := k.FindWrite(ctx, store.NewWriteKey(store.WriteHouse, "leave", strconv.Itoa(i)), now)
		switch {
		case err == nil:
			want++
			if ferr != nil {
				t.Errorf("caller %d was answered committed and its key is missing: %v", i, ferr)
			}
		case errors.Is(err, store.ErrNotApplied):
			if !errors.Is(ferr, store.ErrNotFound) {
				t.Errorf("caller %d was told nothing was written and its key is stored: %v", i, ferr)
			}
		case ferr == nil: // left while its group committed: unknown to the caller, and committed
			want++
		}
	}
	if _, err := k.FindWrite(ctx, wk, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the gone caller's key was stored: %v", err)
	}
	if rows, err := s.ListLedger(ctx, 0, 1000); err != nil || len(rows) != want {
		t.Fatalf("ledger has %d rows (%v), want %d", len(rows), err, want)
	}
}
