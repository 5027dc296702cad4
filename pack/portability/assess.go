package portability

import (
	"crypto/ed25519"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

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
