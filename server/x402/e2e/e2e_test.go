// Package e2e drives the real x402 client (@x402/fetch + @x402/svm) against the real
// scope-hygiene server, settling on a local SVM (LiteSVM behind a JSON-RPC facade). Everything
// runs on 127.0.0.1. It runs only with X402_E2E=1 (scripts/x402-e2e.sh installs the pinned npm
// packages with npm ci and sets it).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/server/x402/x402test/facade"
)

// price is the served criteria's price in USDC units (not the built-in 50 000).
const price = 70000

const exportBody = `{"family":"mem0","form":"full_text","records":[` +
	`{"id":"r1","content_text":"likes tea","user_id":"alice"},` +
	`{"id":"r2","content_text":"likes tea","user_id":"bob"},` +
	`{"id":"r3","content_text":"lives in Oslo","user_id":"alice"}]}`

type world struct {
	t         *testing.T
	dir       string
	clientRPC string
	serverRPC string
	server    string
	dbPath    string
	exportF   string
	feePayer  solana.PrivateKey
	payTo     solana.PublicKey
	usdc      solana.PublicKey
	clients   map[string]solana.PrivateKey
	heldAt    time.Time // when the held payments had been sent (waitDelayedSends)
	chain     *facade.Facade
}

// The facade's helpers under the names the cases use.
var (
	ata        = facade.ATA
	keygenJSON = facade.SecretJSON
)

func (w *world) control(op string, args map[string]any) json.RawMessage {
	w.t.Helper()
	return w.chain.Control(op, args)
}

func (w *world) tokenAmount(owner solana.PublicKey) string {
	var s string
	json.Unmarshal(w.control("tokenAmount", map[string]any{"account": ata(owner, w.usdc).String()}), &s)
	return s
}

// outcome mirrors client.mjs's output.
type outcome struct {
	Status          int                      `json:"status"`
	PaymentRequired *x402.PaymentRequired    `json:"paymentRequired"`
	PaymentResponse *x402.SettlementResponse `json:"paymentResponse"`
	Expose          string                   `json:"expose"`
	Kind            string                   `json:"kind"`
	Error           string                   `json:"error"`
	Body            string                   `json:"body"`
	RetryAfter      string                   `json:"retryAfter"`
	// MS is how long the paid request took, answer read in full (scenario pay).
	MS int64 `json:"ms"`
}

type result struct {
	Paid   *outcome  `json:"paid"`
	First  *outcome  `json:"first"`
	Second *outcome  `json:"second"`
	All    []outcome `json:"all"`
	Header string    `json:"header"`
}

