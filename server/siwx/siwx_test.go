package siwx

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// memNonces is an in-memory NonceStore for the unit tests (the SQL stores have their own tests).
type memNonces struct {
	mu   sync.Mutex
	used map[string]bool
}

func (m *memNonces) ConsumeNonce(_ context.Context, n string, _ time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used[n] {
		return false, nil
	}
	m.used[n] = true
	return true, nil
}

const devnet = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"

var t0 = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)

func prover(t testing.TB, now *time.Time) *Prover {
	t.Helper()
	p, err := New(bytes.Repeat([]byte{3}, 32), []string{devnet}, &memNonces{used: map[string]bool{}}, func() time.Time { return *now })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var target = Target{Host: "audit.test", Origin: "https://audit.test", Route: "/precheck", Purpose: PurposePrecheck}

// TestMessage pins the Sign-In With Solana text (the order of @x402/extensions 2.27.0
// formatSIWSMessage; the e2e signs with the package itself).
func TestMessage(t *testing.T) {
	p := Proof{Domain: "audit.test", Address: "11111111111111111111111111111112", Statement: "Hello.", URI: "https://audit.test/precheck",
		Version: "1", ChainID: devnet, Nonce: "00112233445566778899aabbccddeeff", IssuedAt: "2026-12-01T06:00:00.000Z",
		ExpirationTime: "2026-12-01T06:05:00.000Z", Resources: []string{"https://audit.test/a"}}
	want := "audit.test wants you to sign in with your Solana account:\n11111111111111111111111111111112\n\nHello.\n\n" +
		"URI: https://audit.test/precheck\nVersion: 1\nChain ID: EtWTRABZaYq6iMfeYKouRu166VU2xqa1\n" +
		"Nonce: 00112233445566778899aabbccddeeff\nIssued At: 2026-12-01T06:00:00.000Z\nExpiration Time: 2026-12-01T06:05:00.000Z\n" +
		"Resources:\n- https://audit.test/a"
	if got := p.Message(); got != want {
		t.Fatalf("message:\n%s\nwant:\n%s", got, want)
	}
}

func signed(t *testing.T, p *Prover, tg Target, key ed25519.PrivateKey, edit func(*Proof)) string {
	t.Helper()
	ch, err := p.Challenge(tg)
	if err != nil {
		t.Fatal(err)
	}
	hv, err := Sign(ch, key)
	if err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return hv
	}
	pr, err := ParseHeader(hv)
	if err != nil {
		t.Fatal(err)
	}
	edit(pr)
	b, _ := json.Marshal(pr)
	return base64.StdEncoding.EncodeToString(b)
}

