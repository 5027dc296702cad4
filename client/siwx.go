package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	solana "github.com/gagliardetto/solana-go"
)

// SolanaChainPrefix is the CAIP-2 namespace of Solana chain ids.
const SolanaChainPrefix = "solana:"

// FormatSIWSMessage returns the exact text a Solana wallet signs for a sign-in-with-x challenge
// (the Sign-In With Solana form): the lines of ../shared/spec/x402-siwx.md joined with "\n",
// optional lines present only when their field is.
func FormatSIWSMessage(info SIWXInfo, address, chainID string) string {
	var b strings.Builder
	b.WriteString(info.Domain + " wants you to sign in with your Solana account:\n")
	b.WriteString(address + "\n\n")
	if info.Statement != "" {
		b.WriteString(info.Statement + "\n\n")
	}
	b.WriteString("URI: " + info.URI + "\n")
	b.WriteString("Version: " + info.Version + "\n")
	b.WriteString("Chain ID: " + strings.TrimPrefix(chainID, SolanaChainPrefix) + "\n")
	b.WriteString("Nonce: " + info.Nonce + "\n")
	b.WriteString("Issued At: " + info.IssuedAt)
	if info.ExpirationTime != "" {
		b.WriteString("\nExpiration Time: " + info.ExpirationTime)
	}
	if info.NotBefore != "" {
		b.WriteString("\nNot Before: " + info.NotBefore)
	}
	if info.RequestID != "" {
		b.WriteString("\nRequest ID: " + info.RequestID)
	}
	if len(info.Resources) > 0 {
		b.WriteString("\nResources:")
		for _, r := range info.Resources {
			b.WriteString("\n- " + r)
		}
	}
	return b.String()
}

// ErrNoSolanaChain is returned when a challenge accepts no Solana ed25519 proof.
var ErrNoSolanaChain = errors.New("client: the sign-in-with-x challenge accepts no Solana ed25519 proof")

// Prove answers a sign-in-with-x challenge with key: it signs the SIWS message for the challenge's
// Solana chain and returns the SIGN-IN-WITH-X header value.
func Prove(ch *SIWXChallenge, key solana.PrivateKey) (string, error) {
	chain := ""
	for _, c := range ch.SupportedChains {
		if strings.HasPrefix(c.ChainID, SolanaChainPrefix) && c.Type == "ed25519" {
			chain = c.ChainID
			break
		}
	}
	if chain == "" {
		return "", ErrNoSolanaChain
	}
	if ch.Info.Domain == "" || ch.Info.URI == "" || ch.Info.Nonce == "" || ch.Info.IssuedAt == "" {
		return "", errors.New("client: the sign-in-with-x challenge lacks a required info field")
	}
	addr := key.PublicKey().String()
	sig, err := key.Sign([]byte(FormatSIWSMessage(ch.Info, addr, chain)))
	if err != nil {
		return "", fmt.Errorf("client: sign-in-with-x signature: %w", err)
	}
	p := SIWXProof{SIWXInfo: ch.Info, Address: addr, ChainID: chain, Type: "ed25519",
		Signature: sig.String(), SignatureScheme: "siws"}
	return encodeHeader(p)
}

// challengeFrom finds the sign-in-with-x challenge of a 401: the SIGN-IN-WITH-X-CHALLENGE header,
// else the body's extensions member.
func challengeFrom(header string, body []byte) (*SIWXChallenge, error) {
	var ch SIWXChallenge
	if header != "" {
		if err := decodeHeader(header, &ch); err == nil && ch.Info.Nonce != "" {
			return &ch, nil
		}
	}
	var b ChallengeBody
	if json.Unmarshal(body, &b) == nil {
		if raw, ok := b.Extensions[ExtensionSIWX]; ok && json.Unmarshal(raw, &ch) == nil && ch.Info.Nonce != "" {
			return &ch, nil
		}
	}
	return nil, errors.New("client: the 401 carries no sign-in-with-x challenge")
}
