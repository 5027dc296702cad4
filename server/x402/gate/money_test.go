package gate_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/apidoc"
	"github.com/scopehygiene/scope-hygiene/server/internal/schematest"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/server/x402/gate"
)

var rigNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// putRow stores the settlement row of a payment in a given state, as if it had happened.
func putRow(t *testing.T, ms *x402.MemStore, sig, memo string, status x402.Status, reason string) {
	t.Helper()
	at := rigNow.Add(-time.Minute)
	fee := int64(10001)
	if _, err := ms.Reserve(context.Background(), &x402.Settlement{TxSig: sig, Challenge: memo, ChallengeExpiry: rigNow.Add(time.Minute),
		Payer: payerKey.PublicKey().String(), Network: x402.Devnet.CAIP2, Status: status, Reason: reason, Claims: 1,
		FeeLamports: &fee, SettledAt: &at, CreatedAt: at, UpdatedAt: at, AmountUnits: 50000}); err != nil {
		t.Fatal(err)
	}
}

// TestKnownTransactionSpendsNoPayerBudget: 40 replays of the payer's settled transaction (which
// anyone can rebuild from the chain) are answered 401 or, past the replaying address's own
// sign-in-with-x budget, 429 caller_proof_budget; none spends the payer's attempt budget, so the
// payer's next new payment is taken (202 here: the chain never confirms).
func TestKnownTransactionSpendsNoPayerBudget(t *testing.T) {
	ms := x402.NewMemStore()
	r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", ms, slowChain{})
	r.gate.Settler().ConfirmTimeout, r.gate.Settler().PollInterval = 20*time.Millisecond, 5*time.Millisecond
	memo := r.memo(t)
	hv, sig := payment(t, r, memo)
	putRow(t, ms, sig, memo, x402.StatusDelivered, "")
	counts := map[string]int{}
	for i := 0; i < 40; i++ {
		rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv})
		var b struct{ Error, Rule string }
		_ = json.Unmarshal(rec.Body.Bytes(), &b)
		if b.Error == "" {
			b.Error = b.Rule
		}
		counts[http.StatusText(rec.Code)+" "+b.Error]++
	}
	if counts["Unauthorized caller_unproven"] != 30 || counts["Too Many Requests caller_proof_budget"] != 10 {
		t.Fatalf("40 replays of a known transaction: %v, want 30 × 401 then 10 × 429 caller_proof_budget", counts)
	}
	hv2, _ := payment(t, r, r.memo(t))
	if rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv2}); rec.Code != http.StatusAccepted {
		t.Fatalf("the payer's new payment after 40 replays: %d %s", rec.Code, rec.Body)
	}
}

// TestStrangerSeesTheSameWhateverTheState: without the payer's proof, a known transaction is
// answered the same 401 (a challenge bound to resume:<transaction>) whether the payment is
// pending, settled and owed, delivered, failed or refunded.
func TestStrangerSeesTheSameWhateverTheState(t *testing.T) {
	for _, st := range []struct {
		status x402.Status
		reason string
	}{{x402.StatusSubmitted, ""}, {x402.StatusSettled, x402.ReasonUndelivered}, {x402.StatusDelivered, ""},
		{x402.StatusFailed, x402.ReasonTransactionFailed}, {x402.StatusFailed, x402.ReasonRefunded}} {
		t.Run(string(st.status)+"_"+st.reason, func(t *testing.T) {
			ms := x402.NewMemStore()
			r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", ms, slowChain{})
			memo := r.memo(t)
			hv, sig := payment(t, r, memo)
			putRow(t, ms, sig, memo, st.status, st.reason)
			rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv})
			var b api.ProofChallenge
			_ = json.Unmarshal(rec.Body.Bytes(), &b)
			if rec.Code != http.StatusUnauthorized || b.Error != "caller_unproven" || rec.Header().Get(x402.HeaderPaymentRequired) != "" ||
				b.Extensions[siwx.Extension].Info.Statement != siwx.Statement(siwx.PurposeResumePrefix+sig) {
				t.Fatalf("a stranger's request: %d %s", rec.Code, rec.Body)
			}
			// The request's Host (audit.test) never names the domain: the public base URL does.
			if info := b.Extensions[siwx.Extension].Info; info.Domain != "audit.example.com" || info.URI != "https://audit.example.com/audit" {
				t.Fatalf("challenge bound to %s %s, want the public base URL's audit.example.com", info.Domain, info.URI)
			}
		})
	}
}

