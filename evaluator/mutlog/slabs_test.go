package mutlog_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/gen/forget"
)

// TestResultsOutliveTheirSlabs: a log's value-tree slabs are reused by the next log once it has
// been read, so nothing in a result may point into them. Reports and pre-check results are
// marshalled, many other logs (max-size ones included) are audited through the same pool, and the
// results must marshal to the same bytes.
func TestResultsOutliveTheirSlabs(t *testing.T) {
	ms, _ := setup(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	type kept struct {
		v    any
		json []byte
	}
	var keep []kept
	for i := 0; i < 60; i++ {
		body, err := forget.RandomLog(7, i)
		if err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			body = forget.MaxSizeLog(forget.MaxSizeModes[i/10%len(forget.MaxSizeModes)])
		}
		var v any
		if i%2 == 0 {
			rep, ref, err := mutlog.Audit(ms, body, now)
			if err != nil || ref != nil {
				continue
			}
			v = rep
		} else {
			pre, ref, err := mutlog.Precheck(ms, body, now)
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
			t.Fatalf("result %d changed after later logs reused the slabs", i)
		}
	}
}
