package corpus_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	scopehygiene "github.com/scopehygiene/scope-hygiene"
	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
)

func embeddedCorpus(t *testing.T) fs.FS {
	t.Helper()
	sub, err := fs.Sub(scopehygiene.Corpus, "corpus")
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// TestGateServesTheShippedRevision: the shipped criteria re-pass the shipped corpus at 100% and
// match its pin, so the server may serve them.
func TestGateServesTheShippedRevision(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := corpus.Gate(ps, embeddedCorpus(t), nil)
	if err != nil {
		t.Fatalf("Gate() = %v, want the shipped revision to serve", err)
	}
	if s.Failed != 0 || s.Passed < 300 {
		t.Fatalf("Gate() ran %d passed, %d failed; want >= 300 passed, 0 failed", s.Passed, s.Failed)
	}
}

// TestRevisionWorkflow shows a criteria revision is a data change judged by the corpus: renaming
// one liveness state in a copy of criteria.yaml compiles, but fails the corpus, so it cannot serve
// until a regression case, the oracle and the pin say the new meaning is intended.
func TestRevisionWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
	}{
		{"R-15/liveness-state-renamed", `["superseded", "deleted", "expired"] || record.state.str in ["superseded", "deleted", "expired"]`,
			`["superseded", "deleted", "lapsed"] || record.state.str in ["superseded", "deleted", "lapsed"]`},
		{"N1/precedence-reordered-B1-first", "    - id: N4\n", "    - id: B1-early\n      when: cluster.covered > 0\n      class: marked_shared\n    - id: N4\n"},
		{"R-8/default-key-dropped", "default_scope_keys: [user_id, agent_id, app_id, run_id]", "default_scope_keys: [agent_id, app_id, run_id]"},
		{"gates/scope-filtered-gate-removed", `family == "mem0" && submission.scope_filtered`, `false && submission.scope_filtered`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := string(scopehygiene.CriteriaYAML)
			if !strings.Contains(src, tc.old) {
				t.Fatalf("criteria.yaml no longer contains %q", tc.old)
			}
			ps, err := rules.Load("criteria.yaml", []byte(strings.Replace(src, tc.old, tc.new, 1)))
			if err != nil {
				t.Fatalf("the edited copy must still compile: %v", err)
			}
			s, err := corpus.Gate(ps, embeddedCorpus(t), nil)
			if !errors.Is(err, corpus.ErrNotServable) || s.Failed == 0 {
				t.Fatalf("Gate() = %v with %d failed; want the edited revision refused for failing cases", err, s.Failed)
			}
		})
	}
}

func TestGateRefusesAStoppedRevision(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := corpus.Gate(ps, embeddedCorpus(t), []string{"0.9.0", ps.Revision()}); !errors.Is(err, corpus.ErrNotServable) {
		t.Fatalf("Gate() = %v, want a stopped revision refused", err)
	}
}

func TestGateRefusesAPinMismatch(t *testing.T) {
	src := strings.Replace(string(scopehygiene.CriteriaYAML), `  sha256: "`, `  sha256: "00`, 1)
	ps, err := rules.Load("criteria.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := corpus.Gate(ps, embeddedCorpus(t), nil); !errors.Is(err, corpus.ErrPin) {
		t.Fatalf("Gate() = %v, want a pin mismatch", err)
	}
}
