package portability

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// DestinationProfile is a receiver's profile: what it accepts and requires, which items it
// knows as withdrawn, and (optionally) its free dry-run answer on the submission member.
type DestinationProfile struct {
	Destination       string           `json:"destination"`
	ProfileRef        string           `json:"profile_ref"`
	Criteria          *Pin             `json:"criteria,omitempty"`
	RecipientKeyID    string           `json:"recipient_key_id,omitempty"`
	Supported         []Representation `json:"supported"`
	RequiredSemantics []string         `json:"required_semantics"`
	Withdrawn         []string         `json:"withdrawn"`
	DryRun            *DryRun          `json:"dry_run,omitempty"`
}

// Representation is one family, form and variant a destination accepts ("" matches any).
type Representation struct {
	Family  string `json:"family"`
	Form    string `json:"form"`
	Variant string `json:"variant"`
}

// DryRun is a destination's answer on the member without any mutation (for scope-hygiene, the
// free pre-check): what it read, and each finding with its status.
type DryRun struct {
	Member   string    `json:"member"`
	Records  int       `json:"records"`
	Family   string    `json:"family"`
	Form     string    `json:"form"`
	Variant  string    `json:"variant"`
	Findings []Finding `json:"findings"`
}

// Finding is one named result of a dry run with its status and the reason the destination gave.
type Finding struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// PreflightRecord is the proposed import review: no live mutation, the unresolved losses and
// the blockers, and whether the import may be submitted.
type PreflightRecord struct {
	Destination      string   `json:"destination"`
	ProfileRef       string   `json:"profile_ref"`
	Member           string   `json:"member,omitempty"`
	UnresolvedLosses []string `json:"unresolved_losses"`
	Blockers         []string `json:"blockers"`
	Ready            bool     `json:"ready"`
	LiveMutation     bool     `json:"live_mutation"`
}

func (st *State) preflight(p DestinationProfile, now time.Time) (PreflightRecord, []string) {
	m := st.Manifest
	reasons := st.preflightRefusals(p, now)
	r := PreflightRecord{Destination: p.Destination, ProfileRef: p.ProfileRef, UnresolvedLosses: []string{}, Blockers: []string{}}
	for _, o := range m.Omissions {
		if o.Kind == pack.OmissionCompatibility {
			r.UnresolvedLosses = append(r.UnresolvedLosses, fmt.Sprintf("%s (%d)", o.Part, o.Count))
			if o.Blocking {
				r.Blockers = append(r.Blockers, fmt.Sprintf("blocking loss: %s (%d)", o.Part, o.Count))
			}
		}
	}
	r.Blockers = append(r.Blockers, st.representationBlockers(p)...)
	if d := p.DryRun; d != nil {
		r.readDryRun(m, d)
	} else if len(m.Records) > 0 {
		r.Blockers = append(r.Blockers, "no dry-run answer from the destination")
	}
	r.Ready = len(r.Blockers) == 0 && len(reasons) == 0
	return r, reasons
}

// preflightRefusals are the preconditions a preflight refuses on: the conditions expired or
// name another recipient, items the destination knows as withdrawn, semantics not bound.
func (st *State) preflightRefusals(p DestinationProfile, now time.Time) []string {
	m := st.Manifest
	var reasons []string
	c := st.Conditions
	if exp, ok := parseTime(c.ExpiresAt); !ok || !exp.After(now) {
		reasons = append(reasons, "the transfer conditions have expired")
	}
	if p.Destination != c.Recipient {
		reasons = append(reasons, fmt.Sprintf("the destination %q is not the recipient the conditions name", p.Destination))
	}
	withdrawn := map[string]bool{}
	for _, w := range p.Withdrawn {
		withdrawn[w] = true
	}
	nw := 0
	if withdrawn[m.PackageID] || withdrawn[st.RevisionRef] {
		reasons = append(reasons, "the destination lists this package or revision as withdrawn")
	}
	for _, r := range m.Records {
		if withdrawn[r.ID] {
			nw++
		}
	}
	if nw > 0 {
		reasons = append(reasons, fmt.Sprintf("%d record(s) of the package are withdrawn items at the destination (a stale package does not restore them)", nw))
	}
	var sem []string
	if st.Bind != nil {
		sem = st.Bind.Semantics
	}
	var unknown []string
	for _, s := range p.RequiredSemantics {
		if !slices.Contains(sem, s) {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) > 0 {
		reasons = append(reasons, "required semantics the package does not bind: "+strings.Join(unknown, ", "))
	}
	return reasons
}

// representationBlockers are what the destination does not accept: the representation, the
// criteria or their revision, the receipt key.
func (st *State) representationBlockers(p DestinationProfile) []string {
	m := st.Manifest
	c := st.Conditions
	var blockers []string
	ok := len(p.Supported) == 0
	for _, s := range p.Supported {
		if (s.Family == "" || s.Family == m.Family) && (s.Form == "" || s.Form == m.Form) && (s.Variant == "" || s.Variant == m.Variant) {
			ok = true
		}
	}
	if !ok {
		blockers = append(blockers, fmt.Sprintf("the destination does not accept %s/%s/%s", m.Family, m.Form, m.Variant))
	}
	if p.Criteria != nil {
		if p.Criteria.ID != m.TargetCriteriaID {
			blockers = append(blockers, fmt.Sprintf("the destination grades %s, the package targets %s", p.Criteria.ID, m.TargetCriteriaID))
		}
		if st.Bind != nil && (st.Bind.Criteria.Digest != p.Criteria.Digest || st.Bind.Criteria.Revision != p.Criteria.Revision) {
			blockers = append(blockers, fmt.Sprintf("the destination's criteria (revision %s) are not the ones bound (revision %s)", p.Criteria.Revision, st.Bind.Criteria.Revision))
		}
	}
	if c.RecipientKeyID != "" && p.RecipientKeyID != "" && c.RecipientKeyID != p.RecipientKeyID {
		blockers = append(blockers, "the destination's receipt key is not the one the conditions name")
	}
	return blockers
}

// readDryRun holds the destination's dry run to the part it names: its record count and its
// representation; every finding not assessable is an unresolved loss.
func (r *PreflightRecord) readDryRun(m *mpp.Manifest, d *DryRun) {
	r.Member = d.Member
	part := -1
	for _, mm := range m.Members {
		if mm.Path == d.Member && mm.Role == mpp.RoleSubmissionPart {
			part = mm.Records
		}
	}
	switch {
	case part < 0:
		r.Blockers = append(r.Blockers, "the dry run names no submission part of the package")
	case d.Records != part:
		r.Blockers = append(r.Blockers, fmt.Sprintf("the dry run read %d records; the part holds %d", d.Records, part))
	}
	if d.Family != m.Family || d.Form != m.Form || d.Variant != m.Variant {
		r.Blockers = append(r.Blockers, "the dry run read another family, form or variant")
	}
	for _, f := range d.Findings {
		if f.Status != "ASSESSABLE" {
			r.UnresolvedLosses = append(r.UnresolvedLosses, strings.TrimSpace(fmt.Sprintf("%s %s %s", f.Name, f.Status, f.Reason)))
		}
	}
}
