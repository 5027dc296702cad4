package corpus

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// ErrNotServable is wrapped by every reason a revision may not serve.
var ErrNotServable = errors.New("criteria revision may not serve")

// Gate decides whether a compiled revision may serve: it must not be stopped by the operator
// (tripwire 3), its corpus must match the pin the criteria name, and every case must re-pass.
func Gate(ps *rules.ProgramSet, fsys fs.FS, stopped []string) (Summary, error) {
	for _, r := range stopped {
		if r == ps.Revision() {
			return Summary{}, fmt.Errorf("%w: revision %s is stopped by configuration", ErrNotServable, r)
		}
	}
	c, err := Load(fsys)
	if err != nil {
		return Summary{}, fmt.Errorf("%w: %w", ErrNotServable, err)
	}
	if c.Index.CriteriaID != ps.ID() || c.Index.CriteriaRevision != ps.Revision() {
		return Summary{}, fmt.Errorf("%w: the corpus is for %s %s", ErrNotServable, c.Index.CriteriaID, c.Index.CriteriaRevision)
	}
	s := Run(ps, c, nil, nil)
	switch {
	case s.Passed == 0:
		return s, fmt.Errorf("%w: the corpus is empty", ErrNotServable)
	case s.Failed > 0:
		return s, fmt.Errorf("%w: %d of %d corpus cases fail", ErrNotServable, s.Failed, s.Passed+s.Failed)
	}
	if _, err := c.VerifyPin(ps.Criteria().Corpus.SHA256); err != nil {
		return s, fmt.Errorf("%w: %w", ErrNotServable, err)
	}
	return s, nil
}
