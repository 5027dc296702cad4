package corpus_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The benchmarks compare the engine (CEL programs) with the oracle (plain Go) on the same inputs,
// decode + evaluate, in one run: quote the ratio of the two, not absolute times.

func loadBenchCorpus(b *testing.B) [][]byte {
	b.Helper()
	c, err := corpus.Load(os.DirFS("."))
	if err != nil {
		b.Skipf("corpus: %v", err)
	}
	var bodies [][]byte
	for i := range c.Cases {
		body, err := c.Cases[i].RequestBody()
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	return bodies
}

// bigExport is a 1,000-record Mem0 export with clusters, markers, pointers and duplicates.
func bigExport() []byte {
	recs := make([]map[string]any, 1000)
	for i := range recs {
		r := map[string]any{
			"id":           fmt.Sprintf("r%04d", i),
			"content_text": fmt.Sprintf("fact %d", i%97),
			"user_id":      fmt.Sprintf("u%d", i%13),
			"source":       fmt.Sprintf("s%d", i%3),
		}
		switch i % 10 {
		case 0:
			r["shared"] = true
		case 1:
			r["metadata"] = map[string]any{"sharing": "global"}
		case 2:
			r["origin_claim_id"] = fmt.Sprintf("r%04d", (i+97)%1000)
		case 3:
			r["replaced_by"] = "r0000"
		case 4:
			r["attributed_scope"] = fmt.Sprintf("u%d", i%7)
		case 5:
			r["user_id"] = "global"
		}
		recs[i] = r
	}
	b, _ := json.Marshal(map[string]any{"family": "mem0", "form": "full_text", "records": recs,
		"manifest": map[string]any{"global_scopes": []string{"u1"}}})
	return b
}

func BenchmarkCorpusEngine(b *testing.B) {
	ps, err := rules.Default()
	if err != nil {
		b.Fatal(err)
	}
	bodies := loadBenchCorpus(b)
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, body := range bodies {
			if _, _, err := evaluator.Audit(ps, body, now); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkCorpusOracle(b *testing.B) {
	bodies := loadBenchCorpus(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, body := range bodies {
			if _, err := gen.Expect(body); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkExport1000Engine(b *testing.B) {
	ps, err := rules.Default()
	if err != nil {
		b.Fatal(err)
	}
	body := bigExport()
	now := time.Now()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ref, err := evaluator.Audit(ps, body, now); err != nil || ref != nil {
			b.Fatal(err, ref)
		}
	}
}

func BenchmarkExport1000Oracle(b *testing.B) {
	body := bigExport()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := gen.Expect(body); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBigExportAgrees keeps the benchmark input honest: both implementations read it the same way.
func TestBigExportAgrees(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	if diffs := compareWithOracle(t, ps, bigExport()); len(diffs) > 0 {
		t.Fatalf("engine and oracle disagree on the benchmark export:\n%s", renderDiffs(diffs))
	}
}
