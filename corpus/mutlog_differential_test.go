package corpus_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/gen/forget"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// TestForgetEnvelopeDifferentialSeeded runs random mutation logs, far more than the pinned corpus
// holds, through the engine and through the independent oracle (gen/forget, written from the
// criteria text alone) and requires identical outcomes, field by field. A disagreement found here
// becomes a corpus case once the criteria text says which side is right.
func TestForgetEnvelopeDifferentialSeeded(t *testing.T) {
	ms := loadForgetEnvelope(t)
	n := differentialCount(t, 2000)
	const seed = 20261201 // not the corpus's seed: these logs are new to both sides
	for i := 0; i < n; i++ {
		body, err := forget.RandomLog(seed, i)
		if err != nil {
			t.Fatal(err)
		}
		if diffs := compareLogWithOracle(t, ms, body); len(diffs) > 0 {
			t.Fatalf("log %d: engine and oracle disagree:\n%s\nbody: %s", i, renderDiffs(diffs), body)
		}
	}
}

// FuzzForgetEnvelopeDifferential holds the engine to the oracle on any bytes, seeded with the
// pinned corpus's smaller bodies: refusals, their order and every factor must agree.
func FuzzForgetEnvelopeDifferential(f *testing.F) {
	names, err := filepath.Glob("forget-envelope/cases/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		var cs corpus.Case
		if err := json.Unmarshal(b, &cs); err != nil {
			f.Fatalf("%s: %v", n, err)
		}
		if body, err := cs.RequestBody(); err == nil && len(body) < 30000 {
			f.Add(body)
		}
	}
	ms := loadForgetEnvelope(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		if diffs := compareLogWithOracle(t, ms, body); len(diffs) > 0 {
			t.Fatalf("engine and oracle disagree:\n%s", renderDiffs(diffs))
		}
	})
}

// compareLogWithOracle is where the engine's outcome on one mutation log differs from the
// independent oracle's (gen/forget), field by field.
func compareLogWithOracle(t testing.TB, ms *rules.MutLogSet, body []byte) []corpus.Diff {
	t.Helper()
	raw, err := json.Marshal(forget.Expect(body))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	got, err := corpus.OutcomeMutLog(ms, body, nil)
	if err != nil {
		t.Fatal(err)
	}
	return corpus.Compare(want, got)
}
