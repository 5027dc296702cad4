package portability

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// Actor is who runs an operation and why: a role of the lifecycle profile, the intended purpose
// and the reference of the decision that authorised it.
type Actor struct {
	Role, Purpose, DecisionRef string
}

// Request is one operation on a package revision. ExpectRevision is the revision reference the
// caller believes current (an optimistic check: a mismatch is refused and nothing is written);
// ExpectHead, when set, is the log head the caller last saw. Exactly the input of Op is set.
type Request struct {
	Op             string
	Actor          Actor
	ExpectRevision string
	ExpectHead     string
	Time           time.Time

	Describe   *DescribeInput
	Bind       *BindInput
	Seal       *SealInput
	Assess     *AssessInput
	Conditions *ConditionsInput
	Preflight  *DestinationProfile
	Attempt    *AttemptInput
	Receipt    *ReceiptInput
	Supersede  *SupersedeInput
	Close      *CloseInput // withdraw and dispose
}

// ErrStale is returned when the expected revision or log head is not the current one.
var ErrStale = errors.New("portability: the package revision or its log moved on since you read it (optimistic check): read it again")

// Refusal is a precondition that failed after the caller was allowed to ask: it is recorded in
// the log (result refused) and returned.
type Refusal struct{ Reasons []string }

func (r *Refusal) Error() string {
	return "portability: refused: " + strings.Join(r.Reasons, "; ")
}

// Apply runs one operation against the replayed state and returns the log line to append (the
// caller appends it and nothing else; no sealed byte is ever written). A request the lifecycle
// denies, or a stale one, returns an error and no line; a refusal returns the line recording it
// and a *Refusal. files are the revision's sealed files, read again by the caller.
func Apply(st *State, files map[string][]byte, req Request, priv ed25519.PrivateKey) ([]byte, *Event, error) {
	if priv == nil {
		return nil, nil, errors.New("portability: every event is signed: a signing key is required")
	}
	if req.ExpectRevision != st.RevisionRef || (req.ExpectHead != "" && req.ExpectHead != st.Head) {
		return nil, nil, ErrStale
	}
	if mb := files[mpp.ManifestName]; "sha256:"+pack.SHA256Hex(mb) != st.RevisionRef {
		return nil, nil, ErrStale
	}
	if len(st.Problems) > 0 || st.Untrusted > 0 {
		return nil, nil, fmt.Errorf("portability: the log holds %d problem(s) (first: %s): no operation is appended to it", len(st.Problems), firstOr(st.Problems, "an untrusted event"))
	}
	if req.Actor.Purpose == "" || req.Actor.DecisionRef == "" {
		return nil, nil, errors.New("portability: an operation states its purpose and decision reference")
	}
	if req.Time.IsZero() {
		return nil, nil, errors.New("portability: an operation states its time")
	}
	if err := st.allowed(req.Op, req.Actor.Role); err != nil {
		return nil, nil, fmt.Errorf("portability: %w", err)
	}
	rec, result, reasons, err := st.run(files, req)
	if err != nil {
		return nil, nil, err
	}
	o, _ := lifecycle.Op(req.Op)
	after := st.Lifecycle
	if len(reasons) > 0 {
		result = ResultRefused
		rec = RefusalRecord{Refused: reasons}
	} else if o.To != "" {
		after = o.To
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, nil, fmt.Errorf("portability: record: %w", err)
	}
	e := Event{
		Seq: len(st.Events), Prev: st.Head, Op: req.Op, PackageID: st.PackageID, Revision: st.Revision,
		RevisionRef: st.RevisionRef, ActorRole: req.Actor.Role, Purpose: req.Actor.Purpose,
		DecisionRef: req.Actor.DecisionRef, Time: req.Time.UTC().Format(time.RFC3339), Result: result,
		StateBefore: st.Lifecycle, StateAfter: after, Record: raw,
	}
	line, err := signEvent(e, priv)
	if err != nil {
		return nil, nil, err
	}
	if len(reasons) > 0 {
		return line, &e, &Refusal{Reasons: reasons}
	}
	return line, &e, nil
}

func firstOr(s []string, d string) string {
	if len(s) > 0 {
		return s[0]
	}
	return d
}

// RefusalRecord is the record of a refused operation: the preconditions that failed.
type RefusalRecord struct {
	Refused []string `json:"refused"`
}