// TestRefundedResumeIs410: the payer, proven, resuming a refunded payment gets 410 with the
// transaction and no new payment request.
func TestRefundedResumeIs410(t *testing.T) {
	ms := x402.NewMemStore()
	r := newRigWith(t, priced(t, "50000", "$0.05"), "", ms, slowChain{})
	memo := r.memo(t)
	hv, sig := payment(t, r, memo)
	putRow(t, ms, sig, memo, x402.StatusFailed, x402.ReasonRefunded)
	first := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv})
	var ch api.ProofChallenge
	_ = json.Unmarshal(first.Body.Bytes(), &ch)
	proof, err := siwx.Sign(ch.Extensions[siwx.Extension], ed25519.PrivateKey(payerKey))
	if err != nil {
		t.Fatal(err)
	}
	rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv, siwx.HeaderProof: proof})
	if rec.Code != http.StatusGone || rec.Header().Get(x402.HeaderPaymentRequired) != "" {
		t.Fatalf("the payer's resume of a refunded payment: %d %s (PAYMENT-REQUIRED %q)", rec.Code, rec.Body, rec.Header().Get(x402.HeaderPaymentRequired))
	}
	schematest.Check(t, "payment-refunded", "", rec.Body.Bytes())
	var b gate.Refunded
	_ = json.Unmarshal(rec.Body.Bytes(), &b)
	if b.Status != "refunded" || b.Transaction != sig {
		t.Fatalf("410 body %s", rec.Body)
	}
}

// TestExpiredChallengeNeverBroadcast: a payment whose challenge expired is refused before any
// RPC call, whether it is new or was reserved and released earlier (an RPC outage).
func TestExpiredChallengeNeverBroadcast(t *testing.T) {
	ms := x402.NewMemStore()
	chain := &failingChain{}
	r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", ms, chain)
	old := x402.NewChallenger(&x402.Config{Network: x402.Devnet, Price: x402.Price{Units: 50000},
		PayTo:        solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32))).PublicKey(),
		FeePayer:     solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))),
		ChallengeKey: bytes.Repeat([]byte{9}, 32), ChallengeTTL: x402.DefaultChallengeTTL},
		func() time.Time { return rigNow.Add(-10 * time.Minute) })
	for _, released := range []bool{false, true} {
		memo, _, err := old.Issue()
		if err != nil {
			t.Fatal(err)
		}
		hv, sig := payment(t, r, memo)
		if released {
			putRow(t, ms, sig, memo, x402.StatusReleased, x402.ReasonRPCUnavailable)
		}
		rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv})
		if rec.Code != http.StatusPaymentRequired || !bytes.Contains(rec.Body.Bytes(), []byte(x402.ReasonChallengeExpired)) {
			t.Fatalf("expired challenge (released row %v): %d %s", released, rec.Code, rec.Body)
		}
	}
	if chain.sends != 0 {
		t.Fatalf("%d broadcasts on expired challenges, want 0", chain.sends)
	}
}

// TestDummyHeadersSpendTheUnpaidBudget: a PAYMENT-SIGNATURE or Authorization header that does
// not verify spends the unpaid-audit budget like no header; a payment that verifies does not.
func TestDummyHeadersSpendTheUnpaidBudget(t *testing.T) {
	ms := x402.NewMemStore()
	r := newRigConfig(t, priced(t, "50000", "$0.05"), "https://audit.example.com", ms, slowChain{}, func(c *api.Config) {
		c.UnpaidAuditsPerMinute, c.UnpaidAuditBurst, c.HouseToken = 5, 5, "the-house-token"
	})
	r.gate.Settler().ConfirmTimeout, r.gate.Settler().PollInterval = 20*time.Millisecond, 5*time.Millisecond
	hv, _ := payment(t, r, r.memo(t)) // two unpaid calls (402s) spent here, three left
	counts := map[int]int{}
	for i := 0; i < 20; i++ {
		h := map[string]string{x402.HeaderPaymentSignature: "dummy"}
		if i%2 == 1 {
			h = map[string]string{"Authorization": "Bearer not-the-token"}
		}
		counts[r.do(http.MethodPost, "/audit", exportBody, h).Code]++
	}
	if counts[http.StatusTooManyRequests] != 17 {
		t.Fatalf("20 calls with dummy headers: %v, want 17 × 429 past the budget of 5", counts)
	}
	if rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv}); rec.Code != http.StatusAccepted {
		t.Fatalf("a verified payment past the unpaid budget: %d %s", rec.Code, rec.Body)
	}
	if rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{"Authorization": "Bearer the-house-token"}); rec.Code != http.StatusOK {
		t.Fatalf("the house token past the unpaid budget: %d %s", rec.Code, rec.Body)
	}
}

// blockingSend is a chain whose send answers only when the request's settlement deadline ends
// (the transaction is out; the RPC is slow).
type blockingSend struct {
	slowChain
	mu    sync.Mutex
	sends int
}

