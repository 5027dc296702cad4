package gate_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/internal/schematest"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/server/x402/x402test"
)

var (
	feeKey    = solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)))
	payerKey  = solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{21}, 32)))
	strangerK = solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{22}, 32)))
)

// payment builds the four-instruction payment a real x402 client sends for the 402 in rec and
// returns its PAYMENT-SIGNATURE header and its transaction id (our deterministic co-signature).
func payment(t *testing.T, r *rig, memo string) (string, string) {
	t.Helper()
	mint := x402.Devnet.USDCMint
	payTo := solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32))).PublicKey()
	src, _, _ := solana.FindAssociatedTokenAddress(payerKey.PublicKey(), mint)
	dst, _, _ := solana.FindAssociatedTokenAddress(payTo, mint)
	bh := solana.HashFromBytes(bytes.Repeat([]byte{7}, 32))
	tx, err := solana.NewTransaction([]solana.Instruction{
		computebudget.NewSetComputeUnitLimitInstruction(20000).Build(),
		computebudget.NewSetComputeUnitPriceInstruction(1).Build(),
		token.NewTransferCheckedInstruction(50000, 6, src, mint, dst, payerKey.PublicKey(), nil).Build(),
		solana.NewInstruction(solana.MemoProgramID, nil, []byte(memo)),
	}, bh, solana.TransactionPayer(feeKey.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	tx.Message.SetVersion(solana.MessageVersionV0)
	msg, err := tx.Message.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	clientSig, _ := payerKey.Sign(msg)
	ourSig, _ := feeKey.Sign(msg)
	raw := append([]byte{2}, make([]byte, 64)...)
	raw = append(raw, clientSig[:]...)
	raw = append(raw, msg...)
	pr := x402.PaymentPayload{X402Version: 2, Accepted: r.gateReq(t, memo),
		Payload: x402.ExactPayload{Transaction: base64.StdEncoding.EncodeToString(raw)}}
	hv, err := x402.EncodeHeader(pr)
	if err != nil {
		t.Fatal(err)
	}
	return hv, ourSig.String()
}

func (r *rig) gateReq(t *testing.T, memo string) x402.PaymentRequirements {
	rec := r.do(http.MethodPost, "/audit", exportBody, nil)
	pr, err := x402.DecodePaymentRequired(rec.Header().Get(x402.HeaderPaymentRequired))
	if err != nil {
		t.Fatal(err)
	}
	a := pr.Accepts[0]
	a.Extra.Memo = memo
	return a
}

func (r *rig) memo(t *testing.T) string {
	rec := r.do(http.MethodPost, "/audit", exportBody, nil)
	pr, err := x402.DecodePaymentRequired(rec.Header().Get(x402.HeaderPaymentRequired))
	if err != nil {
		t.Fatal(err)
	}
	return pr.Accepts[0].Extra.Memo
}

// TestOnlyThePayerCollects: a payment that settled and was not delivered (the report is owed)
// is collected only with the payer's proof bound to resume:<transaction>. The transaction and
// its header are public: without a proof, or with a third party's, the answer is 401 with a
// fresh resume challenge (never a 402 asking to pay again) and no audit is run. The payer's
// proof gets the report, one ledger row (house: a devnet payment), and the settlement delivered.
func TestOnlyThePayerCollects(t *testing.T) {
	ms := x402.NewMemStore()
	r := newRigStore(t, ms)
	memo := r.memo(t)
	hv, sig := payment(t, r, memo)
	settled := time.Date(2026, 11, 30, 11, 59, 0, 0, time.UTC)
	if _, err := ms.Reserve(context.Background(), &x402.Settlement{TxSig: sig, Challenge: memo, Payer: payerKey.PublicKey().String(),
		Network: x402.Devnet.CAIP2, Status: x402.StatusSettled, Claims: 1, SettledAt: &settled, CreatedAt: settled, UpdatedAt: settled,
		Reason: x402.ReasonUndelivered}); err != nil {
		t.Fatal(err)
	}
	resume := func(proof string) *httptestRecorder {
		h := map[string]string{x402.HeaderPaymentSignature: hv}
		if proof != "" {
			h[siwx.HeaderProof] = proof
		}
		return r.do(http.MethodPost, "/audit", exportBody, h)
	}
	challenge := func(rec *httptestRecorder) siwx.Challenge {
		t.Helper()
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401: %s", rec.Code, rec.Body)
		}
		schematest.Check(t, "siwx-challenge", "", rec.Body.Bytes())
		var ch api.ProofChallenge
		_ = json.Unmarshal(rec.Body.Bytes(), &ch)
		c := ch.Extensions[siwx.Extension]
		if c.Info.Statement != siwx.Statement(siwx.PurposeResumePrefix+sig) {
			t.Fatalf("challenge not bound to resume:<transaction>: %q", c.Info.Statement)
		}
		return c
	}
	// The public transaction alone.
	ch := challenge(resume(""))
	// A third party signing the resume challenge with its own wallet.
	third, _ := siwx.Sign(ch, ed25519.PrivateKey(strangerK))
	rec := resume(third)
	var body api.ProofChallenge
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != http.StatusUnauthorized || body.Error != "caller_proof_wallet_mismatch" {
		t.Fatalf("third party: %d %s", rec.Code, rec.Body)
	}
	if row, _ := ms.Get(context.Background(), sig); row.Status != x402.StatusSettled || row.Claims != 1 {
		t.Fatalf("a refused resume touched the payment: %+v", row)
	}
	// The payer.
	ch = challenge(resume(""))
	mine, _ := siwx.Sign(ch, ed25519.PrivateKey(payerKey))
	rec = resume(mine)
	if rec.Code != http.StatusOK {
		t.Fatalf("payer resume: %d %s", rec.Code, rec.Body)
	}
	resp, err := x402.DecodeSettlementResponse(rec.Header().Get(x402.HeaderPaymentResponse))
	if err != nil || resp.Transaction != sig || !resp.Success {
		t.Fatalf("PAYMENT-RESPONSE %+v %v", resp, err)
	}
	rows, err := r.st.ListLedger(context.Background(), 0, 10)
	if err != nil || len(rows) != 1 || rows[0].PaymentTx != sig || rows[0].PayerWallet != payerKey.PublicKey().String() || !rows[0].House {
		t.Fatalf("ledger %+v %v, want one house row for the payer", rows, err)
	}
	if row, _ := ms.Get(context.Background(), sig); row.Status != x402.StatusDelivered {
		t.Fatalf("settlement %s after delivery, want delivered", row.Status)
	}
	// Delivered closes the marker. Anyone but the payer gets the same 401 as before delivery
	// (the answer does not tell a stranger whether a report is still owed); the payer, proven
	// again, gets duplicate_settlement; no audit, no second row.
	rec = resume(mine)
	if rec.Code != http.StatusUnauthorized || !bytes.Contains(rec.Body.Bytes(), []byte("caller_proof_replayed")) {
		t.Fatalf("after delivery, a used proof: %d %s", rec.Code, rec.Body)
	}
	again, _ := siwx.Sign(challenge(resume("")), ed25519.PrivateKey(payerKey))
	rec = resume(again)
	if rec.Code != http.StatusPaymentRequired || !bytes.Contains(rec.Body.Bytes(), []byte(x402.ReasonDuplicateSettlement)) {
		t.Fatalf("after delivery: %d %s", rec.Code, rec.Body)
	}
	if rows, _ := r.st.ListLedger(context.Background(), 0, 10); len(rows) != 1 {
		t.Fatalf("%d ledger rows after a replay of a delivered payment", len(rows))
	}
}

