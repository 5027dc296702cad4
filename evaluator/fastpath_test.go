package evaluator_test

import (
	"encoding/json"
	"math/rand"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// nopObserver routes every evaluation through the author's individual programs (the reference
// path used by coverage and explain) instead of the fused, memoized fast path.
type nopObserver struct{}

func (nopObserver) Observe(*rules.Program, bool, []rules.SubValue) {}

// TestFastPathEqualsIndividualPrograms: the fused, memoized programs decide exactly what the
// criteria's individual programs decide, on random exports and on their repeats.
func TestFastPathEqualsIndividualPrograms(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewSource(1130))
	n := 800
	if testing.Short() {
		n = 100
	}
	for i := 0; i < n; i++ {
		body := gen.RandomExport(rng)
		fast, ref1, err1 := evaluator.Audit(ps, body, now)
		slow, ref2, err2 := evaluator.AuditWith(ps, body, now, evaluator.Options{Observer: nopObserver{}})
		if err1 != nil || err2 != nil {
			t.Fatalf("export %d: %v / %v", i, err1, err2)
		}
		if d := cmp.Diff(jsonOf(t, slow, ref2), jsonOf(t, fast, ref1)); d != "" {
			t.Fatalf("export %d: fast path differs from the individual programs (-individual +fast):\n%s\n%s", i, d, body)
		}
	}
}

func jsonOf(t *testing.T, vs ...any) string {
	t.Helper()
	b, err := json.Marshal(vs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
