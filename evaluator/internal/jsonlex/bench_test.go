package jsonlex

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/gen/forget"
)

// The readers against the floor the engines are measured by (issue 28): a bare
// jsontext.Decoder.ReadToken loop over the same bytes. BenchmarkReaders/<body>/lex is a Reader pass
// that reads and checks the whole body and builds nothing (Skip), …/walk reads every value through
// the calls an engine makes (Peek, Member, More, Str, Num, Bool, Null), …/tree is jsontree.Decode
// of it, and …/ratios runs the four in turn in every iteration and prints lex/scan, walk/scan and
// tree/scan of the medians, so that the ratios come from one run on a shared machine.

// benchDepth is the depth cap of both rule sets (json_depth in criteria.yaml and
// criteria/forget-envelope.yaml).
const benchDepth = 64

// maxSizeBodies are the bodies the corpus max-size benchmarks audit: one export per family and one
// mutation log per forget mode, at the published caps.
func maxSizeBodies() []struct {
	name string
	body []byte
} {
	var out []struct {
		name string
		body []byte
	}
	for _, f := range gen.MaxSizeFamilies {
		out = append(out, struct {
			name string
			body []byte
		}{f, gen.MaxSizeExport(f)})
	}
	for _, m := range forget.MaxSizeModes {
		out = append(out, struct {
			name string
			body []byte
		}{"log_" + m, forget.MaxSizeLog(m)})
	}
	return out
}

func benchScan(b *testing.B, body []byte) {
	d := jsontext.NewDecoder(bytes.NewReader(body))
	for {
		if _, err := d.ReadToken(); err != nil {
			if !errors.Is(err, io.EOF) {
				b.Fatal(err)
			}
			return
		}
	}
}

func benchLex(b *testing.B, r *Reader, body []byte) {
	r.Reset(body, benchDepth)
	r.Skip()
	if !r.Done() {
		b.Fatal("reader refused a max-size body")
	}
}

// walk reads the value at r as an engine does, value by value, keeping nothing.
func walk(r *Reader) {
	switch r.Peek() {
	case Null:
		r.Null()
	case Bool:
		r.Bool()
	case String:
		r.Str()
	case Number:
		r.Num()
	case Array:
		for r.Array(); r.More(); {
			walk(r)
		}
	case Object:
		for r.Object(); ; {
			if _, ok := r.Member(); !ok {
				break
			}
			walk(r)
		}
	default:
		r.fail()
	}
}

func benchWalk(b *testing.B, r *Reader, body []byte) {
	r.Reset(body, benchDepth)
	walk(r)
	if !r.Done() {
		b.Fatal("reader refused a max-size body")
	}
}

func benchTree(b *testing.B, s *jsontree.Slabs, body []byte) {
	if _, err := jsontree.Decode(body, jsontree.Options{MaxDepth: benchDepth, Owned: true}, s); err != nil {
		b.Fatal(err)
	}
	s.Reset()
}

func BenchmarkReaders(b *testing.B) {
	for _, in := range maxSizeBodies() {
		b.Run(in.name, func(b *testing.B) {
			var r Reader
			var s jsontree.Slabs
			runs := []struct {
				name string
				run  func()
			}{
				{"scan", func() { benchScan(b, in.body) }},
				{"lex", func() { benchLex(b, &r, in.body) }},
				{"walk", func() { benchWalk(b, &r, in.body) }},
				{"tree", func() { benchTree(b, &s, in.body) }},
			}
			for _, one := range runs {
				b.Run(one.name, func(b *testing.B) {
					b.SetBytes(int64(len(in.body)))
					b.ReportAllocs()
					for b.Loop() {
						one.run()
					}
				})
			}
			b.Run("ratios", func(b *testing.B) {
				took := make([][]time.Duration, len(runs))
				for b.Loop() {
					for j, one := range runs {
						t0 := time.Now()
						one.run()
						took[j] = append(took[j], time.Since(t0))
					}
				}
				ms, ml, mw, mt := median(took[0]), median(took[1]), median(took[2]), median(took[3])
				b.ReportMetric(float64(ms.Microseconds()), "scan-µs")
				b.ReportMetric(float64(ml)/float64(ms), "lex/scan")
				b.ReportMetric(float64(mw)/float64(ms), "walk/scan")
				b.ReportMetric(float64(mt)/float64(ms), "tree/scan")
			})
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
