package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
)

type answer struct {
	status int
	body   []byte
}

func post(t *testing.T, url string, body []byte, hdr map[string]string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, b}
}

// signNode answers a 401 challenge with the real @x402/extensions SIWX helpers.
func (w *world) signNode(t *testing.T, url string, challenge []byte, key solana.PrivateKey, mode ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"siwx.mjs", url, keygenJSON(key)}, mode...)...)
	cmd.Stdin = bytes.NewReader(challenge)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("siwx.mjs: %v\n%s", err, stderr.String())
	}
	return string(out)
}

func (w *world) table(t *testing.T, name string) int {
	t.Helper()
	st, err := sqlite.Open(context.Background(), w.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.DumpTable(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

func precheckBody(caller string) []byte {
	return []byte(strings.Replace(exportBody, `{"family"`, `{"caller":"`+caller+`","family"`, 1))
}

func errorOf(a answer) string {
	var m struct{ Error, Rule string }
	_ = json.Unmarshal(a.body, &m)
	if m.Error != "" {
		return m.Error
	}
	return m.Rule
}

// siwxCases are the caller-proof attack cases against the real binary, with proofs built and
// signed by the real npm sign-in-with-x helpers.
func siwxCases(t *testing.T, w *world) {
	url := w.server + "/precheck"
	alice := w.clients["alice"]

	t.Run("siwx_proven_wallet_once", func(t *testing.T) {
		body := precheckBody(alice.PublicKey().String())
		first := post(t, url, body, nil)
		if first.status != 401 || errorOf(first) != "caller_unproven" {
			t.Fatalf("unproven: %d %s", first.status, first.body)
		}
		hv := w.signNode(t, url, first.body, alice)
		if a := post(t, url, body, map[string]string{siwx.HeaderProof: hv}); a.status != 200 {
			t.Fatalf("proven by the npm client: %d %s", a.status, a.body)
		}
		if a := post(t, url, body, map[string]string{siwx.HeaderProof: hv}); a.status != 401 || errorOf(a) != "caller_proof_replayed" {
			t.Fatalf("replayed proof: %d %s", a.status, a.body)
		}
	})

	t.Run("siwx_fresh_keypair_without_token_account", func(t *testing.T) {
		k := solana.NewWallet().PrivateKey
		body := precheckBody(k.PublicKey().String())
		first := post(t, url, body, nil)
		hv := w.signNode(t, url, first.body, k)
		if a := post(t, url, body, map[string]string{siwx.HeaderProof: hv}); a.status != 403 || errorOf(a) != "caller_no_token_account" {
			t.Fatalf("fresh keypair: %d %s", a.status, a.body)
		}
	})

	t.Run("siwx_malformed_export_with_proven_wallet_consumes_nothing", func(t *testing.T) {
		good := precheckBody(alice.PublicKey().String())
		first := post(t, url, good, nil)
		hv := w.signNode(t, url, first.body, alice)
		nonces, free := w.table(t, "siwx_nonces"), w.table(t, "free_tier")
		bad := []byte(`{"caller":"` + alice.PublicKey().String() + `","family":"mem0","form":"full_text","records":[]}`)
		if a := post(t, url, bad, map[string]string{siwx.HeaderProof: hv}); a.status != 400 {
			t.Fatalf("malformed: %d %s", a.status, a.body)
		}
		if w.table(t, "siwx_nonces") != nonces || w.table(t, "free_tier") != free {
			t.Fatal("a malformed export consumed a nonce or a free-tier slot")
		}
	})

	t.Run("siwx_200_unproven_wallets_take_nothing", func(t *testing.T) {
		free := w.table(t, "free_tier")
		counts := map[int]int{}
		for i := 0; i < 200; i++ {
			a := post(t, url, precheckBody(solana.NewWallet().PublicKey().String()), nil)
			counts[a.status]++
		}
		// The per-address budget (30 a minute) was partly spent by the cases above.
		if counts[401]+counts[429] != 200 || counts[401] > 30 || counts[429] < 170 {
			t.Fatalf("answers %v, want at most 30 401 and the rest 429", counts)
		}
		if w.table(t, "free_tier") != free {
			t.Fatal("unproven wallets created free-tier rows")
		}
		t.Logf("200 unproven wallets: %v, free-tier rows unchanged (%d)", counts, free)
	})
}

// resumeCases: a payment whose confirmation outlasts the request is answered 202 with its
// transaction; a third party with the public header is refused; the payer's proof (signed by
// the npm helpers) collects the report; one ledger row.
func resumeCases(t *testing.T, w *world) {
	t.Run("slow_confirmation_202_only_the_payer_resumes", func(t *testing.T) {
		w.control("hideStatuses", map[string]any{"hide": true})
		r := w.run("pay", "alice", "")
		w.control("hideStatuses", map[string]any{"hide": false})
		if r.First.Status != 202 || r.First.PaymentResponse == nil || r.First.PaymentResponse.Transaction == "" {
			t.Fatalf("slow confirmation: %+v", r.First)
		}
		sig := r.First.PaymentResponse.Transaction
		url := w.server + "/audit"
		body, _ := os.ReadFile(w.exportF)
		pay := map[string]string{"PAYMENT-SIGNATURE": r.Header}
		first := post(t, url, body, pay)
		if first.status != 401 {
			t.Fatalf("resume without a proof: %d %s", first.status, first.body)
		}
		third := w.signNode(t, url, first.body, w.clients["poor"])
		a := post(t, url, body, map[string]string{"PAYMENT-SIGNATURE": r.Header, siwx.HeaderProof: third})
		if a.status != 401 || errorOf(a) != "caller_proof_wallet_mismatch" {
			t.Fatalf("third party resuming with the public transaction: %d %s", a.status, a.body)
		}
		again := post(t, url, body, pay)
		mine := w.signNode(t, url, again.body, w.clients["alice"])
		a = post(t, url, body, map[string]string{"PAYMENT-SIGNATURE": r.Header, siwx.HeaderProof: mine})
		if a.status != 200 || !strings.Contains(string(a.body), `"kind":"audit_report"`) {
			t.Fatalf("payer resume: %d %.300s", a.status, a.body)
		}
		n := 0
		for _, e := range w.ledger() {
			if e.PaymentTx == sig {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d ledger rows for the resumed payment, want 1", n)
		}
		t.Logf("202 then payer resume: tx %s, one ledger row", sig)
	})
}