// run computes an operation's record; reasons are the failed preconditions (a refusal).
func (st *State) run(files map[string][]byte, req Request) (rec any, result string, reasons []string, err error) {
	missing := errors.New("portability: " + req.Op + ": its input is missing")
	result = ResultRecorded
	switch req.Op {
	case "describe":
		if req.Describe == nil {
			return nil, "", nil, missing
		}
		rec, reasons = st.describe(*req.Describe)
	case "bind":
		if req.Bind == nil {
			return nil, "", nil, missing
		}
		rec, reasons = st.bind(*req.Bind)
	case "seal":
		if req.Seal == nil {
			return nil, "", nil, missing
		}
		rec, reasons = st.seal(files, *req.Seal)
	case "assess":
		if req.Assess == nil {
			return nil, "", nil, missing
		}
		rec = st.assess(files, *req.Assess, req.Time)
	case "conditions":
		if req.Conditions == nil {
			return nil, "", nil, missing
		}
		rec, reasons = st.conditions(*req.Conditions, req.Time)
	case "preflight":
		if req.Preflight == nil {
			return nil, "", nil, missing
		}
		var p PreflightRecord
		p, reasons = st.preflight(*req.Preflight, req.Time)
		if !p.Ready {
			result = ResultBlocked
		}
		rec = p
	case "attempt":
		if req.Attempt == nil {
			return nil, "", nil, missing
		}
		rec, reasons = st.attempt(files, *req.Attempt, req.Time)
	case "receipt":
		if req.Receipt == nil {
			return nil, "", nil, missing
		}
		rec, reasons = st.receipt(*req.Receipt, req.Time)
	case "supersede":
		if req.Supersede == nil {
			return nil, "", nil, missing
		}
		rec, reasons = st.supersede(*req.Supersede)
	case "withdraw", "dispose":
		if req.Close == nil {
			return nil, "", nil, missing
		}
		rec, reasons = st.close(req.Op, *req.Close)
	default:
		return nil, "", nil, fmt.Errorf("portability: operation %q is not known", req.Op)
	}
	return rec, result, reasons, nil
}

// DescribeInput is the curator's evidence of the selection: the source snapshot it was taken
// from, the query or rule that selected it, and (refused) a delta baseline.
type DescribeInput struct {
	SnapshotRef       string
	SelectionQueryRef string
	BaselineRef       string
	CaptureInterval   string
}

// DescribeRecord is the draft description of the selected export.
type DescribeRecord struct {
	SnapshotRef          string         `json:"snapshot_ref"`
	SelectionQueryRef    string         `json:"selection_query_ref,omitempty"`
	CaptureInterval      string         `json:"capture_interval,omitempty"`
	CaptureTime          string         `json:"capture_time"`
	Cutoff               string         `json:"cutoff"`
	SourceSystem         string         `json:"source_system"`
	PackageKind          string         `json:"package_kind"`
	CompletenessState    string         `json:"completeness_state"`
	EmptySelectionReason string         `json:"empty_selection_reason,omitempty"`
	Members              int            `json:"members"`
	Records              int            `json:"records"`
	RecordsByClass       map[string]int `json:"records_by_class"`
	OmissionsBlocking    int            `json:"omissions_blocking"`
	OmissionsNonBlocking int            `json:"omissions_non_blocking"`
	NamePolicy           string         `json:"name_policy"`
}

func (st *State) describe(in DescribeInput) (DescribeRecord, []string) {
	m := st.Manifest
	var reasons []string
	if strings.TrimSpace(in.SnapshotRef) == "" {
		reasons = append(reasons, "unidentified source revision: no snapshot reference was given")
	}
	if in.BaselineRef != "" {
		reasons = append(reasons, "a delta against a baseline is not supported: this profile packages snapshots and selections")
	}
	r := DescribeRecord{
		SnapshotRef: in.SnapshotRef, SelectionQueryRef: in.SelectionQueryRef, CaptureInterval: in.CaptureInterval,
		CaptureTime: m.CaptureTime, Cutoff: m.Cutoff, SourceSystem: m.SourceSystem, PackageKind: m.PackageKind,
		EmptySelectionReason: m.EmptySelection, Members: len(m.Members), Records: len(m.Records),
		RecordsByClass: map[string]int{}, OmissionsBlocking: m.Totals.OmissionsBlocking,
		OmissionsNonBlocking: m.Totals.OmissionsNonBlocking, NamePolicy: m.NamePolicy,
	}
	for _, rec := range m.Records {
		r.RecordsByClass[rec.Class]++
	}
	switch {
	case len(m.Records) == 0:
		r.CompletenessState = "empty_selection"
	case m.Totals.OmissionsBlocking > 0:
		r.CompletenessState = "incomplete"
	case m.PackageKind == mpp.KindSelection:
		if in.SelectionQueryRef == "" {
			reasons = append(reasons, "a selection names the query or rule that selected it")
		}
		r.CompletenessState = "selection"
	default:
		r.CompletenessState = "complete_snapshot"
	}
	return r, reasons
}

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