// TestVerify is every refusal of a proof, by reason.
func TestVerify(t *testing.T) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32))
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32))
	resign := func(k ed25519.PrivateKey) func(*Proof) {
		return func(pr *Proof) { pr.Signature = signature(k, pr) }
	}
	cases := []struct {
		name  string
		tg    Target // the challenge's target (the request is always target)
		edit  func(*Proof)
		later time.Duration
		want  error
	}{
		{"proven", target, nil, 0, nil},
		{"proven_late_in_window", target, nil, NonceTTL - time.Millisecond, nil},
		{"caller_proof_expired", target, nil, NonceTTL, ErrExpired},
		{"caller_proof_wrong_domain", Target{Host: "evil.test", Origin: "https://audit.test", Route: "/precheck", Purpose: PurposePrecheck}, nil, 0, ErrWrongDomain},
		{"caller_proof_invalid_route", Target{Host: "audit.test", Origin: "https://audit.test", Route: "/audit", Purpose: PurposePrecheck}, nil, 0, ErrInvalid},
		{"caller_proof_invalid_purpose", Target{Host: "audit.test", Origin: "https://audit.test", Route: "/precheck", Purpose: PurposeResumePrefix + "abc"}, nil, 0, ErrInvalid},
		{"caller_proof_invalid_signature", target, func(pr *Proof) { pr.Signature = signature(other, pr) }, 0, ErrInvalid},
		{"caller_proof_invalid_address_swapped", target, func(pr *Proof) { pr.Address = address(other) }, 0, ErrInvalid},
		{"caller_proof_invalid_issued_moved", target, func(pr *Proof) { pr.IssuedAt = "2026-12-01T06:00:01.000Z" }, 0, ErrInvalid},
		{"caller_proof_invalid_nonce_forged", target, func(pr *Proof) { pr.Nonce = strings.Repeat("0", 32); pr.Signature = signature(key, pr) }, 0, ErrInvalid},
		{"caller_proof_invalid_chain", target, func(pr *Proof) {
			pr.ChainID = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"
			pr.Signature = signature(key, pr)
		}, 0, ErrInvalid},
		{"caller_proof_invalid_future", target, func(pr *Proof) { pr.NotBefore = "2026-12-01T07:00:00.000Z"; pr.Signature = signature(key, pr) }, 0, ErrInvalid},
		{"caller_proof_invalid_type", target, func(pr *Proof) { pr.Type = "eip191" }, 0, ErrInvalid},
		{"caller_proof_malformed_scheme", target, func(pr *Proof) { pr.SignatureScheme = "eip1271" }, 0, ErrMalformed},
		{"proven_resigned", target, resign(key), 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			p := prover(t, &now)
			hv := signed(t, p, tc.tg, key, tc.edit)
			now = now.Add(tc.later)
			got, err := p.Verify(context.Background(), hv, target)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if tc.want == nil && got != address(key) {
				t.Fatalf("address %s, want %s", got, address(key))
			}
			if tc.want == nil {
				if _, err := p.Verify(context.Background(), hv, target); !errors.Is(err, ErrReplayed) {
					t.Fatalf("second use: %v, want caller_proof_replayed", err)
				}
			}
		})
	}
}

func address(k ed25519.PrivateKey) string {
	pr, _ := ParseHeader(mustSign(k))
	return pr.Address
}

func mustSign(k ed25519.PrivateKey) string {
	hv, err := Sign(Challenge{Info: Info{Domain: "d", URI: "u", Version: "1", Nonce: "n", IssuedAt: "i"},
		SupportedChains: []Chain{{ChainID: devnet, Type: "ed25519"}}}, k)
	if err != nil {
		panic(err)
	}
	return hv
}

// signature signs pr's message (as it stands) with k.
func signature(k ed25519.PrivateKey, pr *Proof) string {
	return b58(ed25519.Sign(k, []byte(pr.Message())))
}

// TestSmallOrderKeysRefused: a small-order public key verifies signatures for many messages;
// such a key never proves a wallet, even with a signature that verifies.
func TestSmallOrderKeysRefused(t *testing.T) {
	smallOrder := []string{
		"0100000000000000000000000000000000000000000000000000000000000000", // identity
		"0000000000000000000000000000000000000000000000000000000000000000", // order 4
		"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
		"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
		"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
	}
	for _, h := range smallOrder {
		b, _ := hex.DecodeString(h)
		if !SmallOrder(b) {
			t.Errorf("%s not refused as small order", h)
		}
	}
	now := t0
	p := prover(t, &now)
	ch, _ := p.Challenge(target)
	id, _ := hex.DecodeString(smallOrder[0])
	pr := Proof{Domain: ch.Info.Domain, Address: b58(id), Statement: ch.Info.Statement, URI: ch.Info.URI, Version: "1",
		ChainID: devnet, Type: "ed25519", Nonce: ch.Info.Nonce, IssuedAt: ch.Info.IssuedAt, ExpirationTime: ch.Info.ExpirationTime}
	// With the identity as public key, R = identity and S = 0 verify for every message in
	// implementations without the small-order check.
	sig := make([]byte, 64)
	copy(sig, id)
	pr.Signature = b58(sig)
	b, _ := json.Marshal(pr)
	if _, err := p.Verify(context.Background(), base64.StdEncoding.EncodeToString(b), target); !errors.Is(err, ErrInvalid) {
		t.Fatalf("small-order key: %v, want caller_proof_invalid", err)
	}
	good := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32))
	if SmallOrder(good.Public().(ed25519.PublicKey)) {
		t.Fatal("a real key was refused as small order")
	}
}

