package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// from is one HTTP request of a given party: its client address (X-Forwarded-For, which the
// server trusts in this test) and, for a page on another site relaying requests, its Host.
type from struct {
	addr string
	host string
}

type reply struct {
	status int
	body   []byte
	header http.Header
}

func (f from) post(t *testing.T, url string, body []byte, hdr map[string]string) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if f.addr != "" {
		req.Header.Set("X-Forwarded-For", f.addr)
	}
	if f.host != "" {
		req.Host = f.host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, b, res.Header}
}

func (r reply) answer() answer { return answer{r.status, r.body} }

// resumeAs collects a pending or undelivered payment as its payer: the 401 resume challenge,
// signed with the real @x402/extensions helpers, then the same request with the proof.
func (w *world) resumeAs(t *testing.T, f from, header string, key solana.PrivateKey) reply {
	t.Helper()
	url := w.server + "/audit"
	body, _ := os.ReadFile(w.exportF)
	pay := map[string]string{x402.HeaderPaymentSignature: header}
	first := f.post(t, url, body, pay)
	if first.status != 401 {
		t.Fatalf("the payer's resume without a proof: %d %s", first.status, first.body)
	}
	pay[siwx.HeaderProof] = w.signNode(t, url, first.body, key)
	return f.post(t, url, body, pay)
}

func (w *world) rowsFor(tx string) int {
	n := 0
	for _, e := range w.ledger() {
		if e.PaymentTx == tx {
			n++
		}
	}
	return n
}

// pendingPayment pays from client while the chain hides every status, so the answer is 202.
func (w *world) pendingPayment(t *testing.T, client string) result {
	t.Helper()
	w.control("hideStatuses", map[string]any{"hide": true})
	r := w.run("pay", client, "")
	w.control("hideStatuses", map[string]any{"hide": false})
	if r.First.Status != 202 || r.First.PaymentResponse == nil || r.First.PaymentResponse.Transaction == "" {
		t.Fatalf("a payment whose confirmation outlasts the request: %+v", r.First)
	}
	return r
}

