// Package siwx proves a caller's Solana wallet with x402's sign-in-with-x extension (CAIP-122,
// Sign-In With Solana, Ed25519): it issues challenges whose nonces are stateless until used (an
// HMAC over issue time, host, route and purpose), parses and verifies proofs, and consumes each
// nonce once through a store shared by every replica. An unproven request writes nothing.
package siwx

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"filippo.io/edwards25519"
	solana "github.com/gagliardetto/solana-go"
)

// Extension is the x402 extension key; HeaderProof and HeaderChallenge are the HTTP headers.
const (
	Extension       = "sign-in-with-x"
	HeaderProof     = "SIGN-IN-WITH-X"
	HeaderChallenge = "SIGN-IN-WITH-X-CHALLENGE"
)

// Nonce and message policy (published in docs/x402.md).
const (
	// NonceTTL is how long a challenge can be answered (expirationTime - issuedAt).
	NonceTTL = 5 * time.Minute
	// NonceKeepMargin is how long a spent nonce is kept past its challenge's expiry before the
	// sweep may delete it: a replica whose clock runs behind still refuses its replay.
	NonceKeepMargin = time.Minute
	// MaxHeaderBytes caps the SIGN-IN-WITH-X header before decoding.
	MaxHeaderBytes = 4096
	// timeLayout is the ISO 8601 form of JavaScript's toISOString, which the x402 client echoes.
	timeLayout = "2006-01-02T15:04:05.000Z"
	// clockSkew tolerates a proof issued by another replica whose clock runs slightly ahead.
	clockSkew = 2 * time.Second
)

// Purposes a nonce is bound to.
const (
	PurposePrecheck = "precheck"
	// PurposeResumePrefix + a transaction signature binds a proof to resuming that payment.
	PurposeResumePrefix = "resume:"
)

// Refusal reasons (static strings; the rule ids of the 401 answer).
var (
	// ErrUnproven: the request named a wallet and carried no proof.
	ErrUnproven = errors.New("caller_unproven")
	// ErrMalformed: the proof header is not base64 JSON of a proof.
	ErrMalformed = errors.New("caller_proof_malformed")
	// ErrInvalid: the proof does not verify (wrong host, route, purpose, chain, time, nonce MAC,
	// small-order key or signature).
	ErrInvalid = errors.New("caller_proof_invalid")
	// ErrExpired: the challenge's five minutes are over.
	ErrExpired = errors.New("caller_proof_expired")
	// ErrReplayed: the nonce was already used.
	ErrReplayed = errors.New("caller_proof_replayed")
	// ErrWrongDomain: the proof was signed for another domain than the service's configured
	// public one (a page elsewhere relaying proofs).
	ErrWrongDomain = errors.New("caller_proof_wrong_domain")
	// ErrWrongWallet: the proof is valid but not by the wallet the request names.
	ErrWrongWallet = errors.New("caller_proof_wallet_mismatch")
)

// Chain is one supportedChains entry.
type Chain struct {
	ChainID string `json:"chainId"`
	Type    string `json:"type"`
}

// Info is the server-chosen part of the signed message.
type Info struct {
	Domain         string `json:"domain"`
	URI            string `json:"uri"`
	Version        string `json:"version"`
	Nonce          string `json:"nonce"`
	IssuedAt       string `json:"issuedAt"`
	ExpirationTime string `json:"expirationTime,omitempty"`
	Statement      string `json:"statement,omitempty"`
}

// Challenge is the extensions["sign-in-with-x"] object (also the SIGN-IN-WITH-X-CHALLENGE header).
type Challenge struct {
	Info            Info           `json:"info"`
	SupportedChains []Chain        `json:"supportedChains"`
	Schema          map[string]any `json:"schema"`
}

