package rules

import (
	"encoding/json"
	"fmt"
)

// Document is the published criteria document of the revision (GET /criteria): every member of
// the criteria file as JSON (texts, matrix, interpretations, corpus id and pin, price, free tier,
// caps, endpoints, ledger fields, and every rule with its expression), plus the criteria digest.
func (ps *ProgramSet) Document() (map[string]any, error) {
	b, err := json.Marshal(ps.c)
	if err != nil {
		return nil, fmt.Errorf("criteria document: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("criteria document: %w", err)
	}
	type named struct {
		Name string `json:"name"`
		When string `json:"when"`
	}
	var preds, marks []named
	for i, p := range ps.recordPreds {
		if i < ps.phase1 {
			preds = append(preds, named{p.ID, p.Expr.Text})
		} else {
			marks = append(marks, named{p.ID, p.Expr.Text})
		}
	}
	rec, _ := doc["record"].(map[string]any)
	if rec == nil {
		rec = map[string]any{}
		doc["record"] = rec
	}
	rec["predicates"], rec["marks"] = preds, marks
	doc["criteria_digest"] = ps.digest
	return doc, nil
}