func (b *blockingSend) Send(ctx context.Context, _ []byte) (solana.Signature, error) {
	b.mu.Lock()
	b.sends++
	b.mu.Unlock()
	<-ctx.Done()
	return solana.Signature{}, ctx.Err()
}

// TestSettlementKeepsTheAnswerDeadline: settlement runs to the request's deadline less
// gate.AnswerReserve. A send that hangs ends in 202 naming the transaction before the request's
// deadline; with too little time left after the checks, nothing is broadcast (503).
func TestSettlementKeepsTheAnswerDeadline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget time.Duration
		code   int
		sends  int
	}{
		{"send_hangs_202_with_transaction", gate.AnswerReserve + 1500*time.Millisecond, http.StatusAccepted, 1},
		{"request_deadline_nothing_broadcast", gate.AnswerReserve + 300*time.Millisecond, http.StatusServiceUnavailable, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := x402.NewMemStore()
			chain := &blockingSend{}
			r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", ms, chain)
			r.gate.Settler().PollInterval = 10 * time.Millisecond
			hv, sig := payment(t, r, r.memo(t))
			ctx, cancel := context.WithTimeout(context.Background(), tc.budget)
			defer cancel()
			req := httptest.NewRequest(http.MethodPost, "/audit", strings.NewReader(exportBody)).WithContext(ctx)
			req.Host = "audit.test"
			req.Header.Set(x402.HeaderPaymentSignature, hv)
			rec := httptest.NewRecorder()
			r.srv.Handler().ServeHTTP(rec, req)
			apidoc.CheckT(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
			if rec.Code != tc.code || chain.sends != tc.sends {
				t.Fatalf("status %d after %d sends, want %d after %d: %s", rec.Code, chain.sends, tc.code, tc.sends, rec.Body)
			}
			if ctx.Err() != nil {
				t.Fatal("the answer came after the request's deadline")
			}
			if tc.code == http.StatusAccepted {
				resp, err := x402.DecodeSettlementResponse(rec.Header().Get(x402.HeaderPaymentResponse))
				if err != nil || resp.Transaction != sig {
					t.Fatalf("PAYMENT-RESPONSE %+v %v, want the transaction", resp, err)
				}
			} else if !bytes.Contains(rec.Body.Bytes(), []byte(x402.ReasonDeadline)) {
				t.Fatalf("503 body %s, want %s", rec.Body, x402.ReasonDeadline)
			}
		})
	}
}

// closingChain answers the payer's USDC account until it is closed.
type closingChain struct {
	slowChain
	mu     sync.Mutex
	closed bool
	reads  int
}

func (c *closingChain) Account(ctx context.Context, pk solana.PublicKey) (*x402.Account, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if c.closed {
		return nil, nil
	}
	return c.slowChain.Account(ctx, pk)
}

// TestClosedTokenAccountNotCounted: a wallet whose USDC account was closed after a first check
// is not counted as holding one on the next (no positive answer is remembered); a wallet
// without one is remembered.
func TestClosedTokenAccountNotCounted(t *testing.T) {
	chain := &closingChain{}
	r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", x402.NewMemStore(), chain)
	payer := payerKey.PublicKey().String()
	if has, err := r.gate.HasTokenAccount(context.Background(), payer); err != nil || !has {
		t.Fatalf("open account: %v %v", has, err)
	}
	chain.mu.Lock()
	chain.closed = true
	chain.mu.Unlock()
	if has, err := r.gate.HasTokenAccount(context.Background(), payer); err != nil || has {
		t.Fatalf("closed account still counted: %v %v", has, err)
	}
	reads := chain.reads
	if has, _ := r.gate.HasTokenAccount(context.Background(), payer); has || chain.reads != reads {
		t.Fatalf("a wallet without an account read again (%d reads, was %d)", chain.reads, reads)
	}
}

// TestReadinessReflectsTheRPC: with payments on, /readyz names payments_rpc and is not ready
// while the payment network's RPC does not answer (the rig's default RPC is a closed port).
func TestReadinessReflectsTheRPC(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rpc   x402.RPC
		code  int
		state string
	}{{"rpc_answers", slowChain{}, http.StatusOK, "ok"}, {"rpc_unreachable", nil, http.StatusServiceUnavailable, "unavailable"}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", x402.NewMemStore(), tc.rpc)
			rec := r.do(http.MethodGet, "/readyz", "", nil)
			schematest.Check(t, "health", "", rec.Body.Bytes())
			var b struct{ Checks map[string]string }
			_ = json.Unmarshal(rec.Body.Bytes(), &b)
			if rec.Code != tc.code || b.Checks[api.PaymentsCheck] != tc.state {
				t.Fatalf("/readyz %d %s, want %d with %s %s", rec.Code, rec.Body, tc.code, api.PaymentsCheck, tc.state)
			}
		})
	}
}