// SealInput is the key the package's manifest signature is checked with (nil: the package
// must be declared unsigned).
type SealInput struct {
	PackageKey ed25519.PublicKey
}

// SealRecord is the evidence a revision was sealed: its reference and its signature state.
type SealRecord struct {
	RevisionRef    string             `json:"revision_ref"`
	SignatureState mpp.SignatureState `json:"signature_state"`
	SignedBy       string             `json:"signed_by,omitempty"`
	Members        int                `json:"members"`
	PriorRevision  string             `json:"prior_revision_ref,omitempty"`
}

func (st *State) seal(files map[string][]byte, in SealInput) (SealRecord, []string) {
	v := mpp.Verify(files, in.PackageKey, nil)
	r := SealRecord{RevisionRef: st.RevisionRef, SignatureState: v.Signature, SignedBy: v.SignedBy, Members: len(st.Manifest.Members), PriorRevision: st.Manifest.PriorRevisionRef}
	var reasons []string
	for _, mm := range v.Mismatches {
		reasons = append(reasons, "the package does not verify: "+mm)
	}
	if v.Signature != mpp.SigVerified && v.Signature != mpp.SigUnsigned {
		reasons = append(reasons, "signature state "+string(v.Signature)+": a sealed revision is verified by its key or declared unsigned")
	}
	return r, reasons
}

// AssessInput is the integrity reviewer's verification policy: the key the manifest must be
// signed by (nil: none trusted) and the evaluator's name.
type AssessInput struct {
	TrustedKey ed25519.PublicKey
	Evaluator  string
}

// AssessRecord keeps completeness, digest, signature and trust dispositions apart.
type AssessRecord struct {
	Completeness   string             `json:"completeness"`
	Digests        string             `json:"digests"`
	Signature      mpp.SignatureState `json:"signature"`
	SignedBy       string             `json:"signed_by,omitempty"`
	Trust          string             `json:"trust"`
	MismatchCount  int                `json:"mismatch_count"`
	Evaluator      string             `json:"evaluator"`
	VerifiedAt     string             `json:"verified_at"`
	NotEvidenceFor []string           `json:"not_evidence_for"`
}

func (st *State) assess(files map[string][]byte, in AssessInput, now time.Time) AssessRecord {
	v := mpp.Verify(files, in.TrustedKey, nil)
	r := AssessRecord{Completeness: "complete", Digests: "verified", Signature: v.Signature, SignedBy: v.SignedBy, Trust: "not_accepted",
		Evaluator: in.Evaluator, VerifiedAt: now.UTC().Format(time.RFC3339),
		NotEvidenceFor: []string{"truth of the memories", "consent", "import success"}}
	for _, mm := range v.Mismatches {
		switch {
		case strings.Contains(mm, "missing from the package") || strings.Contains(mm, "not listed in the manifest"):
			r.Completeness = "incomplete"
			r.MismatchCount++
		case strings.HasPrefix(mm, mpp.SignatureName):
		default:
			r.Digests = "mismatch"
			r.MismatchCount++
		}
	}
	if r.Evaluator == "" {
		r.Evaluator = "pack/portability (pack " + pack.Version + ")"
	}
	if v.Signature == mpp.SigVerified && r.Completeness == "complete" && r.Digests == "verified" {
		r.Trust = "accepted"
	}
	return r
}

// ConditionsInput are the transfer conditions the policy reviewer attaches (never issues).
type ConditionsInput struct {
	Recipient      string
	RecipientKeyID string // the key the recipient's receipts are signed with
	Tenant         string
	Purpose        string
	GrantRef       string
	PolicyRef      string
	Duties         []string
	Prohibitions   []string
	ExpiresAt      time.Time
}

// ConditionsRecord is the scoped authority evidence for this revision.
type ConditionsRecord struct {
	Recipient      string   `json:"recipient"`
	RecipientKeyID string   `json:"recipient_key_id,omitempty"`
	Tenant         string   `json:"tenant,omitempty"`
	Purpose        string   `json:"purpose"`
	GrantRef       string   `json:"grant_ref,omitempty"`
	PolicyRef      string   `json:"policy_ref,omitempty"`
	Duties         []string `json:"duties"`
	Prohibitions   []string `json:"prohibitions"`
	ExpiresAt      string   `json:"expires_at"`
	FailClosed     string   `json:"fail_closed"`
	Issued         bool     `json:"grant_issued_here"`
}

