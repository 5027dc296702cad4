package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// serialDB is the write path before group commit: one BEGIN IMMEDIATE ... COMMIT, one sync, per
// write (kept here only to measure the group against it).
type serialDB struct{ s *Store }

func (d serialDB) BeginWrite(ctx context.Context, _ string) (store.WriteTx, error) {
	return writes(d).BeginGroup(ctx)
}

func (d serialDB) AppendLedger(ctx context.Context, e store.LedgerEntry) (int64, error) {
	id, err := appendLedger(ctx, d.s.appendLedger, d.s.db, e)
	return id, unwritten(err)
}

// BenchmarkGroupVsSerial interleaves rounds of house writes through the group commit and
// through one transaction per write, on one database, and reports the ratio of their rates.
func BenchmarkGroupVsSerial(b *testing.B) {
	ctx := context.Background()
	for _, c := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			s, err := Open(ctx, filepath.Join(b.TempDir(), "db.sqlite"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var seq atomic.Int64
			round := func(w store.Writer, n int) time.Duration {
				var wg sync.WaitGroup
				var left atomic.Int64
				left.Store(int64(n))
				t := time.Now()
				for range c {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for left.Add(-1) >= 0 {
							now := time.Now()
							e := store.LedgerEntry{Timestamp: now, Day: store.Day(now), CriteriaVersion: "1", VerdictLine: "v", Op: store.OpAudit, House: true}
							wk := store.NewWriteKey(store.WriteHouse, "b", strconv.FormatInt(seq.Add(1), 10))
							if _, _, err := store.AppendLedgerOnce(ctx, w, e, wk, now); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				return time.Since(t)
			}
			const n = 100
			var serial, group time.Duration
			for range b.N {
				serial += round(store.Serial{DB: serialDB{s}}, n)
				group += round(s.group, n)
			}
			b.ReportMetric(float64(n*b.N)/serial.Seconds(), "serial-writes/s")
			b.ReportMetric(float64(n*b.N)/group.Seconds(), "group-writes/s")
			b.ReportMetric(serial.Seconds()/group.Seconds(), "group/serial")
			b.ReportMetric(0, "ns/op")
		})
	}
}
