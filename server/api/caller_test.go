package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/internal/schematest"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

func keyN(n byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize))
}

func addr(k ed25519.PrivateKey) string {
	return solana.PublicKeyFromBytes(k.Public().(ed25519.PublicKey)).String()
}

// freeRows counts the per-caller free-tier rows.
func freeRows(t *testing.T, h *harness) int {
	t.Helper()
	rows, err := h.st.DumpTable(context.Background(), "free_tier")
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

func challengeOf(t *testing.T, r response) api.ProofChallenge {
	t.Helper()
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401: %s", r.Status, r.Body)
	}
	schematest.Check(t, "siwx-challenge", "", r.Body)
	var ch api.ProofChallenge
	if err := json.Unmarshal(r.Body, &ch); err != nil {
		t.Fatal(err)
	}
	hb, err := base64.StdEncoding.DecodeString(r.Header.Get(siwx.HeaderChallenge))
	if err != nil {
		t.Fatal("challenge header is not base64")
	}
	schematest.Check(t, "siwx-challenge", "/$defs/challenge", hb)
	body, _ := json.Marshal(ch.Extensions[siwx.Extension])
	var a, b any
	_ = json.Unmarshal(hb, &a)
	_ = json.Unmarshal(body, &b)
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	if !bytes.Equal(ab, bb) {
		t.Errorf("challenge header and body differ")
	}
	return ch
}

// TestCallerProof is the caller-proof rule (criteria interpretations, beside R-5) case by case:
// the answer, and that no per-wallet row and no allowance is taken unless the wallet is proven.
func TestCallerProof(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			other := keyN(43)
			body := export(map[string]any{"caller": wallet})
			cases := []struct {
				name   string
				header func(h *harness) string
				status int
				reason string
			}{
				{"caller_unproven", func(*harness) string { return "" }, 401, "caller_unproven"},
				{"caller_proof_malformed", func(*harness) string { return "CANARY-not-base64-%%" }, 401, "caller_proof_malformed"},
				{"caller_proof_wallet_mismatch", func(h *harness) string {
					return h.proven("/precheck", body, other)[siwx.HeaderProof]
				}, 401, "caller_proof_wallet_mismatch"},
				{"caller_proof_invalid_tampered", func(h *harness) string {
					hv := h.proven("/precheck", body, walletKey)[siwx.HeaderProof]
					raw, _ := base64.StdEncoding.DecodeString(hv)
					var p map[string]any
					_ = json.Unmarshal(raw, &p)
					p["statement"] = "Pay me."
					b, _ := json.Marshal(p)
					return base64.StdEncoding.EncodeToString(b)
				}, 401, "caller_proof_invalid"},
				{"caller_proof_wrong_domain", func(h *harness) string {
					ch, _ := h.srvProver().Challenge(siwx.Target{Host: "evil.test", Origin: "http://evil.test", Route: "/precheck", Purpose: siwx.PurposePrecheck})
					hv, _ := siwx.Sign(ch, walletKey)
					return hv
				}, 401, "caller_proof_wrong_domain"},
				{"caller_proof_invalid_other_purpose", func(h *harness) string {
					ch, _ := h.srvProver().Challenge(siwx.Target{Host: "example.com", Origin: "http://example.com", Route: "/precheck", Purpose: siwx.PurposeResumePrefix + "x"})
					hv, _ := siwx.Sign(ch, walletKey)
					return hv
				}, 401, "caller_proof_invalid"},
				{"proven", func(h *harness) string { return h.proven("/precheck", body, walletKey)[siwx.HeaderProof] }, 200, ""},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					h := newHarness(t, be.open(t))
					hv := tc.header(h)
					r := h.do("POST", "/precheck", body, map[string]string{siwx.HeaderProof: hv})
					if r.Status != tc.status {
						t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
					}
					if strings.Contains(string(r.Body), "CANARY") || strings.Contains(h.logs.String(), "CANARY") {
						t.Fatal("the proof header's bytes were echoed or logged")
					}
					if tc.status == 401 {
						ch := challengeOf(t, r)
						if ch.Error != tc.reason {
							t.Errorf("reason %q, want %q", ch.Error, tc.reason)
						}
						if n := freeRows(t, h); n != 0 {
							t.Errorf("%d free-tier rows after an unproven request, want 0", n)
						}
						return
					}
					if n := freeRows(t, h); n != 1 {
						t.Errorf("%d free-tier rows after one proven pre-check, want 1", n)
					}
				})
			}
		})
	}
}

// TestCallerProofReplayed: a proof proves once, across two replicas sharing the store.
func TestCallerProofReplayed(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			st := be.open(t)
			a, b := newHarness(t, st), newHarness(t, st)
			body := export(map[string]any{"caller": wallet})
			hdr := a.proven("/precheck", body, walletKey)
			if r := a.do("POST", "/precheck", body, hdr); r.Status != 200 {
				t.Fatalf("first use: %d %s", r.Status, r.Body)
			}
			b.clock.Advance(10 * 1e9)
			r := b.do("POST", "/precheck", body, hdr)
			if ch := challengeOf(t, r); ch.Error != "caller_proof_replayed" {
				t.Fatalf("replay on the other replica: %s", ch.Error)
			}
		})
	}
}

