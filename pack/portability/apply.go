package portability

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
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
