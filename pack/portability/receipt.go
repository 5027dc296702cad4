package portability

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// ReceiptKindReport is the scope-hygiene signed audit report as a destination receipt.
const ReceiptKindReport = "scope-hygiene-signed-report"

// ReceiptInput is a destination receipt to attach to one attempt. The caller has checked the
// report's signature with the recipient's key (the service's signing code is not imported
// here) and says so with SignatureVerified, SignerKeyID and SignatureValue.
type ReceiptInput struct {
	AttemptID         string
	Kind              string
	Report            []byte
	SignatureVerified bool
	SignerKeyID       string
	SignatureValue    string
	// Recomputed says whether the report's figures equal a local re-evaluation of the member's
	// exact bytes under the same criteria (nil: not recomputed).
	Recomputed *bool
}

// ReceiptRecord reconciles a receipt with its attempt and says what bound it and what could not.
type ReceiptRecord struct {
	AttemptID      string   `json:"attempt_id"`
	Kind           string   `json:"receipt_kind"`
	SignerKeyID    string   `json:"signer_key_id"`
	SignatureValue string   `json:"signature_value"`
	IssuedAt       string   `json:"issued_at"`
	Member         string   `json:"member"`
	Accepted       int      `json:"accepted"`
	Rejected       int      `json:"rejected"`
	Skipped        int      `json:"skipped"`
	Pending        int      `json:"pending"`
	OutcomeState   string   `json:"outcome_state"`
	Bound          []string `json:"bound"`
	NotBound       []string `json:"not_bound"`
}

// reportHead is what a receipt check reads of a signed report.
type reportHead struct {
	CheckEnd  string `json:"check_end"`
	Signature struct {
		KeyID string `json:"key_id"`
		Value string `json:"value"`
	} `json:"signature"`
}

// notBound is what no scope-hygiene report can bind: the criteria forbid a grader-computed
// content hash, and the report names no package, revision or attempt.
var notBound = []string{
	"the report carries no package, revision or attempt identifier and no digest of the member: it is tied by the attempt record, its time window, the member's record count, named ids and figures, and its signature's uniqueness",
	"two exports of the same shape (counts, scopes, duplicate structure) give reports with equal figures: between those, only the attempt record tells which was submitted",
	"a clean report names no record ids: its tie to the member is then the count, family, form, variant and criteria only",
	"the receipt says what the destination evaluated, not that any memory was imported, kept or forgotten",
}

func (st *State) receipt(in ReceiptInput, now time.Time) (ReceiptRecord, []string) {
	r := ReceiptRecord{AttemptID: in.AttemptID, Kind: in.Kind, SignerKeyID: in.SignerKeyID, SignatureValue: in.SignatureValue, NotBound: notBound}
	a, ok := st.Attempts[in.AttemptID]
	if !ok {
		return r, []string{"no attempt " + in.AttemptID + " is recorded for this revision"}
	}
	r.Member = a.Member
	reasons, bound := st.bindReport(a, in.Kind, in.Report, in.SignatureVerified, in.SignerKeyID, in.SignatureValue, in.Recomputed)
	r.Bound = bound
	for _, x := range st.Receipts {
		if x.SignatureValue == in.SignatureValue {
			reasons = append(reasons, "another receipt (attempt "+x.AttemptID+") names this report's signature already")
		}
		if x.AttemptID == in.AttemptID {
			reasons = append(reasons, "attempt "+in.AttemptID+" has its receipt already")
		}
	}
	var h reportHead
	_ = json.Unmarshal(in.Report, &h)
	r.IssuedAt = h.CheckEnd
	var n struct {
		Records int `json:"records"`
	}
	_ = json.Unmarshal(in.Report, &n)
	r.Accepted = n.Records
	r.Skipped = max(a.MemberCount-n.Records, 0)
	r.OutcomeState = "evaluated"
	if len(reasons) > 0 {
		r.OutcomeState = "unresolved_discrepancy"
	}
	return r, reasons
}

