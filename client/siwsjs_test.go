package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestProofVerifiesWithRealX402Extensions cross-checks Prove and FormatSIWSMessage with the real
// npm @x402/extensions (2.27.0): its formatSIWSMessage must produce the same text, and its
// verifySIWxSignature must accept the proof and name our wallet; a proof with one byte of the
// nonce changed must be refused. It needs node and `npm ci` in testdata/siwsjs (scripts/x402-e2e.sh).
func TestProofVerifiesWithRealX402Extensions(t *testing.T) {
	dir := filepath.Join("testdata", "siwsjs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@x402", "extensions")); err != nil {
		t.Skip("testdata/siwsjs/node_modules missing: run scripts/x402-e2e.sh (npm ci) to cross-check with @x402/extensions")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found: the @x402/extensions cross-check needs it")
	}
	key := seedKey(4)
	chains := []SupportedChain{{ChainID: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", Type: "ed25519"}}
	full := SIWXInfo{Domain: "127.0.0.1:8080", URI: "http://127.0.0.1:8080/precheck", Version: "1",
		Nonce: "0123456789abcdef0123456789abcdef", IssuedAt: "2026-12-01T06:00:00.000Z",
		ExpirationTime: "2026-12-01T06:05:00.000Z", NotBefore: "2026-12-01T05:59:00.000Z", Statement: "precheck",
		RequestID: "req-1", Resources: []string{"http://127.0.0.1:8080/precheck"}}
	minimal := SIWXInfo{Domain: "svc.example", URI: "https://svc.example/audit", Version: "1",
		Nonce: "ffffffffffffffffffffffffffffffff", IssuedAt: "2026-12-01T06:00:00Z"}
	type in struct {
		Header string `json:"header"`
	}
	var input bytes.Buffer
	var want []string
	for _, info := range []SIWXInfo{full, minimal} {
		h, err := Prove(&SIWXChallenge{Info: info, SupportedChains: chains}, key)
		if err != nil {
			t.Fatal(err)
		}
		json.NewEncoder(&input).Encode(in{h})
		want = append(want, FormatSIWSMessage(info, key.PublicKey().String(), chains[0].ChainID))
	}
	// A tampered proof: signed for one nonce, presented with another.
	var p map[string]any
	h, _ := Prove(&SIWXChallenge{Info: minimal, SupportedChains: chains}, key)
	decodeHeader(h, &p)
	p["nonce"] = "efffffffffffffffffffffffffffffff"
	tampered, _ := encodeHeader(p)
	json.NewEncoder(&input).Encode(in{tampered})

	cmd := exec.Command("node", "check.mjs")
	cmd.Dir = dir
	cmd.Stdin = &input
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s", err, stderr.String())
	}
	type res struct {
		Message  *string `json:"message"`
		Verified bool    `json:"verified"`
		Payer    *string `json:"payer"`
		Error    *string `json:"error"`
	}
	var got []res
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r res
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("check.mjs output: %v", err)
		}
		got = append(got, r)
	}
	if len(got) != 3 {
		t.Fatalf("check.mjs answered %d lines, want 3", len(got))
	}
	for i, w := range want {
		if got[i].Message == nil || *got[i].Message != w {
			t.Errorf("proof %d: @x402/extensions formats\n%v\n--- ours ---\n%s", i, got[i].Message, w)
		}
		if !got[i].Verified || got[i].Payer == nil || *got[i].Payer != key.PublicKey().String() {
			t.Errorf("proof %d: @x402/extensions did not verify it: %+v", i, got[i])
		}
	}
	if got[2].Verified {
		t.Error("@x402/extensions verified a proof whose nonce was changed after signing")
	}
}
