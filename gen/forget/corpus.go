package forget

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scopehygiene/scope-hygiene/gen/internal/casefile"
)

// Corpus identity (FE-R-41; docs "Corpus").
const (
	CorpusID         = "memory-forget-envelope-corpus/v1"
	CriteriaID       = "memory-forget-envelope/v1"
	CriteriaRevision = "1.0.1"
)

// Provenance labels of corpus cases (docs "Corpus").
const (
	ProvenanceEdge      = "synthetic edge case"
	ProvenanceGenerated = "synthetic generated"
)

// oraclePrefix marks the files this generator writes; it never removes any other.
const oraclePrefix = "oracle-"

// Case is one corpus case in v1's case format with this rule set's expected
// members. Exactly one of Body and BodyBase64 is set.
type Case struct {
	Name       string          `json:"name"`
	Provenance string          `json:"provenance"`
	Rules      []string        `json:"rules"`
	Body       json.RawMessage `json:"body,omitempty"`
	BodyBase64 string          `json:"body_base64,omitempty"`
	Expected   json.RawMessage `json:"expected"`
}

var (
	errCaseName = errors.New("forget: corpus case name is invalid or repeated")
	errCaseBody = errors.New("forget: corpus case body is missing or ambiguous")
	errMarshal  = errors.New("forget: corpus cannot be serialized")
)

// SubmittedBytes returns the exact request bytes of a case (casefile.SubmittedBytes).
func (c Case) SubmittedBytes() ([]byte, error) {
	b, err := casefile.SubmittedBytes(c.Body, c.BodyBase64)
	if err != nil {
		return nil, errCaseBody
	}
	return b, nil
}

// newCase builds a case from a body value (serialized by json.Marshal) and fills
// its expected outcome from the oracle.
func newCase(name, provenance string, rules []string, body any) (Case, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return Case{}, errMarshal
	}
	return finish(Case{Name: name, Provenance: provenance, Rules: rules, Body: b})
}

// newRawCase builds a case whose exact bytes matter (body_base64).
func newRawCase(name, provenance string, rules []string, body []byte) (Case, error) {
	return finish(Case{Name: name, Provenance: provenance, Rules: rules,
		BodyBase64: base64.StdEncoding.EncodeToString(body)})
}

func finish(c Case) (Case, error) {
	b, err := c.SubmittedBytes()
	if err != nil {
		return Case{}, err
	}
	exp, err := json.Marshal(Expect(b))
	if err != nil {
		return Case{}, errMarshal
	}
	c.Expected = exp
	return c, nil
}

// Corpus returns the oracle's cases, deterministically: the edge cases, the
// regression cases, then the seeded random logs.
func Corpus() ([]Case, error) {
	edges, err := edgeCases()
	if err != nil {
		return nil, err
	}
	regressions, err := regressionCases()
	if err != nil {
		return nil, err
	}
	random, err := randomCases(DefaultSeed, DefaultRandomCases)
	if err != nil {
		return nil, err
	}
	out := append(append(edges, regressions...), random...)
	seen := map[string]bool{}
	for _, c := range out {
		if !casefile.ValidName(c.Name) || !strings.HasPrefix(c.Name, oraclePrefix) || seen[c.Name] {
			return nil, fmt.Errorf("%w: %s", errCaseName, c.Name)
		}
		seen[c.Name] = true
	}
	return out, nil
}

// encodeFile is the on-disk form: 2-space indented JSON and a final newline.
func encodeFile(v any) ([]byte, error) {
	b, err := casefile.Encode(v)
	if err != nil {
		return nil, errMarshal
	}
	return b, nil
}

