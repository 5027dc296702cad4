package corpus_test

import (
	"os"
	"testing"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
)

func loadForgetEnvelope(t *testing.T) *rules.MutLogSet {
	t.Helper()
	ms, err := rules.LoadAnyFile("../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return ms.(*rules.MutLogSet)
}

// TestForgetEnvelopeHandCases re-runs the hand-derived edge cases (corpus/forget-envelope/hand/)
// through the engine: every expected field was worked out from docs/forget-envelope.md by hand.
func TestForgetEnvelopeHandCases(t *testing.T) {
	ms := loadForgetEnvelope(t)
	c, err := corpus.LoadHand(os.DirFS("forget-envelope"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Cases) < 30 {
		t.Fatalf("%d hand cases, want at least 30", len(c.Cases))
	}
	s := corpus.RunMutLog(ms, c, nil, nil)
	for _, r := range s.Results {
		if !r.Passed() {
			t.Errorf("%s: %s %v", r.Case, r.Err, r.Diffs)
		}
	}
}
