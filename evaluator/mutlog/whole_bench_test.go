package mutlog_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"testing"

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