// slowChain is an RPC whose transactions never confirm within the request: simulation passes,
// the send is accepted, the status stays unknown.
type slowChain struct{}

func (slowChain) IsBlockhashValid(context.Context, solana.Hash) (bool, error) { return true, nil }
func (slowChain) LatestBlockhash(context.Context) (solana.Hash, uint64, error) {
	return solana.Hash{}, 1000, nil
}
func (slowChain) BlockHeight(context.Context) (uint64, error)            { return 900, nil }
func (slowChain) Simulate(context.Context, []byte) (x402.TxError, error) { return nil, nil }
func (slowChain) Send(context.Context, []byte) (solana.Signature, error) {
	return solana.Signature{}, nil
}
func (slowChain) Status(context.Context, solana.Signature) (*x402.SigStatus, error) { return nil, nil }
func (slowChain) Transaction(context.Context, solana.Signature) (*x402.Outcome, error) {
	return nil, x402.ErrTxNotFound
}

// Account answers the payer's USDC account holding one price (the balance check right before
// the broadcast passes) and nothing else.
func (slowChain) Account(_ context.Context, pk solana.PublicKey) (*x402.Account, error) {
	src, _, _ := solana.FindAssociatedTokenAddress(payerKey.PublicKey(), x402.Devnet.USDCMint)
	if pk.Equals(src) {
		return x402test.TokenAccount(x402.Devnet.USDCMint, payerKey.PublicKey(), 50000), nil
	}
	return nil, nil
}

