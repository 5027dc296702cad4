// Package wholebench holds the measures both local whole-input checks are benchmarked by (the
// whole-store check of evaluator and the whole-log check of evaluator/mutlog): the floor, a bare
// pass of jsontext's strict tokenizer over the same file through the same kind of reader, and one
// benchmark shape at 10⁴, 10⁵ and 10⁶ units that prints whole/scan and the process's peak RSS.
// Only benchmarks import it.
package wholebench

import (
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
)

// Sizes are the unit counts the benchmarks run at: the growth from one to the next shows whether
// the check is linear.
var Sizes = []struct {
	Name string
	N    int
}{{"1e4", 10_000}, {"1e5", 100_000}, {"1e6", 1_000_000}}

// ScanFile is the floor: one bare pass of jsontext's strict tokenizer over the file, read through
// an *os.File as the checks read their parts, building no value.
func ScanFile(tb testing.TB, path string) {
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

// Run benchmarks one check at every size: write(tb, path, n) writes an input of n units, and
// whole(path, n) checks it (failing the benchmark itself on a refusal or error). …/scan and …/whole
// run alone; …/ratio runs both in every iteration and prints whole/scan of the medians, the
// check's ns per unit and the process's peak RSS so far (run one size alone to read it for that
// size).
func Run(b *testing.B, unit string, write func(tb testing.TB, path string, n int), whole func(path string, n int)) {
	for _, size := range Sizes {
		b.Run(size.Name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "input.json")
			write(b, path, size.N)
			b.Run("scan", func(b *testing.B) {
				for b.Loop() {
					ScanFile(b, path)
				}
			})
			b.Run("whole", func(b *testing.B) {
				for b.Loop() {
					whole(path, size.N)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size.N), "ns/"+unit)
			})
			b.Run("ratio", func(b *testing.B) {
				var ts, tw []time.Duration
				for b.Loop() {
					t0 := time.Now()
					ScanFile(b, path)
					t1 := time.Now()
					whole(path, size.N)
					ts, tw = append(ts, t1.Sub(t0)), append(tw, time.Since(t1))
				}
				ms, mw := median(ts), median(tw)
				b.ReportMetric(float64(mw)/float64(ms), "whole/scan")
				b.ReportMetric(float64(mw.Nanoseconds())/float64(size.N), "ns/"+unit)
				if hwm := PeakRSS(); hwm > 0 {
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

// PeakRSS is the process's peak resident set (VmHWM, Linux), in bytes; 0 when unknown.
func PeakRSS() int64 {
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
