package corpus_test

import (
	"encoding/json"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// oracle returns the independent oracle's expectation for body as generic JSON.
func oracle(t testing.TB, body []byte) map[string]any {
	t.Helper()
	exp, err := gen.Expect(body)
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	b, err := json.Marshal(exp)
	if err != nil {
		t.Fatalf("oracle result: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("oracle result: %v", err)
	}
	return m
}

func compareWithOracle(t testing.TB, ps *rules.ProgramSet, body []byte) []corpus.Diff {
	t.Helper()
	got, err := corpus.Outcome(ps, body, nil)
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	return corpus.Compare(oracle(t, body), got)
}

// TestDifferentialSeeded runs a few thousand random valid exports through the engine and the
// oracle (two independent readings of the criteria) and requires identical outcomes. A
// disagreement found here becomes a regression case in the corpus.
func TestDifferentialSeeded(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	n := differentialCount(t, 3000)
	rng := rand.New(rand.NewSource(20261130))
	for i := 0; i < n; i++ {
		body := gen.RandomExport(rng)
		if diffs := compareWithOracle(t, ps, body); len(diffs) > 0 {
			t.Fatalf("export %d: engine and oracle disagree:\n%s\nbody: %s", i, renderDiffs(diffs), body)
		}
	}
}

// differentialCount is how many random inputs a seeded differential test runs: def, a tenth of it
// under -short, or SCOPE_HYGIENE_DIFFERENTIAL_N when set (an engine change is re-checked on
// 10,000 or more).
func differentialCount(t *testing.T, def int) int {
	if v := os.Getenv("SCOPE_HYGIENE_DIFFERENTIAL_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SCOPE_HYGIENE_DIFFERENTIAL_N=%q is not a positive count", v)
		}
		return n
	}
	if testing.Short() {
		return def / 10
	}
	return def
}

// FuzzDifferential: the fuzzer picks the seed of a random valid export; engine and oracle must agree.
func FuzzDifferential(f *testing.F) {
	ps, err := rules.Default()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []uint64{1, 2, 3, 42, 20261130} {
		f.Add(s, uint64(0))
	}
	f.Fuzz(func(t *testing.T, seed, stream uint64) {
		body := gen.RandomExport(rand.New(rand.NewSource(int64(seed ^ stream<<32))))
		if diffs := compareWithOracle(t, ps, body); len(diffs) > 0 {
			t.Fatalf("engine and oracle disagree:\n%s\nbody: %s", renderDiffs(diffs), body)
		}
	})
}

// FuzzDifferentialBytes: arbitrary bytes (mostly refusals) must get the same outcome from both.
func FuzzDifferentialBytes(f *testing.F) {
	ps, err := rules.Default()
	if err != nil {
		f.Fatal(err)
	}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 8; i++ {
		f.Add(gen.RandomExport(rng))
	}
	f.Add([]byte(`{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if diffs := compareWithOracle(t, ps, body); len(diffs) > 0 {
			t.Fatalf("engine and oracle disagree:\n%s\nbody: %q", renderDiffs(diffs), body)
		}
	})
}

func renderDiffs(ds []corpus.Diff) string {
	s := ""
	for _, d := range ds {
		s += "  " + d.Path + "\n    oracle: " + d.Expected + "\n    engine: " + d.Got + "\n"
	}
	return s
}