// downChain's RPC does not answer before the broadcast: every attempt is released unsent.
type downChain struct {
	slowChain
	mu    sync.Mutex
	calls int
}

func (d *downChain) IsBlockhashValid(context.Context, solana.Hash) (bool, error) {
	d.mu.Lock()
	d.calls++
	d.mu.Unlock()
	return false, context.DeadlineExceeded
}

// TestResentPaymentBudgetedPerAddress: a known payment never broadcast (released after an RPC
// outage) may be sent again, each time an RPC call: those re-sends spend the presenting address's
// budget (30 a minute), never the payer's, and past it nothing reaches the RPC.
func TestResentPaymentBudgetedPerAddress(t *testing.T) {
	ms := x402.NewMemStore()
	chain := &downChain{}
	r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", ms, chain)
	hv, _ := payment(t, r, r.memo(t))
	counts := map[int]int{}
	for i := 0; i < 32; i++ {
		rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv})
		counts[rec.Code]++
		if rec.Code == http.StatusTooManyRequests && !bytes.Contains(rec.Body.Bytes(), []byte(gate.ReasonAddressAttemptBudget)) {
			t.Fatalf("429 %s, want %s", rec.Body, gate.ReasonAddressAttemptBudget)
		}
	}
	// The first send is new (the payer's budget), the next 30 re-sends the address's: the last is 429.
	if counts[http.StatusServiceUnavailable] != 31 || counts[http.StatusTooManyRequests] != 1 || chain.calls != 31 {
		t.Fatalf("32 sends of one payment with the RPC down: %v, %d RPC calls; want 31 × 503, 1 × 429, 31 calls", counts, chain.calls)
	}
	// The payer's own budget is untouched: a new payment of the same wallet is taken (and
	// released again by the outage).
	hv2, _ := payment(t, r, r.memo(t))
	if rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv2}); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("the payer's new payment: %d %s", rec.Code, rec.Body)
	}
}

// settledChain confirms every payment at once with the price moved to payTo.
type settledChain struct{ slowChain }

func (settledChain) Status(context.Context, solana.Signature) (*x402.SigStatus, error) {
	return &x402.SigStatus{Slot: 9, Confirmation: "confirmed"}, nil
}
func (settledChain) Transaction(context.Context, solana.Signature) (*x402.Outcome, error) {
	payTo := solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32))).PublicKey()
	return &x402.Outcome{Slot: 9, Fee: 10001,
		Pre:  []x402.TokenBalance{{Owner: payTo, Mint: x402.Devnet.USDCMint, Amount: big.NewInt(0)}},
		Post: []x402.TokenBalance{{Owner: payTo, Mint: x402.Devnet.USDCMint, Amount: big.NewInt(50000)}}}, nil
}

// ledgerDown is the rig's store whose ledger cannot be written.
type ledgerDown struct{ *sqlite.Store }

func (ledgerDown) AppendLedger(context.Context, store.LedgerEntry) (int64, error) {
	return 0, errors.New("disk full")
}

// AppendLedgerOnce fails too: the server writes a keyed store's rows through it.
func (ledgerDown) AppendLedgerOnce(context.Context, store.LedgerEntry, store.WriteKey, time.Time) (int64, bool, error) {
	return 0, false, errors.New("disk full")
}

// TestLedgerFailureAfterSettlementNamesTheTransaction: the payment settled and its ledger row
// cannot be written: the store's 503 carries PAYMENT-RESPONSE with the settled transaction (no
// bare 503), and the settlement stays owed, so the payer can resume.
func TestLedgerFailureAfterSettlementNamesTheTransaction(t *testing.T) {
	ms := x402.NewMemStore()
	r := newRigConfig(t, priced(t, "50000", "$0.05"), "https://audit.example.com", ms, settledChain{}, func(c *api.Config) {
		c.Store = ledgerDown{c.Store.(*sqlite.Store)}
	})
	r.gate.Settler().PollInterval = time.Millisecond
	hv, sig := payment(t, r, r.memo(t))
	rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: hv})
	resp, err := x402.DecodeSettlementResponse(rec.Header().Get(x402.HeaderPaymentResponse))
	if rec.Code != http.StatusServiceUnavailable || err != nil || !resp.Success || resp.Transaction != sig {
		t.Fatalf("ledger write failed after settlement: %d %s, PAYMENT-RESPONSE %+v %v", rec.Code, rec.Body, resp, err)
	}
	if row, err := ms.Get(context.Background(), sig); err != nil || row.Status != x402.StatusSettled || row.Reason != x402.ReasonUndelivered {
		t.Fatalf("settlement %+v %v, want settled and undelivered (resumable)", row, err)
	}
}
