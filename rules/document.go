package rules

import (
	"encoding/json"
	"fmt"
)

// Document is the published criteria document of the revision (GET /criteria): every member of
// the criteria file as JSON (texts, matrix, interpretations, corpus id and pin, price, free tier,
// caps, endpoints, ledger fields, and every rule with its expression), plus the criteria digest.
func (ps *ProgramSet) Document() (map[string]any, error) {
	doc, err := documentOf(ps.c, ps.digest)
	if err != nil {
		return nil, err
	}
	var preds, marks []documentedRule
	for i, p := range ps.recordPreds {
		if i < ps.phase1 {
			preds = append(preds, documentedRule{p.ID, p.Expr.Text})
		} else {
			marks = append(marks, documentedRule{p.ID, p.Expr.Text})
		}
	}
	rec, _ := doc["record"].(map[string]any)
	if rec == nil {
		rec = map[string]any{}
		doc["record"] = rec
	}
	rec["predicates"], rec["marks"] = preds, marks
	return doc, nil
}

// documentedRule is a compiled rule as the document lists it: its name and expression.
type documentedRule struct {
	Name string `json:"name"`
	When string `json:"when"`
}

// documentOf is the criteria document before its set adds the compiled rules: every member of the
// file c as JSON, and the criteria digest.
func documentOf(c any, digest string) (map[string]any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("criteria document: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("criteria document: %w", err)
	}
	doc["criteria_digest"] = digest
	return doc, nil
}
