package portability

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// Pin names a schema, vocabulary or criteria document by id, revision and digest.
type Pin struct {
	ID       string `json:"id"`
	Revision string `json:"revision"`
	Digest   string `json:"digest"`
}

// BindInput is the representation metadata to bind: the criteria the submission is written
// for, the schemas that define the files, and any further semantics the curator asserts.
type BindInput struct {
	Criteria  Pin
	Schemas   []Pin
	Semantics []string
}

// BindRecord is the versioned semantic binding and loss report.
type BindRecord struct {
	Family          string     `json:"family"`
	Form            string     `json:"form"`
	Variant         string     `json:"variant"`
	Criteria        Pin        `json:"criteria"`
	Schemas         []Pin      `json:"schemas"`
	Semantics       []string   `json:"semantics"`
	Transformations []string   `json:"transformations"`
	LossReport      LossReport `json:"loss_report"`
}

// LossReport is what the representation could not carry: the manifest's omissions, totalled.
type LossReport struct {
	Blocking    int             `json:"blocking"`
	NonBlocking int             `json:"non_blocking"`
	Parts       []pack.Omission `json:"parts"`
}

func (st *State) bind(in BindInput) (BindRecord, []string) {
	m := st.Manifest
	var reasons []string
	if in.Criteria.ID != m.TargetCriteriaID {
		reasons = append(reasons, fmt.Sprintf("the criteria pin %q is not the package's target %q", in.Criteria.ID, m.TargetCriteriaID))
	}
	for _, p := range append([]Pin{in.Criteria}, in.Schemas...) {
		if p.ID == "" || p.Revision == "" || !strings.HasPrefix(p.Digest, "sha256:") {
			reasons = append(reasons, "every pin names an id, a revision and a sha256: digest")
			break
		}
	}
	sem := []string{"submission:" + m.TargetCriteriaID, "family:" + m.Family, "form:" + m.Form, "variant:" + m.Variant}
	sem = append(sem, in.Semantics...)
	sort.Strings(sem)
	sem = slices.Compact(sem)
	tr := []string{"native " + m.SourceSystem + " dump converted to a " + m.TargetCriteriaID + " submission by pack " + m.PackVersion}
	if m.Form == pack.FormHashOnly {
		tr = append(tr, "content_text replaced by content_hash (SHA-256 of the exact UTF-8 text); fields the audit does not read dropped")
	}
	if m.NamePolicy == mpp.NamesLabelled {
		tr = append(tr, "input file names replaced by positional labels")
	}
	lr := LossReport{Blocking: m.Totals.OmissionsBlocking, NonBlocking: m.Totals.OmissionsNonBlocking, Parts: m.Omissions}
	if lr.Parts == nil {
		lr.Parts = []pack.Omission{}
	}
	if in.Schemas == nil {
		in.Schemas = []Pin{}
	}
	return BindRecord{Family: m.Family, Form: m.Form, Variant: m.Variant, Criteria: in.Criteria, Schemas: in.Schemas, Semantics: sem, Transformations: tr, LossReport: lr}, reasons
}