func (w *world) run(scenario, client string, arg string) result {
	w.t.Helper()
	r, err := w.runClient(scenario, client, arg)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// runClient runs client.mjs once; it may run on another goroutine (no t.Fatal).
func (w *world) runClient(scenario, client string, arg string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", scenario, w.server, w.clientRPC, keygenJSON(w.clients[client]), w.exportF, arg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var r result
	if err != nil {
		return r, fmt.Errorf("client %s: %v\n%s", scenario, err, stderr.String())
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("client %s output: %v\n%s", scenario, err, out)
	}
	return r, nil
}

func (w *world) ledger() []store.LedgerEntry {
	w.t.Helper()
	st, err := sqlite.Open(context.Background(), w.dbPath)
	if err != nil {
		w.t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.ListLedger(context.Background(), 0, 1000)
	if err != nil {
		w.t.Fatal(err)
	}
	return rows
}

func startServer(t *testing.T, w *world) {
	bin := filepath.Join(w.dir, "scope-hygiene")
	build := exec.Command("go", "build", "-o", bin, "github.com/scopehygiene/scope-hygiene/tools/scope-hygiene")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("build server: %v", err)
	}
	feeFile := filepath.Join(w.dir, "fee.json")
	os.WriteFile(feeFile, []byte(keygenJSON(w.feePayer)), 0o600)
	rates := filepath.Join(w.dir, "rates.csv")
	os.WriteFile(rates, []byte("date,rate\n"+store.Day(time.Now())+",1.3990\n"), 0o600)
	// The served criteria price differs from the built-in one, so nothing in the money path may
	// fall back to the built-in 50 000 (a refund books the amount the payment was made at).
	crit, err := os.ReadFile(filepath.Join("..", "..", "..", "criteria.yaml"))
	if err != nil || !bytes.Contains(crit, []byte("usdc_units_per_call: 50000")) {
		t.Fatalf("criteria.yaml price line not found: %v", err)
	}
	critFile := filepath.Join(w.dir, "criteria.yaml")
	os.WriteFile(critFile, bytes.Replace(crit, []byte("usdc_units_per_call: 50000"), []byte(fmt.Sprintf("usdc_units_per_call: %d", price)), 1), 0o600)
	// Sign-in-with-x proofs are bound to the public base URL, which the real client checks
	// against the URL it calls: the server listens on a port chosen here.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "-criteria", critFile)
	cmd.Env = append(os.Environ(),
		"SCOPE_HYGIENE_ADDR="+addr,
		"SCOPE_HYGIENE_PUBLIC_BASE_URL=http://"+addr,
		// Third parties are told apart by X-Forwarded-For (each its own address budget).
		"SCOPE_HYGIENE_TRUST_PROXY=true",
		// Every client run first reads the 402 unpaid, and refused payments (wrong amount, mint,
		// payTo) spend the unpaid budget too: the cases' few hundred calls from 127.0.0.1 a
		// minute stay within it (the budget itself: TestDummyHeadersSpendTheUnpaidBudget).
		"SCOPE_HYGIENE_UNPAID_AUDITS_PER_MINUTE=1200",
		"SCOPE_HYGIENE_UNPAID_AUDIT_BURST=600",
		"SCOPE_HYGIENE_STORE=sqlite:"+w.dbPath,
		"SCOPE_HYGIENE_KEY_FILE="+filepath.Join(w.dir, "sign.pem"),
		"SCOPE_HYGIENE_X402_NETWORK=devnet",
		"SCOPE_HYGIENE_X402_RPC_URL="+w.serverRPC,
		"SCOPE_HYGIENE_X402_FEE_PAYER_FILE="+feeFile,
		"SCOPE_HYGIENE_X402_PAY_TO="+w.payTo.String(),
		"SCOPE_HYGIENE_X402_CHALLENGE_KEY="+hex.EncodeToString(bytes.Repeat([]byte{7}, 32)),
		"SCOPE_HYGIENE_X402_RATES_CSV="+rates,
		// Two failed landings of 10 001 lamports fit, a third would not (attackCases).
		"SCOPE_HYGIENE_X402_FEE_BUDGET=25000",
	)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	ready := false
	for sc.Scan() {
		var l map[string]any
		json.Unmarshal(sc.Bytes(), &l)
		msg, _ := l["msg"].(string)
		if strings.HasPrefix(msg, "x402 not ready") {
			t.Errorf("startup check: %s", msg)
		}
		if msg == "serve failed" {
			t.Fatalf("server refused to start: %v", l["error"])
		}
		if msg == "x402 ready" {
			ready = true
		}
		if msg == "serving" {
			w.server = "http://" + l["addr"].(string)
			break
		}
	}
	if w.server == "" || !ready {
		t.Fatalf("server did not come up ready (server=%q ready=%v)", w.server, ready)
	}
	go io.Copy(io.Discard, stdout)
}

func TestX402EndToEnd(t *testing.T) {
	if os.Getenv("X402_E2E") != "1" {
		t.Skip("set X402_E2E=1 (scripts/x402-e2e.sh) to run the node-based end-to-end test")
	}
	if _, err := os.Stat("node_modules/@x402/fetch"); err != nil {
		t.Fatal("node_modules missing: run scripts/x402-e2e.sh (npm ci)")
	}
	dir := t.TempDir()
	w := &world{t: t, dir: dir, dbPath: filepath.Join(dir, "db.sqlite"), exportF: filepath.Join(dir, "export.json"),
		usdc: x402.Devnet.USDCMint, clients: map[string]solana.PrivateKey{}}
	os.WriteFile(w.exportF, []byte(exportBody), 0o600)
	w.feePayer = solana.NewWallet().PrivateKey
	w.payTo = solana.NewWallet().PublicKey()
	for _, n := range []string{"alice", "poor", "single", "slow", "stranded", "racer", "drainer", "victim1", "victim2", "victim3", "sender", "simulator"} {
		w.clients[n] = solana.NewWallet().PrivateKey
	}
	w.chain = facade.Start(t, "facade.mjs")
	w.clientRPC, w.serverRPC = w.chain.ClientRPC, w.chain.ServerRPC

	// Chain state: USDC mint, payTo's USDC account, funded fee payer, clients' USDC.
	w.chain.SetUpPayments(w.usdc, w.payTo, w.feePayer.PublicKey())
	alice, poor := w.clients["alice"].PublicKey(), w.clients["poor"].PublicKey()
	w.chain.SetTokenBalance(alice, w.usdc, 1_000_000)
	w.chain.SetTokenBalance(poor, w.usdc, 10_000)
	w.chain.SetTokenBalance(w.clients["single"].PublicKey(), w.usdc, price)
	otherMint := solana.NewWallet().PublicKey()
	w.chain.CreateMint(otherMint)
	w.chain.SetTokenBalance(alice, otherMint, 1_000_000)

	for _, n := range []string{"slow", "stranded", "racer", "drainer", "victim2", "victim3", "sender", "simulator"} {
		w.chain.SetTokenBalance(w.clients[n].PublicKey(), w.usdc, price)
	}
	w.chain.SetTokenBalance(w.clients["victim1"].PublicKey(), w.usdc, 2*price)

	startServer(t, w)
	// Payments whose confirmation the chain holds (40 s; 10 s for one never collected) run
	// beside the other cases and are collected at the end (lateCases).
	slow := w.startLate(t, "slow", 40*time.Second)
	stranded := w.startLate(t, "stranded", 10*time.Second)
	w.waitDelayedSends(t, 2)
	feeBalance := func() int64 {
		var n int64
		json.Unmarshal(w.control("balance", map[string]any{"address": w.feePayer.PublicKey().String()}), &n)
		return n
	}
	paidRows := func() map[string]int {
		m := map[string]int{}
		for _, e := range w.ledger() {
			m[e.PaymentTx]++
		}
		return m
	}

	t.Run("malformed_export_refused_free", func(t *testing.T) {
		res, err := http.Post(w.server+"/audit", "application/json", strings.NewReader(`{"family":"mem0","form":"full_text","records":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 400 || res.Header.Get(x402.HeaderPaymentRequired) != "" {
			t.Fatalf("malformed export: %d, PAYMENT-REQUIRED %q", res.StatusCode, res.Header.Get(x402.HeaderPaymentRequired))
		}
	})

	t.Run("unpaid_402", func(t *testing.T) {
		r := w.run("unpaid", "alice", "")
		pr := r.First.PaymentRequired
		if r.First.Status != 402 || pr == nil || pr.X402Version != 2 || len(pr.Accepts) != 1 {
			t.Fatalf("unpaid: %+v", r.First)
		}
		a := pr.Accepts[0]
		if a.Scheme != "exact" || a.Network != x402.Devnet.CAIP2 || a.Amount != fmt.Sprint(price) || a.Asset != w.usdc.String() ||
			a.PayTo != w.payTo.String() || a.Extra.FeePayer != w.feePayer.PublicKey().String() || !strings.HasPrefix(a.Extra.Memo, "sh1.") || a.MaxTimeoutSeconds != 60 {
			t.Fatalf("requirements: %+v", a)
		}
		if !strings.Contains(r.First.Expose, "PAYMENT-REQUIRED") {
			t.Fatalf("CORS expose: %q", r.First.Expose)
		}
	})

	var happyTx string
	t.Run("happy_path_fee_recorded", func(t *testing.T) {
		before, feeBefore := w.tokenAmount(w.payTo), feeBalance()
		r := w.run("happy", "alice", "")
		p := r.Paid
		if p.Status != 200 || p.PaymentResponse == nil || !p.PaymentResponse.Success || p.PaymentResponse.Payer != alice.String() ||
			p.PaymentResponse.Network != x402.Devnet.CAIP2 || p.PaymentResponse.Transaction == "" {
			t.Fatalf("happy: %+v %+v", p, p.PaymentResponse)
		}
		happyTx = p.PaymentResponse.Transaction
		// The held payments (lateCases) have already moved their USDC: compare the change.
		var b, a int
		fmt.Sscan(before, &b)
		fmt.Sscan(w.tokenAmount(w.payTo), &a)
		if a-b != price {
			t.Fatalf("payTo balance %d → %d, want +%d", b, a, price)
		}
		spent := feeBefore - feeBalance()
		var row *store.LedgerEntry
		for _, e := range w.ledger() {
			if e.PaymentTx == happyTx {
				e := e
				row = &e
			}
		}
		if row == nil || row.SolanaFeeLamports == nil || *row.SolanaFeeLamports != spent || spent != 10001 ||
			row.PayerWallet != alice.String() || row.PriceUSDCUnits != price || row.CAD.Pending || row.CAD.Rate != "1.3990" || !row.House {
			// A devnet payment is test money: booked house, never revenue.
			t.Fatalf("ledger row %+v (fee payer spent %d)", row, spent)
		}
		t.Logf("happy path: tx %s, fee %d lamports", happyTx, spent)
	})

	t.Run("replay_same_header_one_row", func(t *testing.T) {
		r := w.run("replay", "alice", "")
		// The same payment again is a known transaction: only its payer, proven, gets an answer
		// about it (401 with a resume challenge; proven, 402 duplicate_settlement).
		if r.First.Status != 200 || r.Second.Status != 401 || r.Second.Error != "caller_unproven" {
			t.Fatalf("replay: first %+v second %+v", r.First, r.Second)
		}
		if n := paidRows()[r.First.PaymentResponse.Transaction]; n != 1 {
			t.Fatalf("ledger rows for the replayed payment: %d, want 1", n)
		}
	})

	t.Run("concurrent_double_submission_one_settles", func(t *testing.T) {
		before := w.tokenAmount(w.payTo)
		r := w.run("concurrent", "alice", "")
		ok, tx := 0, ""
		for _, o := range r.All {
			if o.Status == 200 {
				ok++
				tx = o.PaymentResponse.Transaction
			} else if (o.Status != 402 || o.PaymentRequired.Error != x402.ReasonDuplicateSettlement) &&
				(o.Status != 401 || o.Error != "caller_unproven") {
				// A duplicate that finds the payment already broadcast is asked for the payer's
				// proof (401), one that finds it reserved is duplicate_settlement (402).
				t.Fatalf("loser: %+v", o)
			}
		}
		if ok != 1 || paidRows()[tx] != 1 {
			t.Fatalf("%d settled, rows %d", ok, paidRows()[tx])
		}
		var b, a int
		fmt.Sscan(before, &b)
		fmt.Sscan(w.tokenAmount(w.payTo), &a)
		if a-b != price {
			t.Fatalf("payTo received %d, want %d", a-b, price)
		}
	})

	// 50 distinct payments sent at once from one wallet holding one price: one settles, every
	// other is refused before simulation (one unsettled payment per payer, the payer's attempt
	// budget) or by simulation, and
	// the fee payer pays for at most one failed transaction beside the one that settled.
	t.Run("fifty_concurrent_payments_one_wallet_one_price", func(t *testing.T) {
		fee := feeBalance()
		r := w.run("many", "single", "50")
		counts, reasons := map[int]int{}, map[string]int{}
		for _, o := range r.All {
			counts[o.Status]++
			if o.PaymentRequired != nil {
				reasons[o.PaymentRequired.Error]++
			}
		}
		spent := fee - feeBalance()
		t.Logf("50 concurrent payments from one wallet: statuses %v, refusals %v, fee payer spent %d lamports", counts, reasons, spent)
		if counts[200] != 1 || counts[402]+counts[429] != 49 || counts[402] < 29 {
			t.Fatalf("statuses %v, want one 200 and 49 refused (402 in flight / funds, 429 past the payer's 30 attempts a minute)", counts)
		}
		if spent > 2*10001 {
			t.Fatalf("fee payer spent %d lamports, more than the settled payment and one failed fee", spent)
		}
	})

	refused := func(t *testing.T, o *outcome, reason string) {
		t.Helper()
		if o.Status != 402 || o.PaymentRequired == nil || o.PaymentRequired.Error != reason || len(o.PaymentRequired.Accepts) != 1 {
			t.Fatalf("want 402 %s, got %+v", reason, o)
		}
	}
	for _, c := range []struct{ name, scenario, arg, reason string }{
		{"wrong_amount", "amount", "", x402.ReasonAmountMismatch},
		{"wrong_mint", "mint", otherMint.String(), x402.ReasonMintMismatch},
		{"wrong_destination", "destination", solana.NewWallet().PublicKey().String(), x402.ReasonRecipientMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, bal := len(w.ledger()), w.tokenAmount(w.payTo)
			r := w.run(c.scenario, "alice", c.arg)
			refused(t, r.First, c.reason)
			if len(w.ledger()) != rows || w.tokenAmount(w.payTo) != bal {
				t.Fatal("refused payment changed the ledger or the balance")
			}
		})
	}

	t.Run("insufficient_balance", func(t *testing.T) {
		rows := len(w.ledger())
		r := w.run("pay", "poor", "")
		refused(t, r.First, x402.ReasonInsufficientFunds)
		if len(w.ledger()) != rows || w.tokenAmount(poor) != "10000" {
			t.Fatal("insufficient payment changed state")
		}
	})

	t.Run("rpc_down_503_no_audit_no_charge", func(t *testing.T) {
		w.control("serverRPC", map[string]any{"up": false})
		rows, bal, fee := len(w.ledger()), w.tokenAmount(alice), feeBalance()
		// Readiness for paid audits follows the RPC.
		rz, err := http.Get(w.server + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		rzb, _ := io.ReadAll(rz.Body)
		rz.Body.Close()
		if rz.StatusCode != 503 || !strings.Contains(string(rzb), `"payments_rpc":"unavailable"`) {
			w.control("serverRPC", map[string]any{"up": true})
			t.Fatalf("/readyz with the RPC down: %d %s", rz.StatusCode, rzb)
		}
		t.Logf("/readyz with the Solana RPC down: %d %s", rz.StatusCode, rzb)
		r := w.run("pay", "alice", "")
		w.control("serverRPC", map[string]any{"up": true})
		if r.First.Status != 503 || r.First.Error != x402.ReasonRPCUnavailable {
			t.Fatalf("rpc down: %+v", r.First)
		}
		if len(w.ledger()) != rows || w.tokenAmount(alice) != bal || feeBalance() != fee {
			t.Fatal("RPC-down attempt changed the ledger or a balance")
		}
		// The same payment goes through once the RPC is back (the reservation was released).
		r2 := w.run("resend", "alice", r.Header)
		if r2.First.Status != 200 {
			t.Fatalf("after recovery: %+v", r2.First)
		}
	})

	t.Run("expired_blockhash", func(t *testing.T) {
		rows := len(w.ledger())
		r := w.run("expired", "alice", "")
		refused(t, r.First, x402.ReasonBlockhashExpired)
		if len(w.ledger()) != rows {
			t.Fatal("expired payment wrote a ledger row")
		}
	})

	attackCases(t, w)
	lateCases(t, w, slow, stranded)
	mcpCases(t, w)
	resumeCases(t, w) // before siwxCases, whose storm spends this address's challenge budget
	identityCases(t, w)
	deadlineCases(t, w)
	siwxCases(t, w)
	globalBudgetCase(t, w) // last: payments stay paused for the rest of the hour

	// Every paid row is unique per transaction.
	for tx, n := range paidRows() {
		if n != 1 {
			t.Errorf("transaction %s has %d ledger rows", tx, n)
		}
	}
}