// TestBroadcastPaymentPendingIs202: a broadcast payment whose confirmation outlasts the request
// is answered 202 with PAYMENT-RESPONSE naming the transaction (status pending) and a body that
// says how to resume, with a challenge bound to resume:<transaction>: never a bare timeout.
// A second payment of the same wallet meanwhile is refused before simulation.
func TestBroadcastPaymentPendingIs202(t *testing.T) {
	ms := x402.NewMemStore()
	r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", ms, slowChain{})
	r.gate.Settler().ConfirmTimeout = 50 * time.Millisecond
	r.gate.Settler().PollInterval = 10 * time.Millisecond
	hv, sig := payment(t, r, r.memo(t))
	rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d, want 202: %s", rec.Code, rec.Body)
	}
	schematest.Check(t, "payment-pending", "", rec.Body.Bytes())
	resp, err := x402.DecodeSettlementResponse(rec.Header().Get(x402.HeaderPaymentResponse))
	if err != nil || resp.Transaction != sig || resp.Status != "pending" || !resp.Success || resp.Network != x402.Devnet.CAIP2 {
		t.Fatalf("PAYMENT-RESPONSE %+v %v", resp, err)
	}
	var body struct {
		Transaction string
		Resume      struct {
			Until    string
			RunsLeft int            `json:"runs_left"`
			SIWX     siwx.Challenge `json:"sign-in-with-x"`
		}
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if body.Transaction != sig || body.Resume.RunsLeft != 3 || body.Resume.SIWX.Info.Statement != siwx.Statement(siwx.PurposeResumePrefix+sig) ||
		body.Resume.SIWX.Info.URI != "https://audit.example.com/audit" {
		t.Fatalf("202 body %s", rec.Body)
	}
	if row, _ := ms.Get(context.Background(), sig); row == nil || row.Status != x402.StatusSubmitted {
		t.Fatalf("settlement after 202: %+v, want submitted", row)
	}
	// Another payment by the same wallet while this one is in flight.
	hv2, _ := payment(t, r, r.memo(t))
	rec = r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv2})
	if rec.Code != http.StatusPaymentRequired || !bytes.Contains(rec.Body.Bytes(), []byte(x402.ReasonPayerBusy)) {
		t.Fatalf("second in-flight payment of one payer: %d %s", rec.Code, rec.Body)
	}
}

// failingChain lands every payment with an error (the payer's account emptied by a racing
// transfer after every check): our fee payer pays 10 001 lamports each time.
type failingChain struct {
	slowChain
	mu    sync.Mutex
	sends int
}