// bindReport checks a report against an attempt: the signature (as the caller checked it) by the
// key the attempt expects, its time inside the attempt's window, and its consistency with the
// attempt's member (criteria, family, form, variant, record count, every named id).
func (st *State) bindReport(a AttemptRecord, kind string, report []byte, verified bool, keyID, sigValue string, recomputed *bool) (reasons, bound []string) {
	if kind != ReceiptKindReport {
		reasons = append(reasons, fmt.Sprintf("receipt kind %q is not known", kind))
	}
	if !verified {
		reasons = append(reasons, "the report's signature was not verified")
	} else {
		bound = append(bound, "signature verified ("+keyID+")")
	}
	if a.RecipientKey != "" {
		if keyID != a.RecipientKey {
			reasons = append(reasons, "the report is signed by "+keyID+", not by the recipient's key "+a.RecipientKey+" (another recipient)")
		} else {
			bound = append(bound, "signer is the recipient named by the conditions")
		}
	}
	var h reportHead
	if err := json.Unmarshal(report, &h); err != nil || h.Signature.Value != sigValue {
		reasons = append(reasons, "the report's signature block is not the one given")
	}
	t, ok := parseTime(h.CheckEnd)
	nb, _ := parseTime(a.NotBefore)
	na, _ := parseTime(a.NotAfter)
	if !ok || t.Before(nb) || t.After(na) {
		reasons = append(reasons, "the report's check time is outside the attempt's window")
	} else {
		bound = append(bound, "check time inside the attempt's window")
	}
	rc := mpp.CheckReport(st.Manifest, report, a.Member)
	if len(rc.Mismatches) > 0 {
		reasons = append(reasons, rc.Mismatches...)
	} else {
		bound = append(bound, fmt.Sprintf("consistent with %s: criteria, family/form/variant, %d records, %d named ids", a.Member, rc.Records, rc.IDsNamed))
	}
	switch {
	case recomputed == nil:
	case *recomputed:
		bound = append(bound, "every figure equals a local re-evaluation of the member's exact bytes under the same criteria")
	default:
		reasons = append(reasons, "the report's figures differ from a local re-evaluation of the member under the same criteria: it was made from other records")
	}
	bound = append(bound, "attempt "+a.AttemptID+" of revision "+st.RevisionRef+" for "+a.Recipient)
	return reasons, bound
}

// ReportBinding is what verification could bind a report to.
type ReportBinding struct {
	Bound     bool
	AttemptID string
	Member    string
	What      []string // what bound it
	NotBound  []string // what no report can bind
	Problems  []string // why it is not bound
}

// BindReport finds the receipt that names a report's signature in this revision's log and
// re-checks it. Without a receipt linking an attempt, the report is not bound, whatever its
// consistency with some member.
func (st *State) BindReport(report []byte, verified bool, keyID string, recomputed func(member string) *bool) *ReportBinding {
	b := &ReportBinding{NotBound: notBound}
	var h reportHead
	if err := json.Unmarshal(report, &h); err != nil || h.Signature.Value == "" {
		b.Problems = append(b.Problems, "the report carries no signature block")
		return b
	}
	var hits []ReceiptRecord
	for _, r := range st.Receipts {
		if r.SignatureValue == h.Signature.Value {
			hits = append(hits, r)
		}
	}
	switch {
	case len(hits) == 0:
		b.Problems = append(b.Problems, "no receipt of this revision's log links this report to an attempt: it is not bound to this package")
		return b
	case len(hits) > 1:
		b.Problems = append(b.Problems, fmt.Sprintf("%d receipts name this report's signature: one report proves one attempt", len(hits)))
		return b
	}
	a, ok := st.Attempts[hits[0].AttemptID]
	if !ok {
		b.Problems = append(b.Problems, "the receipt's attempt is not recorded in this revision's log")
		return b
	}
	b.AttemptID, b.Member = a.AttemptID, a.Member
	var rc *bool
	if recomputed != nil {
		rc = recomputed(a.Member)
	}
	reasons, what := st.bindReport(a, hits[0].Kind, report, verified, keyID, h.Signature.Value, rc)
	b.What = what
	b.Problems = append(b.Problems, reasons...)
	b.Bound = len(b.Problems) == 0
	return b
}
