package corpus_test

import (
	"os"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
)

func loadForgetEnvelope(t testing.TB) *rules.MutLogSet {
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

// TestForgetEnvelopeGate serves the forget-envelope criteria only on its pinned corpus, and a copy
// of the criteria whose data changes one decision fails that corpus.
func TestForgetEnvelopeGate(t *testing.T) {
	ms := loadForgetEnvelope(t)
	fsys := os.DirFS("forget-envelope")
	s, err := corpus.GateMutLog(ms, fsys, nil)
	if err != nil {
		t.Fatalf("gate: %v", err)
	}
	if s.Passed < 30 || s.Failed != 0 {
		t.Fatalf("gate: %d passed, %d failed", s.Passed, s.Failed)
	}
	if _, err := corpus.GateMutLog(ms, fsys, []string{ms.ID() + "@" + ms.Revision()}); err == nil {
		t.Fatal("a stopped revision served")
	}
	src, err := os.ReadFile("../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"silent ignores grants":    {"silent: outside && event.grants_cover", "silent: outside"},
		"terminal reopen no-op":    {"reopen: {retired: absent}", "reopen: {}"},
		"canonical keeps case":     {"canonicalization: [trim_ascii_space, ascii_lower]", "canonicalization: [trim_ascii_space]"},
		"refusal order swapped":    {"  - event_op_invalid\n  - event_key_invalid\n", "  - event_key_invalid\n  - event_op_invalid\n"},
		"no-principals gate moved": {"    - when: log.principals == 0\n", "    - when: log.principals < 0\n"},
	} {
		mut := strings.Replace(string(src), edit[0], edit[1], 1)
		if mut == string(src) {
			t.Fatalf("%s: the edit does not apply", name)
		}
		m, err := rules.LoadMutationLog("mutant.yaml", []byte(mut))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := corpus.GateMutLog(m, fsys, nil); err == nil {
			t.Errorf("%s: a criteria copy that changes a decision passed the corpus", name)
		}
	}
}
