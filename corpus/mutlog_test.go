package corpus_test

import (
	"bytes"
	"errors"
	"os"
	"reflect"
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

// TestForgetEnvelopeDeclarationsAreData: the member and the exact value that declare a log fact
// (FE-R-34 reinsert_identity "new_key", FE-R-38 forget_semantics "tombstone_only") are the
// criteria's data, not the engine's. A copy of the criteria with a declared word renamed compiles
// and fails the corpus; the same copy run on the corpus's logs with the word renamed the same way
// gives every case the outcome the published criteria give the logs as submitted.
func TestForgetEnvelopeDeclarationsAreData(t *testing.T) {
	ms := loadForgetEnvelope(t)
	fsys := os.DirFS("forget-envelope")
	c, err := corpus.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		decl     [2]string // the declaration as published, as renamed
		inLog    [2]string // the declaring member or value in a log, as renamed
		declares int       // at least this many cases make the declaration
	}{
		{"FE-R-38/value-renamed", [2]string{"    value: tombstone_only\n", "    value: logical_only\n"}, [2]string{`"tombstone_only"`, `"logical_only"`}, 2},
		{"FE-R-38/member-renamed", [2]string{"    member: forget_semantics\n", "    member: delete_semantics\n"}, [2]string{`"forget_semantics"`, `"delete_semantics"`}, 2},
		{"FE-R-34/value-renamed", [2]string{"    value: new_key\n", "    value: fresh_key\n"}, [2]string{`"new_key"`, `"fresh_key"`}, 2},
		{"FE-R-34/member-renamed", [2]string{"    member: reinsert_identity\n", "    member: readd_identity\n"}, [2]string{`"reinsert_identity"`, `"readd_identity"`}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mut := strings.Replace(string(src), tc.decl[0], tc.decl[1], 1)
			if mut == string(src) {
				t.Fatalf("the criteria no longer contain %q", tc.decl[0])
			}
			m, err := rules.LoadMutationLog("renamed.yaml", []byte(mut))
			if err != nil {
				t.Fatalf("the renamed copy must still compile: %v", err)
			}
			s, err := corpus.GateMutLog(m, fsys, nil)
			if !errors.Is(err, corpus.ErrNotServable) || s.Failed == 0 {
				t.Fatalf("GateMutLog() = %v with %d failed; want the renamed copy refused for failing cases", err, s.Failed)
			}
			declares := 0
			for _, cs := range c.Cases {
				body, err := cs.RequestBody()
				if err != nil {
					t.Fatal(err)
				}
				renamed := bytes.ReplaceAll(body, []byte(tc.inLog[0]), []byte(tc.inLog[1]))
				if !bytes.Equal(renamed, body) {
					declares++
				}
				want, err := corpus.OutcomeMutLog(ms, body, nil)
				if err != nil {
					t.Fatalf("%s: %v", cs.Name, err)
				}
				got, err := corpus.OutcomeMutLog(m, renamed, nil)
				if err != nil {
					t.Fatalf("%s: %v", cs.Name, err)
				}
				for _, o := range []map[string]any{want, got} {
					for _, part := range []string{"precheck", "audit"} {
						if p, ok := o[part].(map[string]any); ok {
							delete(p, "criteria_digest") // the copy's bytes differ
						}
					}
				}
				if !reflect.DeepEqual(want, got) {
					t.Errorf("%s: the renamed log under the renamed criteria is judged differently", cs.Name)
				}
			}
			if declares < tc.declares {
				t.Fatalf("%d cases carry %s, want at least %d", declares, tc.inLog[0], tc.declares)
			}
		})
	}
}
