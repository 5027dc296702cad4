package evaluator_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/pooltest"
	"github.com/scopehygiene/scope-hygiene/gen"
)

// TestResultsOutliveTheirBuffers: an export's buffers are reused by the next export once its
// audit ends, so nothing in a result may point into them. A report and a pre-check result are
// marshalled, many other exports (escaped strings included) are audited through the same pool,
// and the results must marshal to the same bytes.
func TestResultsOutliveTheirBuffers(t *testing.T) {
	ps := shipped(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := rand.New(rand.NewSource(12))
	pooltest.ResultsOutlive(t, 60, 20, func(i int) (any, bool) {
		body := gen.RandomExport(r)
		if i%10 == 0 {
			body = gen.MaxSizeExport(gen.MaxSizeFamilies[i/10%len(gen.MaxSizeFamilies)])
		}
		if i%2 == 0 {
			rep, ref, err := evaluator.Audit(ps, body, now)
			return rep, err == nil && ref == nil
		}
		pre, ref, err := evaluator.Precheck(ps, body, now)
		return pre, err == nil && ref == nil
	})
}
