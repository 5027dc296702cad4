// Package revdiff says, case by case and field by field in words, how the outcomes of a pinned
// corpus change between two revisions of one kind of criteria.
package revdiff

import (
	"encoding/json"
	"errors"
	"sort"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// Change is one field of one case whose value differs between two criteria files, in words.
type Change struct{ Field, Old, New string }

// CaseChange is one case whose outcome differs between two criteria files, and how.
type CaseChange struct {
	Case    string
	Changes []Change
}

// Corpus runs every case of c through older and newer and returns, in corpus order, the cases
// whose outcome differs. A case whose export cannot be read ends the run: the cases before it
// are returned with its error, as corpus reports it.
func Corpus(older, newer rules.Served, c *corpus.Corpus) ([]CaseChange, error) {
	var out []CaseChange
	for i := range c.Cases {
		cs := &c.Cases[i]
		body, err := cs.RequestBody()
		if err != nil {
			return out, err
		}
		a, errA := outcomeOf(older, body)
		b, errB := outcomeOf(newer, body)
		if changes := outcomeChanges(comparable(a, errA), comparable(b, errB)); len(changes) > 0 {
			out = append(out, CaseChange{Case: cs.Name, Changes: changes})
		}
	}
	return out, nil
}

// outcomeOf runs one export through the engine of the criteria's kind.
func outcomeOf(s rules.Served, body []byte) (map[string]any, error) {
	if ms, ok := s.(*rules.MutLogSet); ok {
		return corpus.OutcomeMutLog(ms, body, nil)
	}
	return corpus.Outcome(s.(*rules.ProgramSet), body, nil)
}

// outcomeChanges lists, in field order, every leaf of two outcomes (generic JSON) that differs. A
// part (refusal, pre-check, audit) present on one side only is one line, not one per field.
func outcomeChanges(a, b any) []Change {
	ma, _ := a.(map[string]any)
	mb, _ := b.(map[string]any)
	var out []Change
	for _, part := range []string{"error", "refusal", "precheck", "audit"} {
		pa, oka := ma[part]
		pb, okb := mb[part]
		if oka == okb {
			continue
		}
		out = append(out, Change{Field: partWords[part], Old: partText(part, pa, oka), New: partText(part, pb, okb)})
		delete(ma, part)
		delete(mb, part)
	}
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", ma, fa)
	flatten("", mb, fb)
	// verdict_prefix is the verdict line without its check-end time; the line says it once.
	delete(fa, "audit.verdict_prefix")
	delete(fb, "audit.verdict_prefix")
	keys := make([]string, 0, len(fa)+len(fb))
	for k := range fa {
		keys = append(keys, k)
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		va, oka := fa[k]
		vb, okb := fb[k]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "(absent)"
		}
		if !okb {
			vb = "(absent)"
		}
		out = append(out, Change{Field: fieldWords(k), Old: va, New: vb})
	}
	return out
}

// comparable drops what differs between any two criteria files (their digests) from an outcome.
func comparable(o map[string]any, err error) any {
	if err != nil {
		return map[string]any{"error": errors.Unwrap(err) != nil}
	}
	b, _ := json.Marshal(o)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, part := range []string{"precheck", "audit"} {
		if p, ok := m[part].(map[string]any); ok {
			delete(p, "criteria_digest")
			delete(p, "criteria_revision")
		}
	}
	return m
}
