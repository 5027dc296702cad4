package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gowebpki/jcs"
	"github.com/scopehygiene/scope-hygiene/gen/internal/casefile"
)

// Corpus identity (R-31: the project's own corpus under the published id).
const (
	CorpusID         = "memory-scope-hygiene-corpus/v1"
	CriteriaID       = "memory-scope-hygiene/v1"
	CriteriaRevision = "1.0.2"
)

// Provenance labels of corpus cases.
const (
	ProvenanceEdge       = "synthetic edge case"
	ProvenanceGenerated  = "synthetic generated"
	ProvenanceRegression = "regression"
)

// Case is one corpus case (contract: "Corpus case"). Exactly one of Body and
// BodyBase64 is set.
type Case struct {
	Name       string          `json:"name"`
	Provenance string          `json:"provenance"`
	Rules      []string        `json:"rules"`
	Body       json.RawMessage `json:"body,omitempty"`
	BodyBase64 string          `json:"body_base64,omitempty"`
	Expected   Expected        `json:"expected"`
}

// Index is corpus/index.json.
type Index struct {
	ID               string   `json:"id"`
	CriteriaID       string   `json:"criteria_id"`
	CriteriaRevision string   `json:"criteria_revision"`
	Cases            []string `json:"cases"`
	SHA256           string   `json:"sha256"`
}

// corpusObject is the object the pin is computed over.
type corpusObject struct {
	ID               string `json:"id"`
	CriteriaID       string `json:"criteria_id"`
	CriteriaRevision string `json:"criteria_revision"`
	Cases            []Case `json:"cases"`
}

var (
	errCaseName    = errors.New("gen: corpus case name is invalid or repeated")
	errCaseBody    = errors.New("gen: corpus case body is missing or ambiguous")
	errPinMismatch = errors.New("gen: corpus pin does not verify")
	errIndex       = errors.New("gen: corpus index is invalid")
	errCaseFile    = errors.New("gen: corpus case file is invalid")
	errMarshal     = errors.New("gen: corpus cannot be serialized")
)

// SubmittedBytes returns the exact request bytes of a case (casefile.SubmittedBytes).
func (c Case) SubmittedBytes() ([]byte, error) {
	b, err := casefile.SubmittedBytes(c.Body, c.BodyBase64)
	if err != nil {
		return nil, errCaseBody
	}
	return b, nil
}

// Pin is the lowercase hex SHA-256 of the RFC 8785 (JCS) serialization of the
// corpus object {id, criteria_id, criteria_revision, cases} (cases in index order).
func Pin(id, criteriaID, criteriaRevision string, cases []Case) (string, error) {
	if cases == nil {
		cases = []Case{}
	}
	raw, err := json.Marshal(corpusObject{ID: id, CriteriaID: criteriaID, CriteriaRevision: criteriaRevision, Cases: cases})
	if err != nil {
		return "", errMarshal
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		return "", errMarshal
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// VerifyPin checks that the index lists exactly the given cases, in order, and
// that its sha256 is their pin.
func VerifyPin(idx Index, cases []Case) error {
	if len(idx.Cases) != len(cases) {
		return errPinMismatch
	}
	for i := range cases {
		if idx.Cases[i] != cases[i].Name {
			return errPinMismatch
		}
	}
	pin, err := Pin(idx.ID, idx.CriteriaID, idx.CriteriaRevision, cases)
	if err != nil {
		return err
	}
	if pin != idx.SHA256 {
		return errPinMismatch
	}
	return nil
}

// Corpus returns the deterministic list of corpus cases: the hand-authored edge
// cases, then the seeded generated ones.
func Corpus() ([]Case, error) {
	var out []Case
	edges, err := edgeCases()
	if err != nil {
		return nil, err
	}
	out = append(out, edges...)
	generated, err := generatedCases()
	if err != nil {
		return nil, err
	}
	out = append(out, generated...)
	seen := map[string]bool{}
	for _, c := range out {
		if !casefile.ValidName(c.Name) || seen[c.Name] {
			return nil, errCaseName
		}
		seen[c.Name] = true
	}
	return out, nil
}

// MakeIndex builds the index (with the pin) for the cases.
func MakeIndex(cases []Case) (Index, error) {
	idx := Index{ID: CorpusID, CriteriaID: CriteriaID, CriteriaRevision: CriteriaRevision, Cases: []string{}}
	for _, c := range cases {
		idx.Cases = append(idx.Cases, c.Name)
	}
	pin, err := Pin(idx.ID, idx.CriteriaID, idx.CriteriaRevision, cases)
	if err != nil {
		return Index{}, err
	}
	idx.SHA256 = pin
	return idx, nil
}

// encodeFile is the on-disk form: 2-space indented JSON and a final newline.
func encodeFile(v any) ([]byte, error) {
	b, err := casefile.Encode(v)
	if err != nil {
		return nil, errMarshal
	}
	return b, nil
}

// WriteCorpus writes dir/cases/<name>.json (one file per case) and dir/index.json,
// byte for byte deterministic. Case files in dir/cases that are no longer part of
// the corpus are removed.
func WriteCorpus(dir string) error {
	cases, err := Corpus()
	if err != nil {
		return err
	}
	idx, err := MakeIndex(cases)
	if err != nil {
		return err
	}
	casesDir := filepath.Join(dir, "cases")
	if err := os.MkdirAll(casesDir, 0o755); err != nil {
		return errors.New("gen: cannot create the corpus directory")
	}
	keep := map[string]bool{}
	for _, c := range cases {
		b, err := encodeFile(c)
		if err != nil {
			return err
		}
		keep[c.Name+".json"] = true
		if err := os.WriteFile(filepath.Join(casesDir, c.Name+".json"), b, 0o644); err != nil {
			return errors.New("gen: cannot write a corpus case")
		}
	}
	entries, err := os.ReadDir(casesDir)
	if err != nil {
		return errors.New("gen: cannot list the corpus directory")
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(casesDir, e.Name())); err != nil {
				return errors.New("gen: cannot remove a stale corpus case")
			}
		}
	}
	b, err := encodeFile(idx)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), b, 0o644); err != nil {
		return errors.New("gen: cannot write the corpus index")
	}
	return nil
}

// ReadCorpus loads index.json and every case it lists (cases/<name>.json) from fsys.
// It checks names and that each case file re-encodes to its own bytes; it does not
// verify the pin (see VerifyPin).
func ReadCorpus(fsys fs.FS) (Index, []Case, error) {
	raw, err := fs.ReadFile(fsys, "index.json")
	if err != nil {
		return Index{}, nil, errIndex
	}
	var idx Index
	if err := strictUnmarshal(raw, &idx); err != nil {
		return Index{}, nil, errIndex
	}
	var cases []Case
	for _, name := range idx.Cases {
		if !casefile.ValidName(name) {
			return Index{}, nil, errCaseName
		}
		b, err := fs.ReadFile(fsys, path.Join("cases", name+".json"))
		if err != nil {
			return Index{}, nil, errCaseFile
		}
		var c Case
		if err := strictUnmarshal(b, &c); err != nil || c.Name != name {
			return Index{}, nil, errCaseFile
		}
		again, err := encodeFile(c)
		if err != nil || !bytes.Equal(again, b) {
			return Index{}, nil, errCaseFile // the file is not in canonical form
		}
		cases = append(cases, c)
	}
	return idx, cases, nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errCaseFile
	}
	return nil
}
