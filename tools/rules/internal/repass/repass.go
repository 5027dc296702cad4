// Package repass re-passes a pinned corpus through the engine of a compiled criteria set of
// either kind, and judges the run: every case passed, the pin matches, and on an unfiltered run
// with coverage every rule was seen both true and false.
package repass

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// Options say which cases run and what is gathered on the way.
type Options struct {
	// Filter, when set, runs only the cases whose name it matches.
	Filter *regexp.Regexp
	// Coverage gathers rule and branch coverage.
	Coverage bool
	// Progress, when set, is told each case (its place i of n) before it runs.
	Progress func(i, n int, name string)
}

// Run is one re-pass of a corpus.
type Run struct {
	// ID and Revision name the criteria; CorpusID the corpus.
	ID, Revision, CorpusID string
	Summary                corpus.Summary
	// Coverage is nil unless Options.Coverage was set.
	Coverage *corpus.Coverage
	// Pin is the corpus's own pin; PinErr says why it does not match the criteria's, if it does not.
	Pin      string
	PinErr   error
	Filtered bool
}

// engine is what a re-pass needs of one kind of criteria.
type engine struct {
	pin         string
	newCoverage func() *corpus.Coverage
	runCase     func(cs *corpus.Case, obs rules.Observer) corpus.Result
}

// engineOf returns the engine of a compiled criteria set of either kind.
func engineOf(s rules.Served) (engine, error) {
	switch x := s.(type) {
	case *rules.ProgramSet:
		return engine{pin: x.Criteria().Corpus.SHA256,
			newCoverage: func() *corpus.Coverage { return corpus.NewCoverage(x) },
			runCase:     func(cs *corpus.Case, obs rules.Observer) corpus.Result { return corpus.RunCase(x, cs, obs) }}, nil
	case *rules.MutLogSet:
		return engine{pin: x.Criteria().Corpus.SHA256,
			newCoverage: func() *corpus.Coverage { return corpus.NewCoverageOf(x) },
			runCase:     func(cs *corpus.Case, obs rules.Observer) corpus.Result { return corpus.RunCaseMutLog(x, cs, obs) }}, nil
	}
	return engine{}, fmt.Errorf("repass: criteria of kind %s have no corpus engine", s.Kind())
}

// Corpus runs the cases of c that opt picks through the engine of s, one after another in corpus
// order, and checks c's pin against the one s names.
func Corpus(s rules.Served, c *corpus.Corpus, opt Options) (*Run, error) {
	eng, err := engineOf(s)
	if err != nil {
		return nil, err
	}
	r := &Run{ID: s.ID(), Revision: s.Revision(), CorpusID: c.Index.ID, Filtered: opt.Filter != nil}
	r.Pin, r.PinErr = c.VerifyPin(eng.pin)
	var obs rules.Observer
	if opt.Coverage {
		r.Coverage = eng.newCoverage()
		obs = r.Coverage
	}
	for i := range c.Cases {
		cs := &c.Cases[i]
		if opt.Filter != nil && !opt.Filter.MatchString(cs.Name) {
			continue
		}
		if opt.Progress != nil {
			opt.Progress(i+1, len(c.Cases), cs.Name)
		}
		res := eng.runCase(cs, obs)
		if res.Passed() {
			r.Summary.Passed++
		} else {
			r.Summary.Failed++
		}
		r.Summary.Results = append(r.Summary.Results, res)
	}
	return r, nil
}

// Gaps lists the rules never seen both ways and counts the branches never seen both ways (none
// without coverage).
func (r *Run) Gaps() ([]corpus.RuleCoverage, int) {
	if r.Coverage == nil {
		return nil, 0
	}
	return r.Coverage.Gaps()
}

// Verdict is nil when the run passed, else why not: no case ran, a case failed, the pin does not
// match, or (unfiltered) a rule was never seen both ways.
func (r *Run) Verdict() error {
	gaps, _ := r.Gaps()
	switch {
	case r.Summary.Passed+r.Summary.Failed == 0:
		return errors.New("no case ran")
	case r.Summary.Failed > 0:
		return fmt.Errorf("%d case(s) failed", r.Summary.Failed)
	case r.PinErr != nil:
		return r.PinErr
	case len(gaps) > 0 && !r.Filtered:
		return fmt.Errorf("%d rule(s) never seen both ways", len(gaps))
	}
	return nil
}
