package repass

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The repository's criteria and corpora, relative to this package.
const (
	criteriaPath = "../../../../criteria.yaml"
	corpusPath   = "../../../../corpus"
	fePath       = "../../../../criteria/forget-envelope.yaml"
	feCorpus     = "../../../../corpus/forget-envelope"
)

func load(t *testing.T, crit, dir string) (rules.Served, *corpus.Corpus) {
	t.Helper()
	s, err := rules.LoadAnyFile(crit)
	if err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// TestV1FilteredRun: the cases a filter picks run in corpus order and pass; the pin matches; a
// filtered run with coverage passes though some rules were never seen both ways.
func TestV1FilteredRun(t *testing.T) {
	s, c := load(t, criteriaPath, corpusPath)
	var seen []string
	r, err := Corpus(s, c, Options{Filter: regexp.MustCompile(`^B1-`), Coverage: true,
		Progress: func(i, n int, name string) { seen = append(seen, name) }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Passed == 0 || r.Summary.Failed != 0 || len(seen) != r.Summary.Passed {
		t.Fatalf("passed %d failed %d, progress saw %d", r.Summary.Passed, r.Summary.Failed, len(seen))
	}
	for i, res := range r.Summary.Results {
		if !strings.HasPrefix(res.Case, "B1-") || res.Case != seen[i] {
			t.Fatalf("result %d is %s, progress saw %s", i, res.Case, seen[i])
		}
	}
	if r.PinErr != nil || r.Pin != c.Index.SHA256 || r.ID != s.ID() || r.CorpusID != c.Index.ID {
		t.Fatalf("pin %s (%v), ids %s %s", r.Pin, r.PinErr, r.ID, r.CorpusID)
	}
	if gaps, _ := r.Gaps(); len(gaps) == 0 {
		t.Fatal("a run of one family's cases saw every rule both ways")
	}
	if err := r.Verdict(); err != nil {
		t.Fatalf("filtered run: %v", err)
	}
	r.Filtered = false
	if err := r.Verdict(); err == nil || !strings.HasSuffix(err.Error(), "rule(s) never seen both ways") {
		t.Fatalf("unfiltered with gaps: %v", err)
	}
}

// TestVerdicts: no case run, a failed case and a pin that does not match each fail the run.
func TestVerdicts(t *testing.T) {
	s, c := load(t, criteriaPath, corpusPath)
	r, err := Corpus(s, c, Options{Filter: regexp.MustCompile(`^no such case$`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Verdict(); err == nil || err.Error() != "no case ran" {
		t.Fatalf("empty run: %v", err)
	}
	one := regexp.MustCompile(`^B1-marked-shared$`)
	for i := range c.Cases {
		if c.Cases[i].Name == "B1-marked-shared" {
			c.Cases[i].Expected = []byte(`{"audit":{}}`)
		}
	}
	if r, err = Corpus(s, c, Options{Filter: one}); err != nil {
		t.Fatal(err)
	}
	if err := r.Verdict(); err == nil || err.Error() != "1 case(s) failed" {
		t.Fatalf("failed case: %v", err)
	}
	r.Summary = corpus.Summary{Passed: 1}
	r.PinErr = os.ErrInvalid
	if err := r.Verdict(); err != os.ErrInvalid {
		t.Fatalf("pin: %v", err)
	}
}

// TestMutLogRun: a criteria file of kind mutation-log re-passes its own corpus with full
// coverage through the same call.
func TestMutLogRun(t *testing.T) {
	s, c := load(t, fePath, feCorpus)
	r, err := Corpus(s, c, Options{Coverage: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Verdict(); err != nil || r.Summary.Passed != len(c.Cases) {
		t.Fatalf("%v: %d of %d passed", err, r.Summary.Passed, len(c.Cases))
	}
}
