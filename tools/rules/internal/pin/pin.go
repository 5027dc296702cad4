// Package pin keeps a criteria file's corpus pin in step with its corpus: it reads a corpus's own
// verified pin, writes a pin into a criteria file's corpus block, and rebuilds the index of a
// mutation-log corpus.
package pin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/scopehygiene/scope-hygiene/corpus"
)

// CorpusError is a failure of the corpus itself (it does not load, or its pin does not verify),
// as opposed to a file that could not be read or written. Its text is the corpus's own.
type CorpusError struct{ Err error }

// Error is the corpus's error text.
func (e *CorpusError) Error() string { return e.Err.Error() }

// Unwrap returns the corpus's error.
func (e *CorpusError) Unwrap() error { return e.Err }

// Of loads the corpus in dir and returns it with its pin, recomputed and checked against its
// index.
func Of(dir string) (*corpus.Corpus, string, error) {
	c, err := corpus.Load(os.DirFS(dir))
	if err != nil {
		return nil, "", &CorpusError{Err: err}
	}
	if _, err := c.VerifyPin(""); err != nil {
		return nil, "", &CorpusError{Err: err}
	}
	return c, c.Index.SHA256, nil
}

// pinLine is the sha256 line of a criteria file's corpus block.
var pinLine = regexp.MustCompile(`(?m)^(  sha256: )"[^"\n]*"`)

// Write puts pin into the sha256 line of the corpus block of the criteria file at path.
func Write(path, pin string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read criteria: %w", err)
	}
	if !pinLine.Match(src) {
		return fmt.Errorf("%s has no corpus sha256 line to update", path)
	}
	src = pinLine.ReplaceAll(src, []byte(`${1}"`+pin+`"`))
	if err := os.WriteFile(path, src, 0o644); err != nil {
		return fmt.Errorf("write criteria: %w", err)
	}
	return nil
}

// Reindex rewrites the index.json of the mutation-log corpus in dir to list every cases/*.json,
// sorted by name, under the names idx gives, and pins it (the merge of the oracle's generated
// cases with the hand-derived ones). It decides no expected output: those stay as the oracle and
// the hand derivation wrote them.
func Reindex(dir string, idx corpus.Index) error {
	names, err := filepath.Glob(filepath.Join(dir, "cases", "*.json"))
	if err != nil {
		return fmt.Errorf("list cases: %w", err)
	}
	sort.Strings(names)
	idx.Cases = []string{}
	for _, n := range names {
		idx.Cases = append(idx.Cases, strings.TrimSuffix(filepath.Base(n), ".json"))
	}
	write := func() error {
		b, err := json.MarshalIndent(idx, "", "  ")
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "index.json"), append(b, '\n'), 0o644)
		}
		if err != nil {
			return fmt.Errorf("write index: %w", err)
		}
		return nil
	}
	if err := write(); err != nil {
		return err
	}
	c, err := corpus.Load(os.DirFS(dir))
	if err != nil {
		return &CorpusError{Err: err}
	}
	if idx.SHA256, err = c.Pin(); err != nil {
		return &CorpusError{Err: err}
	}
	return write()
}
