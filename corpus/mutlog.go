package corpus

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The corpus of a mutation-log rule set lives in its own directory (the criteria's corpus.dir,
// e.g. corpus/forget-envelope/), in the same case format as v1's with that rule set's expected
// members (docs/forget-envelope.md). Its expected outputs come from its own independent oracle
// (gen/forget/) and from hand-derived edge cases (hand/), never from the engine.

// NewCoverageOf prepares coverage for every program of a mutation-log set.
func NewCoverageOf(ms *rules.MutLogSet) *Coverage { return newCoverage(ms) }

// OutcomeMutLog runs the mutation-log engine on one body and returns what a case expects:
// {"refusal": {...}} or {"precheck": {...}, "audit": {...}} with verdict_prefix in the audit.
func OutcomeMutLog(ms *rules.MutLogSet, body []byte, obs rules.Observer) (map[string]any, error) {
	return outcome(ms, body, mutlog.Options{Observer: obs}, mutlog.PrecheckWith, mutlog.AuditWith,
		func(r *mutlog.Refusal) string { return r.Rule },
		func(r *mutlog.Report) string { return strings.TrimSuffix(r.VerdictLine, " — "+r.CheckEnd) })
}

// RunCaseMutLog runs one case through the mutation-log engine and compares every expected field.
func RunCaseMutLog(ms *rules.MutLogSet, cs *Case, obs rules.Observer) Result {
	return runCase(cs, func(body []byte) (map[string]any, error) { return OutcomeMutLog(ms, body, obs) })
}

// RunMutLog re-runs every case whose name matches filter (nil: all), on every core; results keep
// corpus order.
func RunMutLog(ms *rules.MutLogSet, c *Corpus, filter *regexp.Regexp, obs rules.Observer) Summary {
	return runAll(c, filter, func(cs *Case) Result { return RunCaseMutLog(ms, cs, obs) })
}

// GateMutLog decides whether a compiled mutation-log revision may serve, exactly as Gate does for
// v1: not stopped, its corpus (fsys rooted at the criteria's corpus.dir) for this id and revision,
// every case re-passing, and the pin the criteria name matching.
func GateMutLog(ms *rules.MutLogSet, fsys fs.FS, stopped []string) (Summary, error) {
	for _, r := range stopped {
		if r == ms.ID()+"@"+ms.Revision() {
			return Summary{}, fmt.Errorf("%w: %s revision %s is stopped by configuration", ErrNotServable, ms.ID(), ms.Revision())
		}
	}
	c, err := Load(fsys)
	if err != nil {
		return Summary{}, fmt.Errorf("%w: %w", ErrNotServable, err)
	}
	if c.Index.CriteriaID != ms.ID() || c.Index.CriteriaRevision != ms.Revision() {
		return Summary{}, fmt.Errorf("%w: the corpus is for %s %s", ErrNotServable, c.Index.CriteriaID, c.Index.CriteriaRevision)
	}
	s := RunMutLog(ms, c, nil, nil)
	switch {
	case s.Passed == 0:
		return s, fmt.Errorf("%w: the corpus is empty", ErrNotServable)
	case s.Failed > 0:
		return s, fmt.Errorf("%w: %d of %d corpus cases fail", ErrNotServable, s.Failed, s.Passed+s.Failed)
	}
	if ms.Criteria().Corpus.SHA256 == "" {
		return s, fmt.Errorf("%w: the criteria name no corpus pin", ErrNotServable)
	}
	if _, err := c.VerifyPin(ms.Criteria().Corpus.SHA256); err != nil {
		return s, fmt.Errorf("%w: %w", ErrNotServable, err)
	}
	return s, nil
}

// LoadHand reads the hand-derived cases (hand/*.json under fsys, sorted by name) as a corpus
// without an index: they are checked against the engine directly, and the oracle's generator
// re-derives them into the pinned corpus.
func LoadHand(fsys fs.FS) (*Corpus, error) {
	names, err := fs.Glob(fsys, "hand/*.json")
	if err != nil {
		return nil, fmt.Errorf("list hand cases: %w", err)
	}
	sort.Strings(names)
	c := &Corpus{}
	for _, n := range names {
		raw, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("read hand case %s: %w", n, err)
		}
		var cs Case
		if err := json.Unmarshal(raw, &cs); err != nil {
			return nil, fmt.Errorf("decode hand case %s: %w", n, err)
		}
		if want := strings.TrimSuffix(path.Base(n), ".json"); cs.Name != want {
			return nil, fmt.Errorf("hand case file %s names itself %q", n, cs.Name)
		}
		cs.raw = raw
		c.Cases = append(c.Cases, cs)
	}
	return c, nil
}
