package client

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/sign"
)

// Verified is what a successful verification establishes.
type Verified struct {
	// KeyID names the key that signed.
	KeyID string
	// Kind is the document's kind (audit_report, precheck_result, ...).
	Kind string
	// CriteriaRevision is the revision the document was produced under.
	CriteriaRevision string
}

// Verify checks a saved signed document byte for byte against pub.
func Verify(doc []byte, pub ed25519.PublicKey) (*Verified, error) {
	blk, err := sign.Verify(doc, pub)
	if err != nil {
		return nil, &Error{Kind: KindVerify, Msg: "client: the signed result does not verify against the published key"}
	}
	var head struct {
		Kind     string `json:"kind"`
		Revision string `json:"criteria_revision"`
	}
	_ = json.Unmarshal(doc, &head)
	return &Verified{KeyID: blk.KeyID, Kind: head.Kind, CriteriaRevision: head.Revision}, nil
}

// ErrNoWallet is returned by LoadWallet for an unreadable keypair file.
var ErrNoWallet = errors.New("client: the wallet file is not a solana-keygen JSON keypair")

// LoadWallet reads a solana-keygen JSON keypair file (a JSON array of 64 byte values).
func LoadWallet(path string) (solana.PrivateKey, error) {
	k, err := solana.PrivateKeyFromSolanaKeygenFile(path)
	if err != nil || len(k) != ed25519.PrivateKeySize {
		return nil, ErrNoWallet
	}
	return k, nil
}
