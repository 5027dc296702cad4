package evaluator_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/evaluator"
)

// writeHashOnlyStore writes a deterministic hash-only Mem0 export of n records (about 250 bytes
// each) to w: a thousand users, each with its agent and run; every 50th record repeats the
// content of a record 25 earlier in another user's scope (a cross-scope cluster), every 101st
// that of the record a thousand earlier in the same scope (a duplicate).
func writeHashOnlyStore(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(`{"family":"mem0","form":"hash_only","manifest":{"declared_scope_keys":["user_id","agent_id","run_id"]},"records":[`)
	var rec []byte
	for i := range n {
		c := i
		switch {
		case i >= 1000 && i%101 == 0:
			c = i - 1000
		case i >= 25 && i%50 == 0:
			c = i - 25
		}
		u := i % 1000
		sum := sha256.Sum256([]byte("memory " + strconv.Itoa(c)))
		rec = rec[:0]
		if i > 0 {
			rec = append(rec, ',')
		}
		rec = append(rec, `{"id":"mem-`...)
		rec = strconv.AppendInt(rec, int64(i), 10)
		rec = append(rec, `","content_hash":"`...)
		rec = hex.AppendEncode(rec, sum[:])
		rec = append(rec, `","user_id":"user-`...)
		rec = strconv.AppendInt(rec, int64(u), 10)
		rec = append(rec, `","agent_id":"agent-`...)
		rec = strconv.AppendInt(rec, int64(u%7), 10)
		rec = append(rec, `","run_id":"run-`...)
		rec = strconv.AppendInt(rec, int64(u), 10)
		rec = append(rec, `","source":"import-batch-`...)
		rec = strconv.AppendInt(rec, int64(i/5000), 10)
		rec = append(rec, `","metadata":{"shared":false},"record_class":"memory","state":"active"}`...)
		bw.Write(rec)
	}
	bw.WriteString("]}")
	return bw.Flush()
}

// writeStoreFile writes writeHashOnlyStore's export of n records to path.
func writeStoreFile(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := writeHashOnlyStore(f, n); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestWriteWholeStore writes the benchmark's export of SCOPE_HYGIENE_WHOLE_STORE_N records
// (default 10⁶) to SCOPE_HYGIENE_WHOLE_STORE_OUT, to measure the command's peak memory on it:
//
//	SCOPE_HYGIENE_WHOLE_STORE_OUT=/tmp/ws/store.json go test ./evaluator -run TestWriteWholeStore
//	/usr/bin/time -v rules audit --whole /tmp/ws/store.json
//
// It is skipped without the variable.
func TestWriteWholeStore(t *testing.T) {
	out := os.Getenv("SCOPE_HYGIENE_WHOLE_STORE_OUT")
	if out == "" {
		t.Skip("SCOPE_HYGIENE_WHOLE_STORE_OUT not set")
	}
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("SCOPE_HYGIENE_WHOLE_STORE_N")); err == nil && v > 0 {
		n = v
	}
	writeStoreFile(t, out, n)
}

// TestWholeStoreExport: the benchmark's export is audited, with the clusters and duplicates it
// was built to hold.
func TestWholeStoreExport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.json")
	writeStoreFile(t, path, 5000)
	w, ref, err := evaluator.AuditWhole(shipped(t), []evaluator.WholePart{filePart(path)}, now)
	if err != nil || ref != nil {
		t.Fatalf("refusal %+v, error %v", ref, err)
	}
	f := w.Report.Factors
	if w.Report.Records != 5000 || iv(f.CrossScopeClusters.Undeclared) == 0 || iv(f.Duplicates.Excess) == 0 {
		t.Fatalf("records %d, undeclared %v, excess %v", w.Report.Records, deref(f.CrossScopeClusters.Undeclared), deref(f.Duplicates.Excess))
	}
}

func filePart(path string) evaluator.WholePart {
	return evaluator.WholePart{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// scanFile is the floor: one bare pass of jsontext's strict tokenizer over the file, read through
// the same kind of reader the whole-store check reads (an *os.File), building no value.
func scanFile(tb testing.TB, path string) {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	d := jsontext.NewDecoder(f)
	for {
		if _, err := d.ReadToken(); err != nil {
			if !errors.Is(err, io.EOF) {
				tb.Fatal(err)
			}
			return
		}
	}
}

// BenchmarkWholeStore times the local whole-store check on hash-only exports of 10⁴, 10⁵ and
// 10⁶ records (written to a temporary directory, removed after) against the floor, a bare scan
// of the same file: …/scan and …/whole alone, …/ratio both in every iteration, printing
// whole/scan of the medians, the check's ns per record, and the process's peak RSS so far
// (VmHWM: run one size alone to read it for that size).
//
//	go test ./evaluator -run '^$' -bench 'WholeStore' -benchtime 1x
func BenchmarkWholeStore(b *testing.B) {
	ps := shipped(b)
	for _, size := range []struct {
		name string
		n    int
	}{{"1e4", 10_000}, {"1e5", 100_000}, {"1e6", 1_000_000}} {
		b.Run(size.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "store.json")
			writeStoreFile(b, path, size.n)
			parts := []evaluator.WholePart{filePart(path)}
			whole := func() {
				if _, ref, err := evaluator.AuditWhole(ps, parts, now); err != nil || ref != nil {
					b.Fatalf("refusal %+v, error %v", ref, err)
				}
			}
			b.Run("scan", func(b *testing.B) {
				for b.Loop() {
					scanFile(b, path)
				}
			})
			b.Run("whole", func(b *testing.B) {
				for b.Loop() {
					whole()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size.n), "ns/record")
			})
			b.Run("ratio", func(b *testing.B) {
				var ts, tw []time.Duration
				for b.Loop() {
					t0 := time.Now()
					scanFile(b, path)
					t1 := time.Now()
					whole()
					ts, tw = append(ts, t1.Sub(t0)), append(tw, time.Since(t1))
				}
				ms, mw := median(ts), median(tw)
				b.ReportMetric(float64(mw)/float64(ms), "whole/scan")
				b.ReportMetric(float64(mw.Nanoseconds())/float64(size.n), "ns/record")
				if hwm := peakRSS(); hwm > 0 {
					b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MB")
				}
			})
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// peakRSS is the process's peak resident set (VmHWM, Linux), in bytes; 0 when unknown.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