// Proof is the decoded SIGN-IN-WITH-X header.
type Proof struct {
	Domain          string   `json:"domain"`
	Address         string   `json:"address"`
	Statement       string   `json:"statement,omitempty"`
	URI             string   `json:"uri"`
	Version         string   `json:"version"`
	ChainID         string   `json:"chainId"`
	Type            string   `json:"type"`
	Nonce           string   `json:"nonce"`
	IssuedAt        string   `json:"issuedAt"`
	ExpirationTime  string   `json:"expirationTime,omitempty"`
	NotBefore       string   `json:"notBefore,omitempty"`
	RequestID       string   `json:"requestId,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	SignatureScheme string   `json:"signatureScheme,omitempty"`
	Signature       string   `json:"signature"`
}

// NonceStore consumes a nonce exactly once across replicas.
type NonceStore interface {
	// ConsumeNonce records nonce as used until expires; it reports false when it was used before.
	ConsumeNonce(ctx context.Context, nonce string, expires time.Time) (bool, error)
}

// Prover issues challenges and verifies proofs.
type Prover struct {
	key    []byte
	chains []Chain
	store  NonceStore
	now    func() time.Time
	random func([]byte) error
}

// New returns a Prover. key is the HMAC key of the nonces (at least 32 bytes); chains are the
// CAIP-2 Solana chains offered (the payment network when payments are on).
func New(key []byte, chainIDs []string, st NonceStore, now func() time.Time) (*Prover, error) {
	if len(key) < 32 {
		return nil, errors.New("siwx: nonce key must be at least 32 bytes")
	}
	if len(chainIDs) == 0 || st == nil {
		return nil, errors.New("siwx: a chain and a nonce store are required")
	}
	if now == nil {
		now = time.Now
	}
	p := &Prover{key: append([]byte(nil), key...), store: st, now: now,
		random: func(b []byte) error { _, err := rand.Read(b); return err }}
	for _, c := range chainIDs {
		if !strings.HasPrefix(c, "solana:") || len(c) < len("solana:")+1 {
			return nil, fmt.Errorf("siwx: unsupported chain id (solana:<reference> only)")
		}
		p.chains = append(p.chains, Chain{ChainID: c, Type: "ed25519"})
	}
	return p, nil
}

// Statement is the human-readable purpose the client signs.
func Statement(purpose string) string {
	if sig, ok := strings.CutPrefix(purpose, PurposeResumePrefix); ok {
		return "Resume the paid scope-hygiene audit of transaction " + sig + " as its payer."
	}
	return "Prove the wallet named as caller of a free scope-hygiene pre-check."
}

// Target is what a proof must be bound to: the request's host, the public origin, the route and
// the purpose.
type Target struct {
	// Host is the service's public host[:port], from its configured public base URL (the
	// message's domain); never the request's Host header when a public base URL is set.
	Host string
	// Origin is the public origin, scheme://host[:port] (the message's uri starts with it).
	Origin string
	// Route is the request path, e.g. /precheck.
	Route   string
	Purpose string
}

func (p *Prover) mac(t Target, issuedAt, random string) string {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(strings.Join([]string{"scope-hygiene/siwx-nonce/v1", t.Host, t.Route, t.Purpose, issuedAt, random}, "\x00")))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// Challenge issues a fresh challenge for t. Nothing is stored.
func (p *Prover) Challenge(t Target) (Challenge, error) {
	var r [8]byte
	if err := p.random(r[:]); err != nil {
		return Challenge{}, fmt.Errorf("siwx: nonce: %w", err)
	}
	now := p.now().UTC().Truncate(time.Millisecond)
	issued := now.Format(timeLayout)
	rs := hex.EncodeToString(r[:])
	return Challenge{
		Info: Info{Domain: t.Host, URI: strings.TrimSuffix(t.Origin, "/") + t.Route, Version: "1",
			Nonce: rs + p.mac(t, issued, rs), IssuedAt: issued, ExpirationTime: now.Add(NonceTTL).Format(timeLayout),
			Statement: Statement(t.Purpose)},
		SupportedChains: append([]Chain(nil), p.chains...),
		Schema:          proofSchema(),
	}, nil
}

// EncodeChallenge is the SIGN-IN-WITH-X-CHALLENGE header value: base64 of the challenge JSON.
func EncodeChallenge(c Challenge) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("siwx: encode challenge: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// ParseHeader decodes a SIGN-IN-WITH-X header. Every error is ErrMalformed and carries no byte
// of the input.
func ParseHeader(h string) (*Proof, error) {
	if h == "" || len(h) > MaxHeaderBytes {
		return nil, ErrMalformed
	}
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(h); err != nil {
			return nil, ErrMalformed
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var pr Proof
	if err := dec.Decode(&pr); err != nil || dec.More() {
		return nil, ErrMalformed
	}
	if pr.Domain == "" || pr.Address == "" || pr.URI == "" || pr.Version == "" || pr.ChainID == "" ||
		pr.Type == "" || pr.Nonce == "" || pr.IssuedAt == "" || pr.Signature == "" {
		return nil, ErrMalformed
	}
	if pr.SignatureScheme != "" && pr.SignatureScheme != "siws" {
		return nil, ErrMalformed
	}
	return &pr, nil
}

// Message is the Sign-In With Solana text the proof's signature covers.
func (pr *Proof) Message() string {
	ref := pr.ChainID
	if _, r, ok := strings.Cut(pr.ChainID, ":"); ok {
		ref = r
	}
	lines := []string{pr.Domain + " wants you to sign in with your Solana account:", pr.Address, ""}
	if pr.Statement != "" {
		lines = append(lines, pr.Statement, "")
	}
	lines = append(lines, "URI: "+pr.URI, "Version: "+pr.Version, "Chain ID: "+ref, "Nonce: "+pr.Nonce, "Issued At: "+pr.IssuedAt)
	if pr.ExpirationTime != "" {
		lines = append(lines, "Expiration Time: "+pr.ExpirationTime)
	}
	if pr.NotBefore != "" {
		lines = append(lines, "Not Before: "+pr.NotBefore)
	}
	if pr.RequestID != "" {
		lines = append(lines, "Request ID: "+pr.RequestID)
	}
	if len(pr.Resources) > 0 {
		lines = append(lines, "Resources:")
		for _, r := range pr.Resources {
			lines = append(lines, "- "+r)
		}
	}
	return strings.Join(lines, "\n")
}

// SmallOrder reports whether a 32-byte Ed25519 public key is not a valid point or is a point of
// small order (such a key admits signatures that verify for many messages).
func SmallOrder(pub []byte) bool {
	pt, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return true
	}
	return new(edwards25519.Point).MultByCofactor(pt).Equal(edwards25519.NewIdentityPoint()) == 1
}

func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// Check verifies everything about a proof that needs no store: binding to t (domain, uri, nonce
// MAC over host, route, purpose and issue time, statement), the supported chain, the times, the
// key and the signature. It returns the proven address.
func (p *Prover) Check(pr *Proof, t Target) (string, error) {
	now := p.now()
	if pr.Domain != t.Host {
		return "", ErrWrongDomain
	}
	if pr.URI != strings.TrimSuffix(t.Origin, "/")+t.Route || pr.Version != "1" ||
		pr.Type != "ed25519" || pr.Statement != Statement(t.Purpose) {
		return "", ErrInvalid
	}
	chainOK := false
	for _, c := range p.chains {
		chainOK = chainOK || c.ChainID == pr.ChainID
	}
	if !chainOK {
		return "", ErrInvalid
	}
	if len(pr.Nonce) != 32 {
		return "", ErrInvalid
	}
	if _, err := hex.DecodeString(pr.Nonce); err != nil {
		return "", ErrInvalid
	}
	if !hmac.Equal([]byte(pr.Nonce[16:]), []byte(p.mac(t, pr.IssuedAt, pr.Nonce[:16]))) {
		return "", ErrInvalid
	}
	issued, ok := parseTime(pr.IssuedAt)
	if !ok || issued.After(now.Add(clockSkew)) {
		return "", ErrInvalid
	}
	if now.Sub(issued) >= NonceTTL {
		return "", ErrExpired
	}
	if pr.ExpirationTime != "" {
		exp, ok := parseTime(pr.ExpirationTime)
		if !ok {
			return "", ErrInvalid
		}
		if !now.Before(exp) {
			return "", ErrExpired
		}
	}
	if pr.NotBefore != "" {
		nb, ok := parseTime(pr.NotBefore)
		if !ok || now.Before(nb) {
			return "", ErrInvalid
		}
	}
	pub, err := solana.PublicKeyFromBase58(pr.Address)
	if err != nil || pub.String() != pr.Address || SmallOrder(pub[:]) {
		return "", ErrInvalid
	}
	sig, err := solana.SignatureFromBase58(pr.Signature)
	if err != nil || sig.String() != pr.Signature {
		return "", ErrInvalid
	}
	if !ed25519.Verify(pub[:], []byte(pr.Message()), sig[:]) {
		return "", ErrInvalid
	}
	return pr.Address, nil
}

// Verify checks a proof header for t and consumes its nonce: a proof proves once. The nonce is
// kept until the challenge's expiry (issuedAt + NonceTTL) plus NonceKeepMargin, after which a
// sweep deletes it.
func (p *Prover) Verify(ctx context.Context, header string, t Target) (string, error) {
	pr, err := ParseHeader(header)
	if err != nil {
		return "", err
	}
	addr, err := p.Check(pr, t)
	if err != nil {
		return "", err
	}
	issued, _ := parseTime(pr.IssuedAt)
	fresh, err := p.store.ConsumeNonce(ctx, pr.Nonce, issued.Add(NonceTTL+NonceKeepMargin))
	if err != nil {
		return "", fmt.Errorf("siwx: consume nonce: %w", err)
	}
	if !fresh {
		return "", ErrReplayed
	}
	return addr, nil
}

// proofSchema is the JSON Schema of the proof the client sends (the extension's "schema").
func proofSchema() map[string]any {
	str := map[string]any{"type": "string"}
	return map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "object",
		"properties": map[string]any{
			"domain": str, "address": str, "statement": str, "uri": str, "version": str, "chainId": str,
			"type": str, "nonce": str, "issuedAt": str, "expirationTime": str, "notBefore": str,
			"requestId": str, "resources": map[string]any{"type": "array", "items": str},
			"signatureScheme": str, "signature": str,
		},
		"required": []string{"domain", "address", "uri", "version", "chainId", "type", "nonce", "issuedAt", "signature"},
	}
}

// Sign answers a challenge as a client: it builds the proof for key on the challenge's first
// supported chain, signs the Sign-In With Solana message and returns the SIGN-IN-WITH-X header
// value. (The Go client and the tests use it; the e2e signs with the npm x402 package instead.)
func Sign(ch Challenge, key ed25519.PrivateKey) (string, error) {
	if len(ch.SupportedChains) == 0 || len(key) != ed25519.PrivateKeySize {
		return "", errors.New("siwx: sign: no supported chain or bad key")
	}
	pub := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey))
	pr := Proof{Domain: ch.Info.Domain, Address: pub.String(), Statement: ch.Info.Statement, URI: ch.Info.URI,
		Version: ch.Info.Version, ChainID: ch.SupportedChains[0].ChainID, Type: ch.SupportedChains[0].Type,
		Nonce: ch.Info.Nonce, IssuedAt: ch.Info.IssuedAt, ExpirationTime: ch.Info.ExpirationTime}
	pr.Signature = solana.SignatureFromBytes(ed25519.Sign(key, []byte(pr.Message()))).String()
	b, err := json.Marshal(pr)
	if err != nil {
		return "", fmt.Errorf("siwx: sign: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}
