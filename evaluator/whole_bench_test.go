package evaluator_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/wholebench"
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

// BenchmarkWholeStore times the local whole-store check on hash-only exports of 10⁴, 10⁵ and
// 10⁶ records (written to a temporary directory, removed after) against the floor, a bare scan
// of the same file: …/scan and …/whole alone, …/ratio both in every iteration, printing
// whole/scan of the medians, the check's ns per record, and the process's peak RSS so far
// (VmHWM: run one size alone to read it for that size).
//
//	go test ./evaluator -run '^$' -bench 'WholeStore' -benchtime 1x
func BenchmarkWholeStore(b *testing.B) {
	ps := shipped(b)
	wholebench.Run(b, "record", writeStoreFile, func(path string, n int) {
		if w, ref, err := evaluator.AuditWhole(ps, []evaluator.WholePart{filePart(path)}, now); err != nil || ref != nil || w.Report.Records != n {
			b.Fatalf("refusal %+v, error %v", ref, err)
		}
	})
}

// BenchmarkWholeStoreCPU is …/ratio in the process's CPU time (cpuTime: the GC's threads included) rather than wall time, which a machine shared
// with other work inflates unevenly: every iteration scans the file, then checks it, and
// cpu-whole/scan is the ratio of the two sums of process CPU time.
//
//	go test ./evaluator -run '^$' -bench 'WholeStoreCPU' -benchtime 3x
func BenchmarkWholeStoreCPU(b *testing.B) {
	ps := shipped(b)
	for _, size := range wholebench.Sizes {
		b.Run(size.Name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "store.json")
			writeStoreFile(b, path, size.N)
			var scan, whole time.Duration
			minScan, minWhole := time.Duration(1<<62), time.Duration(1<<62)
			for b.Loop() {
				t0 := cpuTime()
				wholebench.ScanFile(b, path)
				t1 := cpuTime()
				if w, ref, err := evaluator.AuditWhole(ps, []evaluator.WholePart{filePart(path)}, now); err != nil || ref != nil || w.Report.Records != size.N {
					b.Fatalf("refusal %+v, error %v", ref, err)
				}
				t2 := cpuTime()
				scan, whole = scan+t1-t0, whole+t2-t1
				minScan, minWhole = min(minScan, t1-t0), min(minWhole, t2-t1)
			}
			b.ReportMetric(float64(whole)/float64(scan), "cpu-whole/scan")
			b.ReportMetric(float64(minWhole)/float64(minScan), "min-whole/min-scan")
			b.ReportMetric(float64(whole.Nanoseconds())/float64(b.N)/float64(size.N), "cpu-ns/record")
			if hwm := wholebench.PeakRSS(); hwm > 0 {
				b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MB")
			}
		})
	}
}

// BenchmarkWholeStoreFastRead holds the check with its fast read of a batch (whole_lex.go) to the
// check with the tree path alone, in one process: every iteration runs the tree path, then the
// fast read, on the same file, and fast/tree is the ratio of their sums of process CPU time
// (min-fast/min-tree that of their fastest iterations).
//
//	go test ./evaluator -run '^$' -bench 'WholeStoreFastRead/1e5' -benchtime 12x
func BenchmarkWholeStoreFastRead(b *testing.B) {
	ps := shipped(b)
	defer evaluator.WholeTreeOnly(false)
	for _, size := range wholebench.Sizes {
		b.Run(size.Name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "store.json")
			writeStoreFile(b, path, size.N)
			var sum, least [2]time.Duration
			least[0], least[1] = 1<<62, 1<<62
			for b.Loop() {
				for k, treeOnly := range []bool{true, false} {
					evaluator.WholeTreeOnly(treeOnly)
					t0 := cpuTime()
					if w, ref, err := evaluator.AuditWhole(ps, []evaluator.WholePart{filePart(path)}, now); err != nil || ref != nil || w.Report.Records != size.N {
						b.Fatalf("refusal %+v, error %v", ref, err)
					}
					d := cpuTime() - t0
					sum[k], least[k] = sum[k]+d, min(least[k], d)
				}
			}
			b.ReportMetric(float64(sum[1])/float64(sum[0]), "fast/tree")
			b.ReportMetric(float64(least[1])/float64(least[0]), "min-fast/min-tree")
		})
	}
}
