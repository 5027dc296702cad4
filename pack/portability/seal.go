package portability

import (
	"crypto/ed25519"

	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

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