// ReadCaseDir reads every case file (*.json but index.json) of dir, sorted by name.
func ReadCaseDir(dir string) ([]Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("forget: cannot list %s: %w", dir, err)
	}
	var out []Case
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || e.Name() == "index.json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("forget: cannot read %s: %w", e.Name(), err)
		}
		var c Case
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("forget: %s is not a case file: %w", e.Name(), err)
		}
		if c.Name+".json" != e.Name() {
			return nil, fmt.Errorf("forget: %s names itself %q", e.Name(), c.Name)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Diff recomputes a case's expected outcome with the oracle and returns the paths
// of the members that differ ("expected.audit.factors.replay.missing: case 1,
// oracle 0"), in path order; none when they agree.
func Diff(c Case) ([]string, error) {
	b, err := c.SubmittedBytes()
	if err != nil {
		return nil, err
	}
	mine, err := json.Marshal(Expect(b))
	if err != nil {
		return nil, errMarshal
	}
	var want, got any
	if err := json.Unmarshal(c.Expected, &want); err != nil {
		return []string{"expected: not JSON"}, nil
	}
	if err := json.Unmarshal(mine, &got); err != nil {
		return nil, errMarshal
	}
	var out []string
	diffValues("expected", want, got, &out)
	sort.Strings(out)
	return out, nil
}

func show(v any) string {
	if v == nil {
		return "absent"
	}
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func diffValues(path string, want, got any, out *[]string) {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		names := map[string]bool{}
		for n := range wm {
			names[n] = true
		}
		for n := range gm {
			names[n] = true
		}
		for n := range names {
			diffValues(path+"."+n, wm[n], gm[n], out)
		}
		return
	}
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if !bytes.Equal(wb, gb) {
		*out = append(*out, fmt.Sprintf("%s: case %s, oracle %s", path, show(want), show(got)))
	}
}

// WriteCorpus writes the oracle's cases into dir/cases/, one file per case, and
// returns their names in the order written. Before writing, every hand case in
// handDir (if not empty) is recomputed with the oracle: any difference fails and
// nothing is written; else the hand cases are copied into cases/ beside the
// oracle's. Only files this generator writes (named oracle-*) are ever removed, when
// no longer generated. It writes no index.json and no pin: the index lists every
// case file of cases/ sorted by name and is written with the pin by
// `rules pin --criteria criteria/forget-envelope.yaml --reindex --write`.
func WriteCorpus(dir, handDir string) ([]string, error) {
	cases, err := Corpus()
	if err != nil {
		return nil, err
	}
	var hand []Case
	if handDir != "" {
		hand, err = ReadCaseDir(handDir)
		if err != nil {
			return nil, err
		}
		var bad []string
		for _, c := range hand {
			if strings.HasPrefix(c.Name, oraclePrefix) {
				return nil, fmt.Errorf("%w: hand case %s uses the oracle's prefix", errCaseName, c.Name)
			}
			d, err := Diff(c)
			if err != nil {
				return nil, fmt.Errorf("forget: hand case %s: %w", c.Name, err)
			}
			for _, line := range d {
				bad = append(bad, c.Name+": "+line)
			}
		}
		if len(bad) > 0 {
			return nil, fmt.Errorf("forget: hand cases disagree with the oracle:\n%s", strings.Join(bad, "\n"))
		}
	}
	casesDir := filepath.Join(dir, "cases")
	if err := os.MkdirAll(casesDir, 0o755); err != nil {
		return nil, fmt.Errorf("forget: cannot create %s: %w", casesDir, err)
	}
	keep := map[string]bool{}
	var names []string
	for _, c := range append(hand, cases...) {
		if keep[c.Name+".json"] {
			return nil, fmt.Errorf("%w: %s", errCaseName, c.Name)
		}
		b, err := encodeFile(c)
		if err != nil {
			return nil, err
		}
		keep[c.Name+".json"] = true
		names = append(names, c.Name)
		if err := os.WriteFile(filepath.Join(casesDir, c.Name+".json"), b, 0o644); err != nil {
			return nil, fmt.Errorf("forget: cannot write %s: %w", c.Name, err)
		}
	}
	entries, err := os.ReadDir(casesDir)
	if err != nil {
		return nil, fmt.Errorf("forget: cannot list %s: %w", casesDir, err)
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, oraclePrefix) && strings.HasSuffix(n, ".json") && !keep[n] {
			if err := os.Remove(filepath.Join(casesDir, n)); err != nil {
				return nil, fmt.Errorf("forget: cannot remove stale %s: %w", n, err)
			}
		}
	}
	return names, nil
}
