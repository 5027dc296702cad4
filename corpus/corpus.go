// Package corpus loads the pinned corpus, verifies its pin and re-runs every case through the
// engine. The expected outputs were written by the independent oracle (gen/); this package only
// reads them, so a criteria revision is judged against a second reading of the criteria, never
// against the engine's own past output.
package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"sync"

	"github.com/gowebpki/jcs"

	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/gen/forget"
)

// Index is corpus/index.json, in the oracle's own type.
type Index = gen.Index

// Case is one corpus case (docs/contract.md): the case file in v1's case format with its
// expected members kept raw, which is the oracle's own forget.Case, and the bytes it was read from.
type Case struct {
	forget.Case
	raw []byte
}

// Corpus is a loaded corpus.
type Corpus struct {
	Index Index
	Cases []Case
}

// ErrPin is wrapped when a corpus does not match its pin.
var ErrPin = errors.New("corpus pin mismatch")

// Load reads index.json and every case it names from fsys (rooted at the corpus directory).
func Load(fsys fs.FS) (*Corpus, error) {
	b, err := fs.ReadFile(fsys, "index.json")
	if err != nil {
		return nil, fmt.Errorf("read corpus index: %w", err)
	}
	var c Corpus
	if err := json.Unmarshal(b, &c.Index); err != nil {
		return nil, fmt.Errorf("decode corpus index: %w", err)
	}
	for _, name := range c.Index.Cases {
		raw, err := fs.ReadFile(fsys, path.Join("cases", name+".json"))
		if err != nil {
			return nil, fmt.Errorf("read case %s: %w", name, err)
		}
		var cs Case
		if err := json.Unmarshal(raw, &cs); err != nil {
			return nil, fmt.Errorf("decode case %s: %w", name, err)
		}
		if cs.Name != name {
			return nil, fmt.Errorf("case file %s names itself %q", name, cs.Name)
		}
		cs.raw = raw
		c.Cases = append(c.Cases, cs)
	}
	return &c, nil
}

// Pin computes the corpus pin: the lowercase hex SHA-256 of the RFC 8785 canonical form of the
// corpus object {id, criteria_id, criteria_revision, cases} (the corpus without its sha256 field).
// The canonical form of an array is the array of its elements' canonical forms, so the cases are
// canonicalized one by one, in parallel, and assembled.
func (c *Corpus) Pin() (string, error) {
	canon := make([][]byte, len(c.Cases))
	errs := make([]error, len(c.Cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				canon[i], errs[i] = jcs.Transform(c.Cases[i].raw)
			}
		}()
	}
	for i := range c.Cases {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return "", fmt.Errorf("canonicalize case %s: %w", c.Cases[i].Name, err)
		}
	}
	head, err := json.Marshal(struct {
		ID               string            `json:"id"`
		CriteriaID       string            `json:"criteria_id"`
		CriteriaRevision string            `json:"criteria_revision"`
		Cases            []json.RawMessage `json:"cases"`
	}{c.Index.ID, c.Index.CriteriaID, c.Index.CriteriaRevision, []json.RawMessage{}})
	if err != nil {
		return "", fmt.Errorf("serialize corpus: %w", err)
	}
	// Canonicalize the object with an empty case list, then splice the canonical cases in: member
	// order is by name, so "cases" keeps its place whatever it holds.
	shell, err := jcs.Transform(head)
	if err != nil {
		return "", fmt.Errorf("canonicalize corpus: %w", err)
	}
	at := bytes.Index(shell, []byte(`"cases":[]`))
	if at < 0 {
		return "", fmt.Errorf("canonicalize corpus: no cases member")
	}
	at += len(`"cases":[`)
	h := sha256.New()
	h.Write(shell[:at])
	for i, b := range canon {
		if i > 0 {
			h.Write([]byte{','})
		}
		h.Write(b)
	}
	h.Write(shell[at:])
	return hex.EncodeToString(h.Sum(nil)), nil
}

// VerifyPin checks the corpus against the pin in its index and against want (the pin the
// criteria name), when want is not empty.
func (c *Corpus) VerifyPin(want string) (string, error) {
	got, err := c.Pin()
	if err != nil {
		return "", err
	}
	if got != c.Index.SHA256 {
		return got, fmt.Errorf("%w: index.json says %s, the cases hash to %s", ErrPin, c.Index.SHA256, got)
	}
	if want != "" && got != want {
		return got, fmt.Errorf("%w: the criteria name %s, the corpus is %s", ErrPin, want, got)
	}
	return got, nil
}

// RequestBody returns the exact bytes the case submits.
func (cs *Case) RequestBody() ([]byte, error) {
	if cs.BodyBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(cs.BodyBase64)
		if err != nil {
			return nil, fmt.Errorf("case %s: body_base64: %w", cs.Name, err)
		}
		return b, nil
	}
	var v any
	if err := json.Unmarshal(cs.Body, &v); err != nil {
		return nil, fmt.Errorf("case %s: body: %w", cs.Name, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("case %s: body: %w", cs.Name, err)
	}
	return b, nil
}
