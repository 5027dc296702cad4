package mutlog_test

import (
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/pooltest"
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
	pooltest.ResultsOutlive(t, 60, 20, func(i int) (any, bool) {
		body, err := forget.RandomLog(7, i)
		if err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			body = forget.MaxSizeLog(forget.MaxSizeModes[i/10%len(forget.MaxSizeModes)])
		}
		if i%2 == 0 {
			rep, ref, err := mutlog.Audit(ms, body, now)
			return rep, err == nil && ref == nil
		}
		pre, ref, err := mutlog.Precheck(ms, body, now)
		return pre, err == nil && ref == nil
	})
}
