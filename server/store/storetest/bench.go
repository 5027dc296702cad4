package storetest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// BenchCallers are the caller counts the write benchmarks run at (issue 28 measures 1, 8 and 32).
var BenchCallers = []int{1, 8, 32}

// Bench times the request path's durable writes at each of BenchCallers concurrent callers: a
// paid audit's ledger row (AppendLedgerOnce without a key, its payment transaction the ledger's
// own key) and a house audit's row under a write key. open returns a fresh store for one
// sub-benchmark. Each reports writes/s and ms per write (the mean time a caller waits for its
// durable answer).
func Bench(b *testing.B, open func(b *testing.B) store.Store) {
	kinds := []struct {
		name  string
		write func(ctx context.Context, k store.Keyed, i int64, now time.Time) error
	}{
		{"AppendLedger", func(ctx context.Context, k store.Keyed, i int64, now time.Time) error {
			e := store.LedgerEntry{PayerWallet: "w", Timestamp: now, Day: store.Day(now), PriceUSDCUnits: 50000,
				PaymentTx: "bench-tx-" + strconv.FormatInt(i, 10), CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit}
			_, _, err := k.AppendLedgerOnce(ctx, e, "", now)
			return err
		}},
		{"HouseOnce", func(ctx context.Context, k store.Keyed, i int64, now time.Time) error {
			e := store.LedgerEntry{Timestamp: now, Day: store.Day(now), CriteriaVersion: "1.0.0", VerdictLine: "v", Op: store.OpAudit, House: true}
			_, _, err := k.AppendLedgerOnce(ctx, e, store.NewWriteKey(store.WriteHouse, "bench", strconv.FormatInt(i, 10)), now)
			return err
		}},
	}
	for _, kind := range kinds {
		for _, c := range BenchCallers {
			b.Run(fmt.Sprintf("%s/c=%d", kind.name, c), func(b *testing.B) {
				s := open(b)
				k, ok := s.(store.Keyed)
				if !ok {
					b.Fatal("backend has no idempotent writes (store.Keyed)")
				}
				benchWrites(b, c, func(ctx context.Context, i int64) error { return kind.write(ctx, k, i, time.Now()) })
			})
		}
	}
}

// benchWrites runs b.N writes from c goroutines and reports writes/s and ms/write of the writes
// answered, and how many failed (a call that ran out its bound on a loaded machine is counted,
// not fatal, so that the other levels still run).
func benchWrites(b *testing.B, c int, write func(ctx context.Context, i int64) error) {
	ctx := context.Background()
	var next, waited, failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				t := time.Now()
				if err := write(ctx, i); err != nil {
					if failed.Add(1) == 1 {
						b.Logf("first failed write: %v", err)
					}
					continue
				}
				waited.Add(int64(time.Since(t)))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	ok := float64(int64(b.N) - failed.Load())
	b.ReportMetric(ok/el.Seconds(), "writes/s")
	b.ReportMetric(float64(waited.Load())/max(ok, 1)/1e6, "ms/write")
	b.ReportMetric(float64(failed.Load()), "failed")
	b.ReportMetric(0, "ns/op")
}
