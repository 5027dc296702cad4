package corpus_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The max-size benchmarks (issues 12 and 28): one export per family at the published caps
// (gen.MaxSizeExport). BenchmarkMaxSize/<family>/ratios interleaves, in every iteration, the floor
// (a bare jsontext.Decoder.ReadToken loop over the body, no values built), json.Unmarshal of the
// body into `any`, the engine's pre-check, the engine's whole audit and the oracle's whole audit,
// so that all share the machine's state and the ratios printed (engine/scan, precheck/scan,
// engine/unmarshal, engine/oracle) are measured in one run. It also reports the engine's
// allocations per record. The other sub-benchmarks time each one alone. Ratios are of medians over
// the iterations.

func maxSizeBodies(b testing.TB) map[string][]byte {
	b.Helper()
	out := map[string][]byte{}
	for _, f := range gen.MaxSizeFamilies {
		out[f] = gen.MaxSizeExport(f)
	}
	return out
}

func BenchmarkMaxSize(b *testing.B) {
	ps, err := rules.Default()
	if err != nil {
		b.Fatal(err)
	}
	bodies := maxSizeBodies(b)
	now := time.Now()
	engine := func(body []byte) {
		if _, ref, err := evaluator.Audit(ps, body, now); err != nil || ref != nil {
			b.Fatal(err, ref)
		}
	}
	precheck := func(body []byte) {
		if _, ref, err := evaluator.Precheck(ps, body, now); err != nil || ref != nil {
			b.Fatal(err, ref)
		}
	}
	oracle := func(body []byte) {
		if _, err := gen.Expect(body); err != nil {
			b.Fatal(err)
		}
	}
	for _, fam := range gen.MaxSizeFamilies {
		b.Run(fam, func(b *testing.B) {
			benchTrio(b, bodies[fam], engines{audit: engine, precheck: precheck, oracle: oracle}, "record", gen.RecordsPerAuditCap)
		})
	}
}

// engines are the three runs benchTrio times against the floor: the engine's whole audit, its
// pre-check and the independent oracle's whole audit.
type engines struct{ audit, precheck, oracle func([]byte) }

// scan is the floor every engine figure is quoted against: one bare pass of jsontext's strict
// tokenizer (duplicate names and UTF-8 checked, as the engine must) over the body, building no
// value. A body it cannot read fails the benchmark.
func scan(b testing.TB, body []byte) {
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

// benchTrio times, on one body, the floor (scan), json.Unmarshal into `any`, the engine's pre-check,
// its whole audit and the oracle's whole audit, each alone, then interleaved in every iteration of
// "ratios", which prints the ratios of their medians and the engine's allocations per unit (n units
// in the body).
func benchTrio(b *testing.B, body []byte, e engines, unit string, n int) {
	unmarshal := func(body []byte) {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
	floor := func(body []byte) { scan(b, body) }
	// other marks the runs that are not the engine's and leave megabytes of garbage (unmarshal,
	// the oracle): in "ratios" their garbage is collected before the next run starts, so that the
	// engine's figures pay for the collector's work on their own garbage only.
	runs := []struct {
		name  string
		run   func([]byte)
		other bool
	}{{"scan", floor, false}, {"unmarshal", unmarshal, true}, {"precheck", e.precheck, false}, {"engine", e.audit, false}, {"oracle", e.oracle, true}}
	for _, one := range runs {
		b.Run(one.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				one.run(body)
			}
		})
	}
	b.Run("ratios", func(b *testing.B) {
		// Each iteration times all five in turn; the ratios are of the medians, so that a burst
		// of other work on the machine during one phase does not decide them. Before this
		// collection, unmarshal's garbage was collected during the pre-check that follows it,
		// which then measured dearer than the whole audit.
		took := make([][]time.Duration, len(runs))
		for i := 0; i < b.N; i++ {
			for j, one := range runs {
				t0 := time.Now()
				one.run(body)
				took[j] = append(took[j], time.Since(t0))
				if one.other {
					b.StopTimer()
					runtime.GC()
					b.StartTimer()
				}
			}
		}
		b.StopTimer()
		allocs := testing.AllocsPerRun(3, func() { e.audit(body) })
		ms, mu, mp, me, mo := median(took[0]), median(took[1]), median(took[2]), median(took[3]), median(took[4])
		b.ReportMetric(float64(ms.Microseconds()), "scan-µs")
		b.ReportMetric(float64(me.Microseconds()), "engine-µs")
		b.ReportMetric(float64(me)/float64(ms), "engine/scan")
		b.ReportMetric(float64(mp)/float64(ms), "precheck/scan")
		b.ReportMetric(float64(me)/float64(mu), "engine/unmarshal")
		b.ReportMetric(float64(me)/float64(mo), "engine/oracle")
		b.ReportMetric(allocs/float64(n), "allocs/"+unit)
	})
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestMaxSizeExports keeps the max-size inputs honest: each is at the caps, audited (not refused),
// has clusters of every class, and the engine and the oracle read it the same way.
func TestMaxSizeExports(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	for fam, body := range maxSizeBodies(t) {
		t.Run(fam, func(t *testing.T) {
			if n := len(body); n > ps.BodyCap() || n < ps.BodyCap()*95/100 {
				t.Errorf("body is %d bytes, want just under the cap %d", n, ps.BodyCap())
			}
			rep, ref, err := evaluator.Audit(ps, body, time.Now())
			if err != nil || ref != nil {
				t.Fatalf("audit: %v %v", err, ref)
			}
			if rep.Records != gen.RecordsPerAuditCap {
				t.Errorf("records = %d, want %d", rep.Records, gen.RecordsPerAuditCap)
			}
			if cl := rep.Factors.CrossScopeClusters.Clusters; cl != nil {
				seen := map[string]int{}
				for _, c := range *cl {
					seen[c.DecidedBy]++
				}
				want := []string{"N4", "N3", "N2", "B1", "B2", "N1"}
				if fam != "letta" {
					want = append(want, "N5", "B5")
				}
				for _, id := range want {
					if seen[id] == 0 {
						t.Errorf("no cluster decided by %s (have %v)", id, seen)
					}
				}
			} else {
				t.Errorf("cross_scope_clusters is %s", rep.Factors.CrossScopeClusters.Status)
			}
			if fam == "zep_graphiti" && (rep.Factors.ScopeConflicts.Conflicts == nil || *rep.Factors.ScopeConflicts.Conflicts == 0) {
				t.Errorf("zep export shows no scope conflicts")
			}
			if diffs := compareWithOracle(t, ps, body); len(diffs) > 0 {
				t.Fatalf("engine and oracle disagree on the max-size %s export:\n%s", fam, renderDiffs(diffs))
			}
		})
	}
}