func (st *State) conditions(in ConditionsInput, now time.Time) (ConditionsRecord, []string) {
	var reasons []string
	if in.Recipient == "" || in.Purpose == "" {
		reasons = append(reasons, "conditions name the recipient and the purpose")
	}
	if in.GrantRef == "" && in.PolicyRef == "" {
		reasons = append(reasons, "unscoped: no grant or policy reference permits this export")
	}
	if in.ExpiresAt.IsZero() || !in.ExpiresAt.After(now) {
		reasons = append(reasons, "the conditions have no expiry or have expired")
	}
	r := ConditionsRecord{Recipient: in.Recipient, RecipientKeyID: in.RecipientKeyID, Tenant: in.Tenant, Purpose: in.Purpose,
		GrantRef: in.GrantRef, PolicyRef: in.PolicyRef, Duties: orEmpty(in.Duties), Prohibitions: orEmpty(in.Prohibitions),
		ExpiresAt:  in.ExpiresAt.UTC().Format(time.RFC3339),
		FailClosed: "after expiry, withdrawal or when authority cannot be rechecked: preflight and attempts are refused"}
	return r, reasons
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

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
	r := PreflightRecord{Destination: p.Destination, ProfileRef: p.ProfileRef, UnresolvedLosses: []string{}, Blockers: []string{}}
	for _, o := range m.Omissions {
		if o.Kind == pack.OmissionCompatibility {
			r.UnresolvedLosses = append(r.UnresolvedLosses, fmt.Sprintf("%s (%d)", o.Part, o.Count))
			if o.Blocking {
				r.Blockers = append(r.Blockers, fmt.Sprintf("blocking loss: %s (%d)", o.Part, o.Count))
			}
		}
	}
	ok := len(p.Supported) == 0
	for _, s := range p.Supported {
		if (s.Family == "" || s.Family == m.Family) && (s.Form == "" || s.Form == m.Form) && (s.Variant == "" || s.Variant == m.Variant) {
			ok = true
		}
	}
	if !ok {
		r.Blockers = append(r.Blockers, fmt.Sprintf("the destination does not accept %s/%s/%s", m.Family, m.Form, m.Variant))
	}
	if p.Criteria != nil {
		if p.Criteria.ID != m.TargetCriteriaID {
			r.Blockers = append(r.Blockers, fmt.Sprintf("the destination grades %s, the package targets %s", p.Criteria.ID, m.TargetCriteriaID))
		}
		if st.Bind != nil && (st.Bind.Criteria.Digest != p.Criteria.Digest || st.Bind.Criteria.Revision != p.Criteria.Revision) {
			r.Blockers = append(r.Blockers, fmt.Sprintf("the destination's criteria (revision %s) are not the ones bound (revision %s)", p.Criteria.Revision, st.Bind.Criteria.Revision))
		}
	}
	if c.RecipientKeyID != "" && p.RecipientKeyID != "" && c.RecipientKeyID != p.RecipientKeyID {
		r.Blockers = append(r.Blockers, "the destination's receipt key is not the one the conditions name")
	}
	if d := p.DryRun; d != nil {
		r.Member = d.Member
		part := -1
		for _, mm := range m.Members {
			if mm.Path == d.Member && mm.Role == "submission_part" {
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
	} else if len(m.Records) > 0 {
		r.Blockers = append(r.Blockers, "no dry-run answer from the destination")
	}
	r.Ready = len(r.Blockers) == 0 && len(reasons) == 0
	return r, reasons
}

// AttemptInput is an import attempt the custodian records before submitting.
type AttemptInput struct {
	AttemptID string // empty: a fresh one
	Recipient string
	Member    string
	NotBefore time.Time
	NotAfter  time.Time
}

// AttemptRecord is a recorded import attempt: one recipient, one revision, one member.
type AttemptRecord struct {
	AttemptID    string `json:"attempt_id"`
	Recipient    string `json:"recipient"`
	RecipientKey string `json:"recipient_key_id,omitempty"`
	Member       string `json:"member"`
	MemberSHA256 string `json:"member_sha256"`
	MemberCount  int    `json:"member_records"`
	NotBefore    string `json:"not_before"`
	NotAfter     string `json:"not_after"`
}

func (st *State) attempt(files map[string][]byte, in AttemptInput, now time.Time) (AttemptRecord, []string) {
	var reasons []string
	c := st.Conditions
	if st.Preflight == nil || !st.Preflight.Ready {
		reasons = append(reasons, "the last preflight is not ready: an attempt follows a clean receiver review")
	}
	if exp, ok := parseTime(c.ExpiresAt); !ok || !exp.After(now) || in.NotAfter.After(exp) {
		reasons = append(reasons, "the transfer conditions expire before the attempt's window ends")
	}
	if in.Recipient != c.Recipient {
		reasons = append(reasons, "the attempt's recipient is not the one the conditions name")
	}
	if !in.NotBefore.Before(in.NotAfter) {
		reasons = append(reasons, "the attempt's window is empty")
	}
	if in.AttemptID == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		in.AttemptID = "attempt-" + hex.EncodeToString(b[:])
	}
	if _, dup := st.Attempts[in.AttemptID]; dup {
		reasons = append(reasons, "the attempt id is recorded already")
	}
	r := AttemptRecord{AttemptID: in.AttemptID, Recipient: in.Recipient, RecipientKey: c.RecipientKeyID, Member: in.Member,
		NotBefore: in.NotBefore.UTC().Format(time.RFC3339), NotAfter: in.NotAfter.UTC().Format(time.RFC3339)}
	found := false
	for _, mm := range st.Manifest.Members {
		if mm.Path == in.Member && mm.Role == "submission_part" {
			found = true
			r.MemberSHA256, r.MemberCount = mm.SHA256, mm.Records
			if b, ok := files[mm.Path]; !ok || pack.SHA256Hex(b) != mm.SHA256 {
				reasons = append(reasons, "the member's bytes are not the sealed ones")
			}
		}
	}
	if !found {
		reasons = append(reasons, "the attempt names no submission part of the package")
	}
	return r, reasons
}

// SupersedeInput is the successor revision's manifest.
type SupersedeInput struct {
	Successor []byte
	Reason    string
}

// SupersedeRecord links a sealed revision to the revision that supersedes it.
type SupersedeRecord struct {
	SuccessorRevision    int    `json:"successor_revision"`
	SuccessorRevisionRef string `json:"successor_revision_ref"`
	Reason               string `json:"supersession_reason"`
}

func (st *State) supersede(in SupersedeInput) (SupersedeRecord, []string) {
	var m mpp.Manifest
	var reasons []string
	if err := json.Unmarshal(in.Successor, &m); err != nil {
		return SupersedeRecord{}, []string{"the successor is not a package manifest"}
	}
	r := SupersedeRecord{SuccessorRevision: m.Revision, SuccessorRevisionRef: "sha256:" + pack.SHA256Hex(in.Successor), Reason: in.Reason}
	if m.PackageID != st.PackageID || m.Revision != st.Revision+1 || m.PriorRevisionRef != st.RevisionRef {
		reasons = append(reasons, fmt.Sprintf("the successor is not revision %d of this package naming this revision as its prior", st.Revision+1))
	}
	if in.Reason == "" {
		reasons = append(reasons, "a supersession states its reason")
	}
	return r, reasons
}

// CloseInput is a withdrawal or disposal: its reason, the notice or retention policy it follows
// and any holds (an active hold refuses disposal).
type CloseInput struct {
	Reason             string
	NoticeRef          string
	RetentionPolicyRef string
	Holds              []string
}

// CloseRecord is a local withdrawal or disposal: a minimal tombstone that claims nothing about
// the source store or any recipient.
type CloseRecord struct {
	Reason             string `json:"reason"`
	NoticeRef          string `json:"withdrawal_notice_ref,omitempty"`
	RetentionPolicyRef string `json:"retention_policy_ref,omitempty"`
	Tombstone          string `json:"tombstone"`
	RemoteEffect       string `json:"remote_effect"`
}

func (st *State) close(op string, in CloseInput) (CloseRecord, []string) {
	var reasons []string
	if in.Reason == "" {
		reasons = append(reasons, op+" states its reason")
	}
	if op == "dispose" {
		if in.RetentionPolicyRef == "" {
			reasons = append(reasons, "disposal follows a retention policy: name it")
		}
		if len(in.Holds) > 0 {
			reasons = append(reasons, fmt.Sprintf("%d hold(s) are active: disposal waits", len(in.Holds)))
		}
	}
	return CloseRecord{Reason: in.Reason, NoticeRef: in.NoticeRef, RetentionPolicyRef: in.RetentionPolicyRef,
		Tombstone:    fmt.Sprintf("%s revision %d %s", st.PackageID, st.Revision, st.RevisionRef),
		RemoteEffect: "none claimed: a local " + op + " neither deletes source memory nor proves that any recipient forgot it"}, reasons
}