// TestCallerProofExpired: a challenge answered after five minutes is refused as expired.
func TestCallerProofExpired(t *testing.T) {
	h := newHarness(t, sqliteStore(t))
	body := export(map[string]any{"caller": wallet})
	hdr := h.proven("/precheck", body, walletKey)
	h.clock.Advance(siwx.NonceTTL)
	if ch := challengeOf(t, h.do("POST", "/precheck", body, hdr)); ch.Error != "caller_proof_expired" {
		t.Fatalf("reason %s, want caller_proof_expired", ch.Error)
	}
}

// TestUnprovenWalletsTakeNothing: 200 random unproven wallets from one address take no
// allowance and create no rows; past the per-address budget the answer is 429.
func TestUnprovenWalletsTakeNothing(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			h := newHarness(t, be.open(t))
			counts := map[int]int{}
			for i := 0; i < 200; i++ {
				k := keyN(byte(i))
				r := h.do("POST", "/precheck", export(map[string]any{"caller": addr(k)}), nil)
				counts[r.Status]++
				if r.Status == http.StatusTooManyRequests && !strings.Contains(string(r.Body), `"rule":"caller_proof_budget"`) {
					t.Fatalf("429 body %s", r.Body)
				}
			}
			if counts[401] != 30 || counts[429] != 170 {
				t.Errorf("answers %v, want 30 401 (the budget) and 170 429", counts)
			}
			if n := freeRows(t, h); n != 0 {
				t.Errorf("%d free-tier rows, want 0", n)
			}
			// The address itself still has its allowance (no wallet named).
			if r := h.do("POST", "/precheck", export(nil), nil); r.Status != 200 {
				t.Errorf("address pre-check after the storm: %d", r.Status)
			}
		})
	}
}

// TestMalformedExportWithProvenWalletConsumesNothing: published refusals come before the proof
// and the allowance: a malformed export with a valid proof neither spends the nonce nor starts
// the interval.
func TestMalformedExportWithProvenWalletConsumesNothing(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			h := newHarness(t, be.open(t))
			good := export(map[string]any{"caller": wallet})
			hdr := h.proven("/precheck", good, walletKey)
			bad := []byte(`{"caller":"` + wallet + `","family":"mem0","form":"full_text","records":[]}`)
			if r := h.do("POST", "/precheck", bad, hdr); r.Status != 400 || !strings.Contains(string(r.Body), "records_empty") {
				t.Fatalf("malformed: %d %s", r.Status, r.Body)
			}
			if n := freeRows(t, h); n != 0 {
				t.Fatalf("%d free-tier rows after a malformed export, want 0", n)
			}
			nonces, err := h.st.DumpTable(context.Background(), "siwx_nonces")
			if err != nil || len(nonces) != 0 {
				t.Fatalf("nonces after a malformed export: %d (%v), want 0", len(nonces), err)
			}
			// The same proof still works at once: no nonce spent, no interval started.
			if r := h.do("POST", "/precheck", good, hdr); r.Status != 200 {
				t.Fatalf("proven pre-check right after: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestSweep: spent nonces past their expiry and free-tier rows of a past day are swept in
// bounded batches on both stores; live ones stay.
func TestSweep(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			h := newHarness(t, be.open(t))
			ctx := context.Background()
			sw, ok := h.st.(store.Sweeper)
			if !ok {
				t.Fatal("store has no sweeper")
			}
			ns := h.st.(siwx.NonceStore)
			now := h.clock.Now()
			for i := 0; i < 5; i++ {
				if _, err := ns.ConsumeNonce(ctx, strings.Repeat(string(rune('a'+i)), 32), now.Add(-time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ns.ConsumeNonce(ctx, strings.Repeat("f", 32), now.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ { // three callers yesterday, one today
				if _, err := h.st.TakeFree(ctx, "key"+string(rune('0'+i)), now.Add(-24*time.Hour), store.FreeLimits{PerDay: 100, MinInterval: 5 * time.Second}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := h.st.TakeFree(ctx, "today", now, store.FreeLimits{PerDay: 100, MinInterval: 5 * time.Second}); err != nil {
				t.Fatal(err)
			}
			r, err := sw.Sweep(ctx, now, 5*time.Second, 2)
			if err != nil || r.Nonces != 2 || r.FreeTier != 2 {
				t.Fatalf("first batch %+v %v, want 2 and 2", r, err)
			}
			r, err = sw.Sweep(ctx, now, 5*time.Second, 100)
			if err != nil || r.Nonces != 3 || r.FreeTier != 1 {
				t.Fatalf("second batch %+v %v, want 3 and 1", r, err)
			}
			nonces, _ := h.st.DumpTable(ctx, "siwx_nonces")
			free, _ := h.st.DumpTable(ctx, "free_tier")
			if len(nonces) != 1 || len(free) != 1 {
				t.Fatalf("left %d nonces and %d free-tier rows, want the live one of each", len(nonces), len(free))
			}
			// A swept-too-early nonce would be reusable: the live one still refuses a replay.
			if fresh, _ := ns.ConsumeNonce(ctx, strings.Repeat("f", 32), now.Add(time.Minute)); fresh {
				t.Fatal("a live nonce was swept")
			}
		})
	}
}
