package client

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"testing"

	solana "github.com/gagliardetto/solana-go"
)

func seedKey(b byte) solana.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = b
	}
	return solana.PrivateKey(ed25519.NewKeyFromSeed(seed))
}

// The expected texts are written line by line from ../shared/spec/x402-siwx.md ("The signed
// message"), not produced by the code under test.
func TestFormatSIWSMessage(t *testing.T) {
	const addr = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
	full := SIWXInfo{Domain: "127.0.0.1:8080", URI: "http://127.0.0.1:8080/precheck", Version: "1",
		Nonce: "0123456789abcdef0123456789abcdef", IssuedAt: "2026-12-01T06:00:00Z",
		ExpirationTime: "2026-12-01T06:05:00Z", NotBefore: "2026-12-01T05:59:00Z", Statement: "precheck",
		RequestID: "req-1", Resources: []string{"http://127.0.0.1:8080/precheck", "urn:x"}}
	for _, c := range []struct {
		name  string
		info  SIWXInfo
		chain string
		want  string
	}{
		{"every_field", full, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
			"127.0.0.1:8080 wants you to sign in with your Solana account:\n" +
				addr + "\n" +
				"\n" +
				"precheck\n" +
				"\n" +
				"URI: http://127.0.0.1:8080/precheck\n" +
				"Version: 1\n" +
				"Chain ID: EtWTRABZaYq6iMfeYKouRu166VU2xqa1\n" +
				"Nonce: 0123456789abcdef0123456789abcdef\n" +
				"Issued At: 2026-12-01T06:00:00Z\n" +
				"Expiration Time: 2026-12-01T06:05:00Z\n" +
				"Not Before: 2026-12-01T05:59:00Z\n" +
				"Request ID: req-1\n" +
				"Resources:\n" +
				"- http://127.0.0.1:8080/precheck\n" +
				"- urn:x"},
		{"required_only", SIWXInfo{Domain: "svc.example", URI: "https://svc.example/audit", Version: "1",
			Nonce: "ffffffffffffffffffffffffffffffff", IssuedAt: "2026-12-01T06:00:00.000Z"},
			"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
			"svc.example wants you to sign in with your Solana account:\n" +
				addr + "\n" +
				"\n" +
				"URI: https://svc.example/audit\n" +
				"Version: 1\n" +
				"Chain ID: 5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp\n" +
				"Nonce: ffffffffffffffffffffffffffffffff\n" +
				"Issued At: 2026-12-01T06:00:00.000Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := FormatSIWSMessage(c.info, addr, c.chain); got != c.want {
				t.Fatalf("message:\n%s\n--- want ---\n%s", got, c.want)
			}
		})
	}
}

func TestProveSignsTheMessageAndEchoesInfo(t *testing.T) {
	key := seedKey(9)
	ch := &SIWXChallenge{
		Info: SIWXInfo{Domain: "127.0.0.1:1", URI: "http://127.0.0.1:1/audit", Version: "1",
			Nonce: "00112233445566778899aabbccddeeff", IssuedAt: "2026-12-01T06:00:00Z",
			ExpirationTime: "2026-12-01T06:05:00Z", Statement: "resume:5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"},
		SupportedChains: []SupportedChain{{ChainID: "eip155:1", Type: "eip191"}, {ChainID: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", Type: "ed25519"}},
	}
	h, err := Prove(ch, key)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"domain": ch.Info.Domain, "uri": ch.Info.URI, "version": "1", "nonce": ch.Info.Nonce,
		"issuedAt": ch.Info.IssuedAt, "expirationTime": ch.Info.ExpirationTime, "statement": ch.Info.Statement,
		"address": key.PublicKey().String(), "chainId": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "type": "ed25519", "signatureScheme": "siws"} {
		if m[k] != want {
			t.Errorf("proof %s = %v, want %q", k, m[k], want)
		}
	}
	for _, absent := range []string{"notBefore", "requestId", "resources"} {
		if _, ok := m[absent]; ok {
			t.Errorf("proof carries %s, which the challenge did not", absent)
		}
	}
	sig, err := solana.SignatureFromBase58(m["signature"].(string))
	if err != nil {
		t.Fatal(err)
	}
	msg := FormatSIWSMessage(ch.Info, key.PublicKey().String(), "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1")
	if !ed25519.Verify(ed25519.PublicKey(key.PublicKey().Bytes()), []byte(msg), sig[:]) {
		t.Fatal("the signature does not verify over the SIWS message")
	}
	if ed25519.Verify(ed25519.PublicKey(key.PublicKey().Bytes()), []byte(msg+" "), sig[:]) {
		t.Fatal("the signature verifies over a different message")
	}
}

func TestProveRefusesChallengesItCannotAnswer(t *testing.T) {
	info := SIWXInfo{Domain: "d", URI: "u", Version: "1", Nonce: "n", IssuedAt: "t"}
	if _, err := Prove(&SIWXChallenge{Info: info, SupportedChains: []SupportedChain{{ChainID: "eip155:1", Type: "eip191"}}}, seedKey(1)); err != ErrNoSolanaChain {
		t.Fatalf("no Solana chain: %v", err)
	}
	bad := info
	bad.Nonce = ""
	if _, err := Prove(&SIWXChallenge{Info: bad, SupportedChains: []SupportedChain{{ChainID: "solana:x", Type: "ed25519"}}}, seedKey(1)); err == nil {
		t.Fatal("a challenge without a nonce was answered")
	}
}

func TestChallengeFromHeaderOrBody(t *testing.T) {
	ch := SIWXChallenge{Info: SIWXInfo{Domain: "d", URI: "u", Version: "1", Nonce: "abc", IssuedAt: "t"},
		SupportedChains: []SupportedChain{{ChainID: "solana:x", Type: "ed25519"}}}
	h, _ := encodeHeader(ch)
	if got, err := challengeFrom(h, nil); err != nil || got.Info.Nonce != "abc" {
		t.Fatalf("header: %v %v", got, err)
	}
	chJSON, _ := json.Marshal(ch)
	body := []byte(`{"error":"caller_unproven","message":"m","x402Version":2,"extensions":{"sign-in-with-x":` + string(chJSON) + `}}`)
	if got, err := challengeFrom("", body); err != nil || got.Info.Nonce != "abc" {
		t.Fatalf("body: %v %v", got, err)
	}
	if _, err := challengeFrom("!!", []byte(`{}`)); err == nil {
		t.Fatal("no challenge accepted")
	}
}
