package mpp

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/scopehygiene/scope-hygiene/pack"
)

// Signature is the detached signature file: the manifest's digest and either an Ed25519
// signature over the exact manifest bytes or the explicit statement that the package is unsigned.
type Signature struct {
	Manifest       string `json:"manifest"`
	ManifestSHA256 string `json:"manifest_sha256"`
	Unsigned       bool   `json:"unsigned,omitempty"`
	Alg            string `json:"alg,omitempty"`
	KeyID          string `json:"key_id,omitempty"`
	Value          string `json:"value,omitempty"`
}

// KeyID names an Ed25519 public key: "ed25519:" and the first 8 bytes of its SHA-256 in hex
// (the form the service uses for its report key).
func KeyID(pub ed25519.PublicKey) string {
	s := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(s[:8])
}

// SignManifest returns the signature file for manifest bytes: signed with priv, or, with a nil
// key, explicitly unsigned.
func SignManifest(manifest []byte, priv ed25519.PrivateKey) ([]byte, error) {
	s := Signature{Manifest: ManifestName, ManifestSHA256: pack.SHA256Hex(manifest)}
	if priv == nil {
		s.Unsigned = true
	} else {
		s.Alg = "Ed25519"
		s.KeyID = KeyID(priv.Public().(ed25519.PublicKey))
		s.Value = base64.StdEncoding.EncodeToString(ed25519.Sign(priv, manifest))
	}
	return marshalLine(s)
}

// SignatureState is what a package's signature file proves, kept distinct so that nothing but a
// verified Ed25519 signature by the expected key is ever taken as signature evidence.
type SignatureState string

// Signature states.
const (
	SigVerified   SignatureState = "verified"    // Ed25519 over the manifest, by the key given
	SigInvalid    SignatureState = "invalid"     // malformed, or does not verify over the manifest
	SigUnknownKey SignatureState = "unknown_key" // signed by a key other than the one given
	SigUnsigned   SignatureState = "unsigned"    // the explicit unsigned marker
	SigMACOnly    SignatureState = "mac_only"    // a shared-secret MAC: no asymmetric evidence
	SigUnchecked  SignatureState = "unchecked"   // signed, but no key was given to check it
	SigMissing    SignatureState = "missing"     // no signature file
)

// verifySignature sets v's signature state from the package's signature file over the manifest
// bytes mb, checked with pub (nil: unchecked).
func (v *Verification) verifySignature(files map[string][]byte, mb []byte, pub ed25519.PublicKey) {
	sb, ok := files[SignatureName]
	if !ok {
		v.Signature = SigMissing
		v.bad("%s: missing (a package is signed or explicitly unsigned)", SignatureName)
		return
	}
	var s Signature
	dec := json.NewDecoder(bytes.NewReader(sb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		v.Signature = SigInvalid
		v.bad("%s: not a signature file", SignatureName)
		return
	}
	if s.Manifest != ManifestName || s.ManifestSHA256 != pack.SHA256Hex(mb) {
		v.bad("%s: names manifest digest %s; the manifest's digest is %s", SignatureName, short(s.ManifestSHA256), short(pack.SHA256Hex(mb)))
	}
	if s.Unsigned {
		v.Signature = SigUnsigned
		if s.Alg != "" || s.KeyID != "" || s.Value != "" {
			v.Signature = SigInvalid
			v.bad("%s: says unsigned and carries a signature", SignatureName)
		}
		return
	}
	v.Signed = true
	v.checkEd25519(s, mb, pub)
}

// checkEd25519 sets v's signature state from a signature that claims to be one.
func (v *Verification) checkEd25519(s Signature, mb []byte, pub ed25519.PublicKey) {
	sig, err := base64.StdEncoding.DecodeString(s.Value)
	up := strings.ToUpper(s.Alg)
	switch {
	case strings.HasPrefix(up, "HS") || strings.Contains(up, "HMAC") || strings.Contains(up, "MAC"):
		v.Signature = SigMACOnly
		v.bad("%s: %s is a shared-secret MAC, not an asymmetric signature", SignatureName, "alg")
	case s.Alg != "Ed25519" || err != nil || len(sig) != ed25519.SignatureSize:
		v.Signature = SigInvalid
		v.bad("%s: malformed Ed25519 signature", SignatureName)
	case pub == nil:
		v.Signature = SigUnchecked
		v.bad("%s: signed by %s; no key was given to check it (--key)", SignatureName, s.KeyID)
	case s.KeyID != KeyID(pub):
		v.Signature = SigUnknownKey
		v.bad("%s: signed by %s, not by the given key %s", SignatureName, s.KeyID, KeyID(pub))
	case !ed25519.Verify(pub, mb, sig):
		v.Signature = SigInvalid
		v.bad("%s: the signature does not verify over %s", SignatureName, ManifestName)
	default:
		v.Signature = SigVerified
		v.SignedBy = s.KeyID
	}
}