// identityCases are issue 22's budget and origin cases: nothing a third party sends spends a
// payer's budget, closes its resume window or collects its report.
func identityCases(t *testing.T, w *world) {
	url := w.server + "/audit"
	body, _ := os.ReadFile(w.exportF)

	// A third party rebuilds the payer's settled transaction from the chain and replays it 30
	// times: each replay is a known transaction, answered 401 (the payer's proof is required)
	// out of the third party's own address budget; the payer's next new payment settles.
	t.Run("third_party_replays_then_payers_new_payment_200", func(t *testing.T) {
		r := w.run("pay", "victim1", "")
		if r.First.Status != 200 {
			t.Fatalf("the payer's first payment: %+v", r.First)
		}
		thief := from{addr: "198.51.100.7"}
		counts := map[string]int{}
		for i := 0; i < 30; i++ {
			a := thief.post(t, url, body, map[string]string{x402.HeaderPaymentSignature: r.Header})
			counts[fmt.Sprintf("%d %s", a.status, errorOf(a.answer()))]++
		}
		if counts["401 caller_unproven"] != 30 {
			t.Fatalf("30 third-party replays: %v, want 30 × 401 caller_unproven", counts)
		}
		r2 := w.run("pay", "victim1", "")
		if r2.First.Status != 200 || r2.First.PaymentResponse == nil || r2.First.PaymentResponse.Transaction == "" {
			t.Fatalf("the payer's new payment after 30 third-party replays: %+v", r2.First)
		}
		t.Logf("30 third-party replays of a settled payment: %v; the payer's next payment: 200, tx %s", counts, r2.First.PaymentResponse.Transaction)
	})

	// A payment waits for resume (202); a third party replays its public transaction 40 times
	// meanwhile (401, then 429 caller_proof_budget for its own address); the payer resumes with
	// its proof and gets the report; one ledger row.
	t.Run("payer_resume_while_third_party_replays", func(t *testing.T) {
		r := w.pendingPayment(t, "victim2")
		sig := r.First.PaymentResponse.Transaction
		thief := from{addr: "198.51.100.8"}
		counts := map[string]int{}
		for i := 0; i < 40; i++ {
			a := thief.post(t, url, body, map[string]string{x402.HeaderPaymentSignature: r.Header})
			counts[fmt.Sprintf("%d %s", a.status, errorOf(a.answer()))]++
		}
		if counts["401 caller_unproven"]+counts["429 caller_proof_budget"] != 40 {
			t.Fatalf("40 third-party replays of a pending payment: %v", counts)
		}
		a := w.resumeAs(t, from{addr: "192.0.2.20"}, r.Header, w.clients["victim2"])
		if a.status != 200 || !strings.Contains(string(a.body), `"kind":"audit_report"`) {
			t.Fatalf("the payer's resume during the replays: %d %.300s", a.status, a.body)
		}
		if n := w.rowsFor(sig); n != 1 {
			t.Fatalf("%d ledger rows for the payment, want 1", n)
		}
		t.Logf("40 third-party replays of a pending payment: %v; the payer's resume: 200, one ledger row", counts)
	})

	// A page on another site (evil.example) relays the payer's public payment to the service
	// and shows the payer's wallet the resume challenge as a sign-in to evil.example (its own
	// domain, which the wallet checks against the page). The proof is refused naming the
	// service's own domain; the payer still collects the report.
	t.Run("proof_minted_under_another_host_refused_payer_collects", func(t *testing.T) {
		r := w.pendingPayment(t, "victim3")
		sig := r.First.PaymentResponse.Transaction
		thief := from{addr: "203.0.113.9", host: "evil.example"}
		thiefBody := []byte(strings.Replace(exportBody, `"lives in Oslo"`, `"lives in Bergen"`, 1))
		first := thief.post(t, url, thiefBody, map[string]string{x402.HeaderPaymentSignature: r.Header})
		if first.status != 401 {
			t.Fatalf("the relay's first request: %d %s", first.status, first.body)
		}
		// The relaying page presents the challenge as a sign-in to its own domain.
		var ch map[string]any
		json.Unmarshal(first.body, &ch)
		info := ch["extensions"].(map[string]any)[siwx.Extension].(map[string]any)["info"].(map[string]any)
		info["domain"] = "evil.example"
		relayed, _ := json.Marshal(ch)
		proof := w.signNode(t, "http://evil.example/audit", relayed, w.clients["victim3"], "relay")
		a := thief.post(t, url, thiefBody, map[string]string{x402.HeaderPaymentSignature: r.Header, siwx.HeaderProof: proof})
		u, _ := neturlHost(w.server)
		var refusal struct{ Error, Message string }
		json.Unmarshal(a.body, &refusal)
		if a.status != 401 || refusal.Error != "caller_proof_wrong_domain" || !strings.Contains(refusal.Message, u) {
			t.Fatalf("a proof minted for evil.example: %d %s", a.status, a.body)
		}
		mine := w.resumeAs(t, from{addr: "192.0.2.30"}, r.Header, w.clients["victim3"])
		if mine.status != 200 || !strings.Contains(string(mine.body), `"kind":"audit_report"`) {
			t.Fatalf("the payer's resume after the relayed proof: %d %.300s", mine.status, mine.body)
		}
		var payer string
		for _, e := range w.ledger() {
			if e.PaymentTx == sig {
				payer = e.PayerWallet
			}
		}
		if w.rowsFor(sig) != 1 || payer != w.clients["victim3"].PublicKey().String() {
			t.Fatalf("ledger rows for the payment: %d (payer %s), want one, the payer's", w.rowsFor(sig), payer)
		}
		t.Logf("proof minted for evil.example: 401 %s\n%s\nthe payer's own resume: 200, one ledger row", refusal.Error, a.body)
	})
}

func neturlHost(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	return u.Host, nil
}

// deadlineCases: a slow RPC before or after the broadcast still ends in an answer naming the
// transaction within the request (10 s): 200 with the report or 202 with PAYMENT-RESPONSE.
func deadlineCases(t *testing.T, w *world) {
	for _, c := range []struct {
		name, client, method string
		delay                time.Duration
	}{
		{"send_answer_3s_late_202_or_200_with_transaction", "sender", "sendTransaction", 3 * time.Second},
		{"simulation_2500ms_202_or_200_with_transaction", "simulator", "simulateTransaction", 2500 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			w.control("delayReply", map[string]any{"method": c.method, "ms": c.delay.Milliseconds()})
			// The chain also confirms late (12 s after the send): confirmation would outlast the
			// request if it were timed from the start of the wait.
			w.control("delayConfirmation", map[string]any{"payer": w.clients[c.client].PublicKey().String(), "ms": 12000})
			r := w.run("pay", c.client, "")
			w.control("delayReply", map[string]any{"method": c.method, "ms": 0})
			o := r.First
			if (o.Status != 200 && o.Status != 202) || o.PaymentResponse == nil || o.PaymentResponse.Transaction == "" {
				t.Fatalf("%s %v late: %d %s, PAYMENT-RESPONSE %+v", c.method, c.delay, o.Status, o.Body, o.PaymentResponse)
			}
			// The server's request timeout is 10 s: the answer came within it, not from it.
			if o.MS >= 10_000 {
				t.Fatalf("the answer took %d ms, past the 10 s request timeout", o.MS)
			}
			t.Logf("%s answered %v late, confirmation 12 s after the send: %d in %d ms with tx %s\n%s", c.method, c.delay, o.Status,
				o.MS, o.PaymentResponse.Transaction, o.Body)
		})
	}
}

