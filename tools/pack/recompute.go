package main

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// reportFigures are the members of a report that depend only on the submission and the
// criteria: the figures a local re-evaluation must reproduce exactly.
var reportFigures = []string{"criteria_id", "criteria_revision", "criteria_digest", "family", "form", "variant", "records", "factors", "coverage"}

// recompute re-evaluates a package member locally with the embedded criteria, at the report's
// own check time, and says whether every figure of the report equals the local result. It
// returns nil when it cannot say: the report's criteria are not the embedded ones, or the
// member is not auditable here.
func recompute(member, report []byte) *bool {
	var head struct {
		Digest   string `json:"criteria_digest"`
		CheckEnd string `json:"check_end"`
	}
	if json.Unmarshal(report, &head) != nil {
		return nil
	}
	ps, err := rules.Default()
	if err != nil || ps.Digest() != head.Digest {
		return nil
	}
	at, err := time.Parse(time.RFC3339, head.CheckEnd)
	if err != nil {
		return nil
	}
	local, ref, err := evaluator.Audit(ps, member, at)
	if err != nil || ref != nil {
		return nil
	}
	lb, err := json.Marshal(local)
	if err != nil {
		return nil
	}
	same := figures(lb) != nil && bytes.Equal(figures(lb), figures(report))
	return &same
}

// figures is the canonical form of the report members in reportFigures.
func figures(doc []byte) []byte {
	var all map[string]json.RawMessage
	if json.Unmarshal(doc, &all) != nil {
		return nil
	}
	keep := map[string]json.RawMessage{}
	for _, k := range reportFigures {
		if v, ok := all[k]; ok {
			keep[k] = v
		}
	}
	raw, err := json.Marshal(keep)
	if err != nil {
		return nil
	}
	c, err := jcs.Transform(raw)
	if err != nil {
		return nil
	}
	return c
}
