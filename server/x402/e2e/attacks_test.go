package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// latePayment is a payment whose confirmation the facade holds; its client runs on its own
// goroutine while the other cases go on.
type latePayment struct {
	client string
	delay  time.Duration
	done   chan lateResult
}

type lateResult struct {
	r   result
	err error
}

// startLate pays from client while the facade holds the confirmation of its transactions for
// delay after sending.
func (w *world) startLate(t *testing.T, client string, delay time.Duration) *latePayment {
	t.Helper()
	w.control("delayConfirmation", map[string]any{"payer": w.clients[client].PublicKey().String(), "ms": delay.Milliseconds()})
	lp := &latePayment{client: client, delay: delay, done: make(chan lateResult, 1)}
	go func() {
		r, err := w.runClient("pay", client, "")
		lp.done <- lateResult{r, err}
	}()
	return lp
}

// waitDelayedSends waits until n held transactions were sent, so the cases after it see
// balances that no held payment changes any more.
func (w *world) waitDelayedSends(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var got int
		json.Unmarshal(w.control("delayedSent", nil), &got)
		if got >= n {
			w.heldAt = time.Now()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the held payments were not sent within 30 s")
}

// sends counts the server's sendTransaction calls so far.
func (w *world) sends() int {
	var calls []string
	json.Unmarshal(w.control("calls", nil), &calls)
	n := 0
	for _, c := range calls {
		if c == "server:sendTransaction" {
			n++
		}
	}
	return n
}

// ledgerCmd runs one `scope-hygiene ledger` command of the built binary on the test's store.
func (w *world) ledgerCmd(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	full := append([]string{"ledger"}, args...)
	full = append(full, "-store", "sqlite:"+w.dbPath)
	cmd := exec.CommandContext(ctx, filepath.Join(w.dir, "scope-hygiene"), full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ledger %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

type pendingRow struct {
	Transaction string `json:"transaction"`
	Payer       string `json:"payer"`
	Status      string `json:"status"`
}

func (w *world) pending(t *testing.T) map[string]pendingRow {
	t.Helper()
	m := map[string]pendingRow{}
	sc := bufio.NewScanner(strings.NewReader(w.ledgerCmd(t, "pending", "-json")))
	for sc.Scan() {
		var p pendingRow
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("ledger pending -json line %q: %v", sc.Text(), err)
		}
		m[p.Transaction] = p
	}
	return m
}

// attackCases are the fee-payer drains of issue 9 against the real binary.
func attackCases(t *testing.T, w *world) {
	feeBalance := func() int64 {
		var n int64
		json.Unmarshal(w.control("balance", map[string]any{"address": w.feePayer.PublicKey().String()}), &n)
		return n
	}

	// The payer's account is emptied after our simulation passed (a transfer racing ours): the
	// balance read right before the broadcast refuses it, nothing is sent, the fee payer pays
	// nothing.
	t.Run("balance_emptied_after_simulation_nothing_broadcast", func(t *testing.T) {
		racer := w.clients["racer"].PublicKey()
		fee, sends, rows := feeBalance(), w.sends(), len(w.ledger())
		w.control("drainAfterSimulate", map[string]any{"account": ata(racer, w.usdc).String()})
		r := w.run("pay", "racer", "")
		if r.First.Status != 402 || r.First.PaymentRequired == nil || r.First.PaymentRequired.Error != x402.ReasonInsufficientFunds {
			t.Fatalf("drained after simulation: %+v", r.First)
		}
		if feeBalance() != fee || w.sends() != sends || len(w.ledger()) != rows {
			t.Fatalf("fee payer spent %d lamports, %d broadcasts, %d ledger rows", fee-feeBalance(), w.sends()-sends, len(w.ledger())-rows)
		}
		t.Logf("account emptied after simulation: 402 %s, 0 broadcasts, fee payer spent 0; PAYMENT-RESPONSE %+v", x402.ReasonInsufficientFunds, *r.First.PaymentResponse)
	})

	// The payer's transfer keeps losing the race on-chain (its account is emptied right before
	// each send lands): the fee payer pays each failed landing until the payer's failures of the
	// hour reach the fee budget (25 000 lamports here); the next payment is 429 before any
	// broadcast.
	t.Run("fee_budget_per_payer_per_hour", func(t *testing.T) {
		d := w.clients["drainer"].PublicKey()
		acct := ata(d, w.usdc).String()
		fee := feeBalance()
		for i := 0; i < 2; i++ {
			w.control("setTokenAccount", map[string]any{"account": acct, "mint": w.usdc.String(), "owner": d.String(), "amount": price})
			w.control("drainBeforeSend", map[string]any{"account": acct})
			r := w.run("pay", "drainer", "")
			if r.First.Status != 402 || r.First.PaymentRequired == nil || r.First.PaymentRequired.Error != x402.ReasonTransactionFailed {
				t.Fatalf("failed landing %d: %+v", i+1, r.First)
			}
		}
		lost := fee - feeBalance()
		w.control("setTokenAccount", map[string]any{"account": acct, "mint": w.usdc.String(), "owner": d.String(), "amount": price})
		sends := w.sends()
		r := w.run("pay", "drainer", "")
		if r.First.Status != 429 || r.First.Error != x402.ReasonPayerFeeBudget {
			t.Fatalf("past the fee budget: %+v", r.First)
		}
		if w.sends() != sends || fee-feeBalance() != lost || lost != 2*10001 {
			t.Fatalf("fee payer lost %d lamports (want 20002, none for the throttled payment), %d broadcasts after the budget", fee-feeBalance(), w.sends()-sends)
		}
		t.Logf("fee budget: 2 failed landings cost %d lamports, the third payment got 429 %s with no broadcast\nRetry-After: %s\n%s",
			lost, x402.ReasonPayerFeeBudget, r.First.RetryAfter, r.First.Body)
	})
}

// lateCases collect the held payments started before the other cases.
func lateCases(t *testing.T, w *world, slow, stranded *latePayment) {
	url := w.server + "/audit"
	body, _ := os.ReadFile(w.exportF)

	// The chain confirms 40 s after the send: the client gets 202 with the transaction within
	// the request, resumes with a proof by the payer wallet once it is confirmed, and gets the
	// report; one ledger row.
	t.Run("confirmation_after_40s_202_then_payer_resume", func(t *testing.T) {
		lr := <-slow.done
		if lr.err != nil {
			t.Fatal(lr.err)
		}
		o := lr.r.First
		if o.Status != 202 || o.PaymentResponse == nil || o.PaymentResponse.Transaction == "" || o.PaymentResponse.Status != "pending" {
			t.Fatalf("held confirmation: %+v", o)
		}
		sig := o.PaymentResponse.Transaction
		t.Logf("202 body: %s\nPAYMENT-RESPONSE %+v", o.Body, *o.PaymentResponse)
		if p, ok := w.pending(t)[sig]; !ok || (p.Status != "submitted" && p.Status != "settled") {
			t.Fatalf("ledger pending before the resume: %+v", p)
		}
		for _, e := range w.ledger() {
			if e.PaymentTx == sig {
				t.Fatal("a ledger row before the report was delivered")
			}
		}
		// Every resume attempt spends a challenge of this address's sign-in-with-x budget, so
		// the payer waits for the confirmation (held from the send, before heldAt) first.
		time.Sleep(time.Until(w.heldAt.Add(slow.delay + time.Second)))
		var ans answer
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
			pay := map[string]string{"PAYMENT-SIGNATURE": lr.r.Header}
			first := post(t, url, body, pay)
			if first.status != 401 {
				t.Fatalf("resume without a proof: %d %s", first.status, first.body)
			}
			pay[siwx.HeaderProof] = w.signNode(t, url, first.body, w.clients["slow"])
			if ans = post(t, url, body, pay); ans.status != 202 {
				break
			}
		}
		if ans.status != 200 || !strings.Contains(string(ans.body), `"kind":"audit_report"`) {
			t.Fatalf("payer resume after confirmation: %d %.300s", ans.status, ans.body)
		}
		n := 0
		for _, e := range w.ledger() {
			if e.PaymentTx == sig {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d ledger rows for the payment, want 1", n)
		}
		if _, ok := w.pending(t)[sig]; ok {
			t.Fatal("a delivered payment is still listed by ledger pending")
		}
		t.Logf("confirmation held 40 s: 202 with tx %s, payer resume → 200, one ledger row", sig)
	})

	// A payment that settles and is never collected is listed by `ledger pending` (submitted,
	// then settled once the reconciler sees it confirmed) and refunded by `ledger refund -tx`:
	// its ledger row is written refunded (house: a devnet payment), and it leaves the list.
	t.Run("stranded_payment_pending_then_refunded", func(t *testing.T) {
		lr := <-stranded.done
		if lr.err != nil {
			t.Fatal(lr.err)
		}
		if lr.r.First.Status != 202 || lr.r.First.PaymentResponse == nil {
			t.Fatalf("stranded payment's answer: %+v", lr.r.First)
		}
		sig := lr.r.First.PaymentResponse.Transaction
		var p pendingRow
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
			var ok bool
			if p, ok = w.pending(t)[sig]; !ok {
				t.Fatal("the stranded payment is not listed by ledger pending")
			}
			if p.Status == "settled" {
				break
			}
		}
		if p.Status != "settled" || p.Payer != w.clients["stranded"].PublicKey().String() {
			t.Fatalf("stranded payment never settled by the reconciler: %+v", p)
		}
		t.Logf("$ scope-hygiene ledger pending\n%s", w.ledgerCmd(t, "pending"))
		out := w.ledgerCmd(t, "refund", "-tx", sig)
		t.Logf("$ scope-hygiene ledger refund -tx %s\n%s", sig, out)
		var res struct {
			Refunded int64 `json:"refunded"`
			Stranded bool  `json:"stranded"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Stranded || res.Refunded == 0 {
			t.Fatalf("ledger refund -tx: %q %v", out, err)
		}
		var rows int
		for _, e := range w.ledger() {
			if e.PaymentTx == sig {
				rows++
				// The refund books the amount the payment was made at: the served criteria's
				// price, not the built-in one.
				if !e.CAD.Refund || !e.House || e.PayerWallet != p.Payer || e.ID != res.Refunded || e.PriceUSDCUnits != price {
					t.Fatalf("refunded row %+v", e)
				}
			}
		}
		if rows != 1 {
			t.Fatalf("%d ledger rows for the refunded payment, want 1", rows)
		}
		if _, ok := w.pending(t)[sig]; ok {
			t.Fatal("a refunded payment is still listed by ledger pending")
		}
		// The payer comes back for the report: 410 refunded, no new payment request.
		back := w.resumeAs(t, from{addr: "192.0.2.50"}, lr.r.Header, w.clients["stranded"])
		var gone struct{ Kind, Status, Transaction string }
		json.Unmarshal(back.body, &gone)
		if back.status != 410 || gone.Status != "refunded" || gone.Transaction != sig || back.header.Get(x402.HeaderPaymentRequired) != "" {
			t.Fatalf("the payer's resume of a refunded payment: %d %s (PAYMENT-REQUIRED %q)", back.status, back.body, back.header.Get(x402.HeaderPaymentRequired))
		}
		t.Logf("the payer's resume after the refund: 410\n%s", back.body)
		t.Logf("$ scope-hygiene ledger pending\n%s$ scope-hygiene ledger tripwires\n%s", w.ledgerCmd(t, "pending"), w.ledgerCmd(t, "tripwires"))
		t.Logf("stranded payment %s: listed pending, refunded as ledger row %d (house)", sig, res.Refunded)
	})
}