func (f *failingChain) Send(context.Context, []byte) (solana.Signature, error) {
	f.mu.Lock()
	f.sends++
	f.mu.Unlock()
	return solana.Signature{}, nil
}

var landedError = map[string]any{"InstructionError": []any{2, map[string]any{"Custom": 1}}}

func (f *failingChain) Status(context.Context, solana.Signature) (*x402.SigStatus, error) {
	return &x402.SigStatus{Slot: 9, Err: landedError, Confirmation: "confirmed"}, nil
}
func (f *failingChain) Transaction(context.Context, solana.Signature) (*x402.Outcome, error) {
	return &x402.Outcome{Slot: 9, Fee: 10001, Err: landedError}, nil
}

// TestFeeBudgets: failed landings count against two budgets of lamports per hour, the payer's
// own and the fee payer's global one across all payers. Once either is spent, the next payment
// is answered before any broadcast (429 payer_fee_budget, or 503 payments_paused with the pause
// reported and the free pre-check still working), with Retry-After, its row released, and the
// body valid against the payment-error schema.
func TestFeeBudgets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget func(s *x402.Settler) // two failures at 10 001 fit, not a third
		status int
		reason string
	}{
		{"per payer", func(s *x402.Settler) { s.FeeBudget = 25_000 }, http.StatusTooManyRequests, x402.ReasonPayerFeeBudget},
		{"global", func(s *x402.Settler) { s.FeeBudget, s.GlobalFeeBudget = 0, 25_000 }, http.StatusServiceUnavailable, x402.ReasonPaymentsPaused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := x402.NewMemStore()
			chain := &failingChain{}
			r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", ms, chain)
			s := r.gate.Settler()
			s.PollInterval = time.Millisecond
			tc.budget(s)
			var paused []bool
			var mu sync.Mutex
			s.OnPaused = func(p bool) { mu.Lock(); paused = append(paused, p); mu.Unlock() }
			for i := 0; i < 2; i++ {
				hv, _ := payment(t, r, r.memo(t))
				rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv})
				if rec.Code != http.StatusPaymentRequired || !bytes.Contains(rec.Body.Bytes(), []byte(x402.ReasonTransactionFailed)) {
					t.Fatalf("failed payment %d: %d %s", i, rec.Code, rec.Body)
				}
			}
			hv, sig := payment(t, r, r.memo(t))
			rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv})
			if rec.Code != tc.status || !bytes.Contains(rec.Body.Bytes(), []byte(tc.reason)) {
				t.Fatalf("third payment past the budget: %d %s", rec.Code, rec.Body)
			}
			schematest.Check(t, "payment-error", "", rec.Body.Bytes())
			if ra := rec.Header().Get("Retry-After"); ra != "3601" {
				// The rig's clock stands still: the oldest failure leaves the window in one hour.
				t.Fatalf("Retry-After %q, want 3601", ra)
			}
			if chain.sends != 2 {
				t.Fatalf("%d broadcasts, want 2 (none for the refused payment)", chain.sends)
			}
			if row, err := ms.Get(context.Background(), sig); err != nil || row.Status != x402.StatusReleased {
				t.Fatalf("refused payment's row %+v %v, want released", row, err)
			}
			if tc.reason != x402.ReasonPaymentsPaused {
				return
			}
			if row, _ := ms.Get(context.Background(), sig); row.Reason != x402.ReasonPaymentsPaused {
				t.Fatalf("paused payment's row reason %q", row.Reason)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(paused) == 0 || !paused[len(paused)-1] {
				t.Fatalf("the pause was not reported: %v", paused)
			}
			if pre := r.do(http.MethodPost, "/precheck", exportBody, nil); pre.Code != http.StatusOK {
				t.Fatalf("free pre-check while payments are paused: %d %s", pre.Code, pre.Body)
			}
		})
	}
}
