package mutlog_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/wholebench"
	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
)

// writeLog streams a log of n events to w, its header first: the max-size log's events (mode
// terminal) repeated with their seqs moved past the previous copy's, then its snapshot. Nothing
// of size n is held in memory, so that the benchmark's peak resident set is the audit's.
func writeLog(tb testing.TB, w io.Writer, n int) error {
	g := newBigLog(tb, "terminal", 1000)
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(g.header)
	bw.WriteString(`"events":[`)
	// Every event of the template: its bytes before its seq, its seq, its bytes after.
	heads, tails := make([][]byte, len(g.events)), make([][]byte, len(g.events))
	seqs := make([]int64, len(g.events))
	step := int64(0)
	for i, e := range g.events {
		at := bytes.Index(e, []byte(`"seq":`)) + len(`"seq":`)
		end := at
		for end < len(e) && e[end] >= '0' && e[end] <= '9' {
			end++
		}
		heads[i], tails[i] = e[:at], e[end:]
		seqs[i], _ = strconv.ParseInt(string(e[at:end]), 10, 64)
		step = max(step, seqs[i])
	}
	var num []byte
	for i := range n {
		if i > 0 {
			bw.WriteByte(',')
		}
		j := i % len(heads)
		bw.Write(heads[j])
		num = strconv.AppendInt(num[:0], seqs[j]+int64(i/len(heads))*step, 10)
		bw.Write(num)
		bw.Write(tails[j])
	}
	bw.WriteString(`],"snapshot":`)
	bw.Write(g.snap)
	bw.WriteByte('}')
	return bw.Flush()
}

func writeLogFile(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := writeLog(tb, f, n); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestWriteWholeLog writes a log of SCOPE_HYGIENE_WHOLE_LOG_N events (default 10⁶) to the path in
// SCOPE_HYGIENE_WHOLE_LOG_OUT, for measuring the command's peak resident set:
//
//	SCOPE_HYGIENE_WHOLE_LOG_OUT=/tmp/log1e6.json go test ./evaluator/mutlog -run TestWriteWholeLog
//	go build -o /tmp/rules ./tools/rules
//	/usr/bin/time -v /tmp/rules audit --whole --criteria criteria/forget-envelope.yaml /tmp/log1e6.json
func TestWriteWholeLog(t *testing.T) {
	out := os.Getenv("SCOPE_HYGIENE_WHOLE_LOG_OUT")
	if out == "" {
		t.Skip("SCOPE_HYGIENE_WHOLE_LOG_OUT not set")
	}
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("SCOPE_HYGIENE_WHOLE_LOG_N")); err == nil && v > 0 {
		n = v
	}
	writeLogFile(t, out, n)
}

func logFile(path string) mutlog.PartSource {
	return func() (io.ReadCloser, error) { return os.Open(path) }
}

// BenchmarkWholeLog times the whole-log audit of one file of 10⁴, 10⁵ and 10⁶ events against the
// floor; /ratio times both interleaved and prints whole/scan and the process's peak resident set.
func BenchmarkWholeLog(b *testing.B) {
	ms, _ := setup(b)
	wholebench.Run(b, "event", writeLogFile, func(path string, n int) {
		if res, ref, err := mutlog.AuditWhole(ms, []mutlog.PartSource{logFile(path)}, wholeEnd); err != nil || ref != nil || res.Report.Events != n {
			b.Fatalf("refusal %+v, error %v", ref, err)
		}
	})
}

// cpuTime is the process's CPU time so far, user and system: the GC's work on other threads
// included, so that a step's figure is what it costs the machine.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWholeLogCPU is /ratio in CPU time rather than wall time, which a machine shared with
// other work inflates unevenly: every iteration scans the file, then audits it, and cpu-whole/scan
// is the ratio of the two sums of process CPU time.
func BenchmarkWholeLogCPU(b *testing.B) {
	ms, _ := setup(b)
	for _, size := range wholebench.Sizes {
		b.Run(size.Name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "input.json")
			writeLogFile(b, path, size.N)
			var scan, whole time.Duration
			for b.Loop() {
				t0 := cpuTime(b)
				wholebench.ScanFile(b, path)
				t1 := cpuTime(b)
				if res, ref, err := mutlog.AuditWhole(ms, []mutlog.PartSource{logFile(path)}, wholeEnd); err != nil || ref != nil || res.Report.Events != size.N {
					b.Fatalf("refusal %+v, error %v", ref, err)
				}
				t2 := cpuTime(b)
				scan, whole = scan+t1-t0, whole+t2-t1
			}
			b.ReportMetric(float64(whole)/float64(scan), "cpu-whole/scan")
			b.ReportMetric(float64(whole.Nanoseconds())/float64(b.N)/float64(size.N), "cpu-ns/event")
		})
	}
}
