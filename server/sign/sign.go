// Package sign signs and verifies the service's results: Ed25519 over the RFC 8785 (JCS)
// canonical form of the result without its signature block. A signed document is itself the JCS
// form of the result plus the member "signature": {"alg": "Ed25519", "key_id", "value"}, so any
// changed byte of a saved document fails verification.
package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Alg is the only signature algorithm.
const Alg = "Ed25519"

// Member is the name of the signature block in a signed document.
const Member = "signature"

// Verification failures, distinguishable by errors.Is.
var (
	ErrNotJSON      = errors.New("not a JSON object")
	ErrNotCanonical = errors.New("document bytes are not the signed canonical form (a byte was changed, added or removed)")
	ErrUnsigned     = errors.New("document carries no signature block")
	ErrBadBlock     = errors.New("signature block malformed")
	ErrUnknownKey   = errors.New("signature names a key id other than the given key")
	ErrBadSignature = errors.New("signature does not verify")
)

// Block is the signature block of a signed document.
type Block struct {
	Alg   string `json:"alg"`
	KeyID string `json:"key_id"`
	Value string `json:"value"`
}

// PublicKey is a signing key as GET /criteria publishes it.
type PublicKey struct {
	Alg       string `json:"alg"`
	KeyID     string `json:"key_id"`
	PublicKey string `json:"public_key"` // standard base64 of the 32 raw key bytes
}

// KeyID is the key id of pub: the first 16 hex digits of SHA-256 over the raw key bytes.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(sum[:8])
}

// Publish renders pub as /criteria publishes it.
func Publish(pub ed25519.PublicKey) PublicKey {
	return PublicKey{Alg: Alg, KeyID: KeyID(pub), PublicKey: base64.StdEncoding.EncodeToString(pub)}
}

// Decode parses a published key and checks its id.
func (p PublicKey) Decode() (ed25519.PublicKey, error) {
	if p.Alg != Alg {
		return nil, fmt.Errorf("published key: alg %q, want %s", p.Alg, Alg)
	}
	raw, err := base64.StdEncoding.DecodeString(p.PublicKey)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("published key: public_key is not 32 base64 bytes")
	}
	pub := ed25519.PublicKey(raw)
	if KeyID(pub) != p.KeyID {
		return nil, errors.New("published key: key_id does not match the key")
	}
	return pub, nil
}

// Signer signs results with one Ed25519 key.
type Signer struct {
	priv ed25519.PrivateKey
	id   string
}

// NewSigner wraps a private key.
func NewSigner(priv ed25519.PrivateKey) *Signer {
	return &Signer{priv: priv, id: KeyID(priv.Public().(ed25519.PublicKey))}
}

// KeyID is the signer's key id.
func (s *Signer) KeyID() string { return s.id }

// Public is the signer's public key.
func (s *Signer) Public() ed25519.PublicKey { return s.priv.Public().(ed25519.PublicKey) }

// Canonical returns the JCS form of v, which must marshal to a JSON object.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sign: marshal: %w", err)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("sign: %w", ErrNotJSON)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, errors.New("sign: canonicalize failed") // jcs errors quote input: keep them out
	}
	return out, nil
}

// Verify checks a signed document against pub. It fails unless doc is byte for byte the
// canonical form a Signer produces and the signature verifies under pub.
func Verify(doc []byte, pub ed25519.PublicKey) (Block, error) {
	b, body, sig, err := Message(doc)
	if err != nil {
		return b, err
	}
	if b.KeyID != KeyID(pub) {
		return b, ErrUnknownKey
	}
	if !ed25519.Verify(pub, body, sig) {
		return b, ErrBadSignature
	}
	return b, nil
}

// Message performs every check of Verify that needs no key: doc must be byte for byte its own
// canonical form and carry a well-formed signature block. It returns the block, the signed
// message (the canonical form without the signature member) and the raw signature, so that a
// verifier elsewhere (the web page's WebCrypto) checks exactly what Verify checks.
func Message(doc []byte) (Block, []byte, []byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil || members == nil {
		return Block{}, nil, nil, ErrNotJSON
	}
	canon, err := jcs.Transform(doc)
	if err != nil || !bytes.Equal(canon, doc) {
		return Block{}, nil, nil, ErrNotCanonical
	}
	raw, ok := members[Member]
	if !ok {
		return Block{}, nil, nil, ErrUnsigned
	}
	b, err := parseBlock(raw)
	if err != nil {
		return Block{}, nil, nil, err
	}
	sig, err := base64.StdEncoding.DecodeString(b.Value)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return b, nil, nil, ErrBadBlock
	}
	delete(members, Member)
	body, err := Canonical(members)
	if err != nil {
		return b, nil, nil, err
	}
	return b, body, sig, nil
}

// parseBlock reads a signature block strictly: exactly the members alg, key_id and value, all
// strings, member names matched exactly (encoding/json alone would match them case-insensitively).
func parseBlock(raw json.RawMessage) (Block, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 3 {
		return Block{}, ErrBadBlock
	}
	var b Block
	for name, dst := range map[string]*string{"alg": &b.Alg, "key_id": &b.KeyID, "value": &b.Value} {
		v, ok := m[name]
		if !ok || json.Unmarshal(v, dst) != nil {
			return Block{}, ErrBadBlock
		}
	}
	if b.Alg != Alg {
		return Block{}, ErrBadBlock
	}
	return b, nil
}