// globalBudgetCase: 20 wallets whose payments all lose the race on-chain (their accounts are
// emptied right before each send lands), four at a time. The fee payer pays failed landings
// only until the failures of the hour, with the payments in flight at their worst case, reach
// the global budget (the default 100 000 lamports); then payments answer 503 payments_paused
// with Retry-After before any broadcast, the metric says paused, and the free pre-check works.
// It runs last: payments stay paused for the rest of the hour.
func globalBudgetCase(t *testing.T, w *world) {
	t.Run("twenty_wallets_losing_the_race_cost_at_most_the_global_budget", func(t *testing.T) {
		const global = 100_000
		feeBalance := func() int64 {
			var n int64
			json.Unmarshal(w.control("balance", map[string]any{"address": w.feePayer.PublicKey().String()}), &n)
			return n
		}
		var accounts []string
		var names []string
		for i := 0; i < 20; i++ {
			n := fmt.Sprintf("loser%02d", i)
			k := solana.NewWallet().PrivateKey
			w.clients[n] = k
			names = append(names, n)
			a := ata(k.PublicKey(), w.usdc).String()
			accounts = append(accounts, a)
			w.control("setTokenAccount", map[string]any{"account": a, "mint": w.usdc.String(), "owner": k.PublicKey().String(), "amount": price})
		}
		w.control("drainEvery", map[string]any{"accounts": accounts})
		defer w.control("drainEvery", map[string]any{"accounts": []string{}})
		fee := feeBalance()
		var mu sync.Mutex
		counts := map[string]int{}
		var pausedBody, retryAfter string
		sem := make(chan struct{}, 4)
		var wg sync.WaitGroup
		errs := make(chan error, len(names))
		for _, n := range names {
			wg.Add(1)
			go func(n string) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				r, err := w.runClient("pay", n, "")
				if err != nil {
					errs <- err
					return
				}
				o := r.First
				key := fmt.Sprint(o.Status)
				if o.PaymentRequired != nil {
					key += " " + o.PaymentRequired.Error
				} else if o.Error != "" {
					key += " " + o.Error
				}
				mu.Lock()
				counts[key]++
				if o.Status == 503 && o.Error == x402.ReasonPaymentsPaused {
					pausedBody, retryAfter = o.Body, o.RetryAfter
				}
				mu.Unlock()
			}(n)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		lost := fee - feeBalance()
		// Every failed landing of the hour, all payers (the earlier cases' included).
		st, err := sqlite.Open(context.Background(), w.dbPath)
		if err != nil {
			t.Fatal(err)
		}
		fees, err := st.Settlements().FailedFees(context.Background(), "", time.Now().Add(-time.Hour), 10000)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		var hour int64
		for _, f := range fees {
			if f.Lamports != nil {
				hour += *f.Lamports
			}
		}
		t.Logf("20 wallets losing the race: %v; the fee payer lost %d lamports in this case, %d in the hour over %d failed transactions (global budget %d)\nRetry-After: %s\n%s",
			counts, lost, hour, len(fees), global, retryAfter, pausedBody)
		if counts["503 "+x402.ReasonPaymentsPaused] == 0 || counts["402 "+x402.ReasonTransactionFailed]+counts["503 "+x402.ReasonPaymentsPaused] != 20 {
			t.Fatalf("answers %v, want failed landings then 503 payments_paused", counts)
		}
		if lost > global || hour > global || retryAfter == "" {
			t.Fatalf("the fee payer lost %d lamports in this case and %d in the hour, over the %d budget (Retry-After %q)", lost, hour, global, retryAfter)
		}
		res, err := http.Get(w.server + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		mb, _ := io.ReadAll(res.Body)
		res.Body.Close()
		// Every paused payment fired the tripwire's counter once.
		want := fmt.Sprintf("\nscope_hygiene_x402_payments_paused_total %d\n", counts["503 "+x402.ReasonPaymentsPaused])
		if !bytes.Contains(mb, []byte(want)) {
			t.Fatalf("/metrics lacks %q", strings.TrimSpace(want))
		}
		// The free pre-check needs no fee payer: it keeps working.
		pre := from{addr: "192.0.2.40"}.post(t, w.server+"/precheck", []byte(exportBody), nil)
		if pre.status != 200 {
			t.Fatalf("free pre-check while payments are paused: %d %s", pre.status, pre.body)
		}
	})
}