// TestParseHeaderMalformed: every malformed header is the one static error.
func TestParseHeaderMalformed(t *testing.T) {
	for _, h := range []string{"", "%%%", base64.StdEncoding.EncodeToString([]byte("[]")), base64.StdEncoding.EncodeToString([]byte(`{"domain":"x"}`)),
		base64.StdEncoding.EncodeToString([]byte(`{} {}`)), strings.Repeat("A", MaxHeaderBytes+1)} {
		if _, err := ParseHeader(h); err != ErrMalformed {
			t.Errorf("%.20q: %v, want caller_proof_malformed", h, err)
		}
	}
}

func TestBudget(t *testing.T) {
	now := t0
	b := NewBudget(3, time.Minute, func() time.Time { return now })
	for i := 0; i < 3; i++ {
		if ok, _ := b.Take("a"); !ok {
			t.Fatalf("take %d refused", i)
		}
	}
	if ok, retry := b.Take("a"); ok || retry != time.Minute {
		t.Fatalf("fourth take: %v %v, want refused with a minute to wait", ok, retry)
	}
	if ok, _ := b.Take("b"); !ok {
		t.Fatal("another key was refused")
	}
	now = now.Add(time.Minute)
	if ok, _ := b.Take("a"); !ok {
		t.Fatal("next window refused")
	}
}

// FuzzParseHeader: the proof parser never panics, and what it accepts re-verifies without
// panicking and never proves without a valid signature.
func FuzzParseHeader(f *testing.F) {
	now := t0
	p := prover(f, &now)
	ch, _ := p.Challenge(target)
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32))
	signer := address(key)
	hv, _ := Sign(ch, key)
	f.Add(hv)
	f.Add("")
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"domain":"a","address":"1","uri":"u","version":"1","chainId":"solana:x","type":"ed25519","nonce":"n","issuedAt":"i","signature":"s"}`)))
	f.Fuzz(func(t *testing.T, h string) {
		pr, err := ParseHeader(h)
		if err != nil {
			if err != ErrMalformed {
				t.Fatalf("error %v is not the static malformed error", err)
			}
			return
		}
		_ = pr.Message()
		// Only the signer of the one issued challenge can be proven, whatever else changed.
		if addr, err := p.Check(pr, target); err == nil && addr != signer {
			t.Fatalf("proved %s, which never signed", addr)
		}
	})
}

func b58(b []byte) string {
	var s [64]byte
	copy(s[:], b)
	if len(b) == 32 {
		var k [32]byte
		copy(k[:], b)
		return pkString(k)
	}
	return sigString(s)
}

// expiryNonces records the expiry a proof asks the store to keep its nonce until.
type expiryNonces struct{ expires time.Time }

func (e *expiryNonces) ConsumeNonce(_ context.Context, _ string, expires time.Time) (bool, error) {
	e.expires = expires
	return true, nil
}

// TestNonceKeptPastExpiryWithMargin: a spent nonce is stored until its challenge's expiry plus
// NonceKeepMargin, so a sweep on a replica whose clock runs ahead cannot make it reusable on
// one whose clock runs behind.
func TestNonceKeptPastExpiryWithMargin(t *testing.T) {
	now := t0
	st := &expiryNonces{}
	p, err := New(bytes.Repeat([]byte{3}, 32), []string{devnet}, st, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	hv := signed(t, p, target, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32)), nil)
	if _, err := p.Verify(context.Background(), hv, target); err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(NonceTTL + NonceKeepMargin); !st.expires.Equal(want) {
		t.Fatalf("nonce kept until %s, want %s", st.expires, want)
	}
}
