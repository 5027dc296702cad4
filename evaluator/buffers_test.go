package evaluator_test

import (
	"encoding/json"
	"math/rand"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
)

// TestResultsOutliveTheirBuffers: an export's buffers are reused by the next export once its
// audit ends, so nothing in a result may point into them. A report and a pre-check result are
// marshalled, many other exports (escaped strings included) are audited through the same pool,
// and the results must marshal to the same bytes.
func TestResultsOutliveTheirBuffers(t *testing.T) {
	ps := shipped(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type kept struct {
		v    any
		json []byte
	}
	var keep []kept
	r := rand.New(rand.NewSource(12))
	for i := 0; i < 60; i++ {
		body := gen.RandomExport(r)
		if i%10 == 0 {
			body = gen.MaxSizeExport(gen.MaxSizeFamilies[i/10%len(gen.MaxSizeFamilies)])
		}
		var v any
		if i%2 == 0 {
			rep, ref, err := evaluator.Audit(ps, body, now)
			if err != nil || ref != nil {
				continue
			}
			v = rep
		} else {
			pre, ref, err := evaluator.Precheck(ps, body, now)
			if err != nil || ref != nil {
				continue
			}
			v = pre
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		keep = append(keep, kept{v, b})
	}
	if len(keep) < 20 {
		t.Fatalf("only %d results kept", len(keep))
	}
	for i, k := range keep {
		b, _ := json.Marshal(k.v)
		if string(b) != string(k.json) {
			t.Fatalf("result %d changed after later audits reused the buffers", i)
		}
	}
}
