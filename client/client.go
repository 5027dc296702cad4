// Package client is the caller's side of scope-hygiene: it fetches the published criteria and
// key, runs the free pre-check (proving the caller wallet with sign-in-with-x when the server
// asks), pays for an audit with x402 v2 exact on Solana, follows a pending settlement to its
// report with the payer's resume proof, and verifies the signed result against the published key.
//
// Progress is reported as static phrases with numbers, ids and status codes only: no part of an
// export, and no server text, ever reaches a progress line or an error.
package client

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/sign"
)

// Kind classifies why a call did not produce a verified result; commands map it to exit codes.
type Kind int

// The kinds of failure.
const (
	// KindRefused: the service refused the export or the call (a rule id says which).
	KindRefused Kind = iota + 1
	// KindSpendCap: the 402 asks more than the caller's cap; nothing was signed.
	KindSpendCap
	// KindPayment: the payment was not accepted or not settled (see Transaction when broadcast).
	KindPayment
	// KindVerify: the signed result does not verify against the published key.
	KindVerify
	// KindTransport: the service or the chain could not be reached, or answered unexpectedly.
	KindTransport
	// KindProof: sign-in-with-x was asked and this client cannot give it (no wallet, other wallet).
	KindProof
)

// Error is a failed call. Its text is static plus numbers, rule ids and transaction ids.
type Error struct {
	Kind Kind
	// Status is the HTTP status of the answer, when there was one.
	Status int
	// Rule is the refusal rule or payment reason the service named.
	Rule string
	// Transaction is the payment transaction id when a payment was broadcast.
	Transaction string
	// Msg is a static description.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Rule != "" {
		b.WriteString(" rule=" + e.Rule)
	}
	if e.Transaction != "" {
		b.WriteString(" transaction=" + e.Transaction)
	}
	return b.String()
}

// Client talks to one scope-hygiene service.
type Client struct {
	// BaseURL is the service's base URL, e.g. http://127.0.0.1:8080.
	BaseURL string
	// HTTP is the HTTP client (http.DefaultClient when nil).
	HTTP *http.Client
	// Wallet proves the caller and pays. Nil means: no proof, no payment.
	Wallet solana.PrivateKey
	// Chain reads the mint and a recent blockhash for a payment. When nil, ChainFor picks one
	// for the network the 402 names.
	Chain ChainRPC
	// ChainFor returns the chain reader for a CAIP-2 network (nil: that network is not payable).
	ChainFor func(network string) ChainRPC
	// SpendDecimals are the decimals MaxSpendUnits counts in: a 402 in an asset with other
	// decimals is refused before signing (0: not checked).
	SpendDecimals uint8
	// MaxSpendUnits is the most this client pays for one call, in the asset's smallest units.
	// A 402 asking more is refused before anything is signed.
	MaxSpendUnits uint64
	// Progress receives one line per step (nil: silent).
	Progress func(line string)
	// PendingFor bounds how long a pending settlement is followed (default 2 minutes).
	PendingFor time.Duration
	// Sleep waits between resume attempts (default: a context-aware timer).
	Sleep func(ctx context.Context, d time.Duration) error
	// Payment, when set, is a PAYMENT-SIGNATURE header sent before (from OnPayment): Audit re-sends
	// it with the same export to collect a report already paid for, and builds no new payment.
	Payment string
	// OnPayment receives the PAYMENT-SIGNATURE header before it is first sent, so a caller can keep
	// it and resume if the answer is lost (it holds the signed transfer, never export content).
	OnPayment func(header string) error
	// Routes are the rule set's routes (the zero value: the primary criteria's /criteria,
	// /precheck and /audit), e.g. an entry of Index.
	Routes Routes
}

// Routes are one rule set's routes, as GET /criteria/index lists them.
type Routes struct {
	Criteria string `json:"document"`
	Precheck string `json:"precheck"`
	Audit    string `json:"audit"`
}

func route(r, def string) string {
	if r == "" {
		return def
	}
	return r
}

func (c *Client) criteriaRoute() string { return route(c.Routes.Criteria, "/criteria") }
func (c *Client) precheckRoute() string { return route(c.Routes.Precheck, "/precheck") }
func (c *Client) auditRoute() string    { return route(c.Routes.Audit, "/audit") }

// IndexEntry is one rule set of GET /criteria/index.
type IndexEntry struct {
	CriteriaID       string `json:"criteria_id"`
	CriteriaRevision string `json:"criteria_revision"`
	CriteriaDigest   string `json:"criteria_digest"`
	Routes
	Price struct {
		USDCUnits uint64 `json:"usdc_units"`
		Label     string `json:"label"`
		Status    string `json:"status"`
	} `json:"price"`
}

// Index fetches GET /criteria/index: every rule set the service serves, with its routes.
func (c *Client) Index(ctx context.Context) ([]IndexEntry, error) {
	a, err := c.do(ctx, http.MethodGet, "/criteria/index", nil, nil)
	if err != nil {
		return nil, err
	}
	var idx struct {
		Criteria []IndexEntry `json:"criteria"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &idx) != nil {
		return nil, &Error{Kind: KindTransport, Status: a.status, Msg: "client: GET /criteria/index did not answer a criteria index"}
	}
	return idx.Criteria, nil
}

// maxAnswerBytes bounds any answer the client reads.
const maxAnswerBytes = 8 << 20

// Result is a signed answer of the service, kept byte for byte as sent.
type Result struct {
	// Body is the signed document exactly as received.
	Body []byte
	// Settlement is the decoded PAYMENT-RESPONSE of a paid audit.
	Settlement *SettlementResponse
	// Units is what the client paid, in the asset's smallest units (0 when free).
	Units uint64
	// Network and Asset name what was paid.
	Network, Asset string
	// Resumed counts the resume attempts a pending settlement took.
	Resumed int
}

func (c *Client) progress(format string, args ...any) {
	if c.Progress != nil {
		c.Progress(fmt.Sprintf(format, args...))
	}
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (c *Client) do(ctx context.Context, method, route string, body []byte, headers map[string]string) (*answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+route, rd)
	if err != nil {
		return nil, &Error{Kind: KindTransport, Msg: "client: the base URL is not usable"}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.http().Do(req)
	if err != nil {
		return nil, &Error{Kind: KindTransport, Msg: "client: the service could not be reached: " + route}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		return nil, &Error{Kind: KindTransport, Status: res.StatusCode, Msg: "client: the answer could not be read"}
	}
	return &answer{status: res.StatusCode, header: res.Header, body: b}, nil
}

// Criteria fetches the rule set's criteria document (GET /criteria unless Routes name another)
// and returns the document and the report signing key it publishes.
func (c *Client) Criteria(ctx context.Context) ([]byte, ed25519.PublicKey, error) {
	route := c.criteriaRoute()
	a, err := c.do(ctx, http.MethodGet, route, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	if a.status != http.StatusOK {
		return nil, nil, &Error{Kind: KindTransport, Status: a.status, Msg: "client: GET " + route + " did not answer 200"}
	}
	pub, err := sign.ParsePublicKey(a.body)
	if err != nil {
		return nil, nil, &Error{Kind: KindTransport, Msg: "client: " + route + " publishes no usable report signing key"}
	}
	c.progress("criteria: fetched, report signing key %s", sign.KeyID(pub))
	return a.body, pub, nil
}

// refusal turns a non-success answer into an Error naming the service's rule.
func refusal(a *answer, route string) *Error {
	var b struct {
		Kind  string `json:"kind"`
		Rule  string `json:"rule"`
		Error string `json:"error"`
	}
	_ = json.Unmarshal(a.body, &b)
	rule := b.Rule
	if rule == "" && b.Kind != "error" {
		rule = b.Error
	}
	if !staticToken(rule) {
		rule = ""
	}
	kind := KindRefused
	if a.status >= 500 {
		kind = KindTransport
	}
	return &Error{Kind: kind, Status: a.status, Rule: rule, Msg: "client: " + route + " refused"}
}

// staticToken accepts only identifier-like strings (rule ids, reasons), so nothing else a server
// sends is ever printed.
func staticToken(s string) bool {
	if s == "" || len(s) > 120 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// callerOf returns the export's top-level caller member ("" when absent).
func callerOf(body []byte) string {
	var top struct {
		Caller string `json:"caller"`
	}
	if json.Unmarshal(body, &top) != nil {
		return ""
	}
	return top.Caller
}

// proveFor answers a 401 challenge with the wallet, after checking the wallet is the one to prove.
func (c *Client) proveFor(a *answer, want string) (string, error) {
	ch, err := challengeFrom(a.header.Get(HeaderSIWXChallenge), a.body)
	if err != nil {
		return "", &Error{Kind: KindProof, Status: a.status, Msg: "client: the service asked for a proof but sent no usable challenge"}
	}
	if c.Wallet == nil {
		return "", &Error{Kind: KindProof, Status: a.status, Msg: "client: the service asks the caller to prove its wallet: give -wallet"}
	}
	if want != "" && want != c.Wallet.PublicKey().String() {
		return "", &Error{Kind: KindProof, Status: a.status, Msg: "client: the wallet to prove is not -wallet"}
	}
	h, err := Prove(ch, c.Wallet)
	if err != nil {
		return "", &Error{Kind: KindProof, Msg: "client: " + err.Error()}
	}
	c.progress("sign-in-with-x: signed the challenge with wallet %s", c.Wallet.PublicKey())
	return h, nil
}

// Precheck runs the free pre-check. When the service asks for proof of the caller wallet the
// export names, it signs the challenge with Wallet and sends the request again once.
func (c *Client) Precheck(ctx context.Context, body []byte) (*Result, error) {
	c.progress("precheck: sending %d bytes", len(body))
	a, err := c.do(ctx, http.MethodPost, c.precheckRoute(), body, nil)
	if err != nil {
		return nil, err
	}
	if a.status == http.StatusUnauthorized {
		c.progress("precheck: 401, the service asks for proof of the caller wallet")
		proof, err := c.proveFor(a, callerOf(body))
		if err != nil {
			return nil, err
		}
		if a, err = c.do(ctx, http.MethodPost, c.precheckRoute(), body, map[string]string{HeaderSIWX: proof}); err != nil {
			return nil, err
		}
	}
	if a.status != http.StatusOK {
		return nil, refusal(a, c.precheckRoute())
	}
	c.progress("precheck: 200, signed result of %d bytes", len(a.body))
	return &Result{Body: a.body}, nil
}

// Audit runs a paid audit: it reads the 402, refuses before signing when the price is over
// MaxSpendUnits, builds and signs the exact-SVM payment, sends it with PAYMENT-SIGNATURE and
// follows a pending settlement (202, or a 503 naming a broadcast transaction) with the payer's
// resume proof until the report arrives or PendingFor ends.
func (c *Client) Audit(ctx context.Context, body []byte) (*Result, error) {
	if c.Payment != "" {
		var p PaymentPayload
		if decodeHeader(c.Payment, &p) != nil || p.X402Version != 2 {
			return nil, &Error{Kind: KindPayment, Msg: "client: the saved payment is not a PAYMENT-SIGNATURE header"}
		}
		c.progress("audit: re-sending the saved payment (%d bytes of export) to collect the report it paid for", len(body))
		out, err := c.settle(ctx, body, c.Payment)
		if out != nil {
			out.Network, out.Asset = p.Accepted.Network, p.Accepted.Asset
			if n, err := strconv.ParseUint(p.Accepted.Amount, 10, 64); err == nil {
				out.Units = n
			}
		}
		return out, err
	}
	c.progress("audit: sending %d bytes unpaid to read the price", len(body))
	a, err := c.do(ctx, http.MethodPost, c.auditRoute(), body, nil)
	if err != nil {
		return nil, err
	}
	if a.status == http.StatusUnauthorized {
		proof, err := c.proveFor(a, callerOf(body))
		if err != nil {
			return nil, err
		}
		if a, err = c.do(ctx, http.MethodPost, c.auditRoute(), body, map[string]string{HeaderSIWX: proof}); err != nil {
			return nil, err
		}
	}
	if a.status == http.StatusOK {
		c.progress("audit: 200 without payment, signed report of %d bytes", len(a.body))
		return &Result{Body: a.body}, nil
	}
	if a.status != http.StatusPaymentRequired {
		return nil, refusal(a, c.auditRoute())
	}
	h := a.header.Get(HeaderPaymentRequired)
	if h == "" {
		return nil, &Error{Kind: KindPayment, Status: a.status, Msg: "client: the service states a price but takes no x402 payment (payments are off)"}
	}
	var pr PaymentRequired
	if decodeHeader(h, &pr) != nil {
		return nil, &Error{Kind: KindPayment, Status: a.status, Msg: "client: PAYMENT-REQUIRED is not base64 JSON"}
	}
	offer, err := PickOffer(&pr)
	if err != nil {
		return nil, &Error{Kind: KindPayment, Status: a.status, Msg: err.Error()}
	}
	c.progress("audit: 402, price %d units of %s on %s to %s", offer.Units, offer.Asset, offer.Network, offer.PayTo)
	if offer.Units > c.MaxSpendUnits {
		return nil, &Error{Kind: KindSpendCap, Status: a.status,
			Msg: fmt.Sprintf("client: the price %d units is over the spend cap %d units; nothing was signed", offer.Units, c.MaxSpendUnits)}
	}
	chain := c.Chain
	if chain == nil && c.ChainFor != nil {
		chain = c.ChainFor(offer.Network)
	}
	if c.Wallet == nil || chain == nil {
		return nil, &Error{Kind: KindPayment, Msg: "client: paying needs -wallet and a Solana RPC for the network (-rpc)"}
	}
	offer.Decimals = c.SpendDecimals
	res := pr.Resource
	payload, err := BuildPayment(ctx, chain, offer, c.Wallet, &res)
	if err != nil {
		return nil, &Error{Kind: KindTransport, Msg: err.Error()}
	}
	header, err := encodeHeader(payload)
	if err != nil {
		return nil, &Error{Kind: KindPayment, Msg: "client: encode PAYMENT-SIGNATURE"}
	}
	c.progress("pay: signed a transfer of %d units from %s (fee payer %s)", offer.Units, c.Wallet.PublicKey(), offer.extraString("feePayer"))
	if c.OnPayment != nil {
		if err := c.OnPayment(header); err != nil {
			return nil, &Error{Kind: KindPayment, Msg: "client: the payment could not be kept for a resume; nothing was sent"}
		}
	}
	out, err := c.settle(ctx, body, header)
	if out != nil {
		out.Units, out.Network, out.Asset = offer.Units, offer.Network, offer.Asset
	}
	return out, err
}

// settle sends the paid request and follows it to a report.
func (c *Client) settle(ctx context.Context, body []byte, payment string) (*Result, error) {
	limit := c.PendingFor
	if limit <= 0 {
		limit = 2 * time.Minute
	}
	deadline := time.Now().Add(limit)
	headers := map[string]string{HeaderPaymentSignature: payment}
	tx, resumed := "", 0
	for attempt := 0; attempt < 60; attempt++ {
		a, err := c.do(ctx, http.MethodPost, c.auditRoute(), body, headers)
		if err != nil {
			if e, ok := err.(*Error); ok && tx != "" {
				e.Transaction = tx
			}
			return nil, err
		}
		var sr SettlementResponse
		hasSR := decodeHeader(a.header.Get(HeaderPaymentResponse), &sr) == nil
		if hasSR && sr.Transaction != "" {
			tx = sr.Transaction
		}
		switch a.status {
		case http.StatusOK:
			if !hasSR || !sr.Success {
				return nil, &Error{Kind: KindPayment, Status: a.status, Transaction: tx, Msg: "client: the paid report came without a successful PAYMENT-RESPONSE"}
			}
			c.progress("audit: 200 paid, transaction %s, signed report of %d bytes", sr.Transaction, len(a.body))
			return &Result{Body: a.body, Settlement: &sr, Resumed: resumed}, nil
		case http.StatusAccepted:
			var p Pending
			if json.Unmarshal(a.body, &p) != nil || p.Transaction == "" {
				return nil, &Error{Kind: KindPayment, Status: a.status, Transaction: tx, Msg: "client: the 202 carries no pending settlement"}
			}
			tx = p.Transaction
			c.progress("audit: 202 pending, transaction %s, %d runs left; resuming as the payer", tx, p.Resume.RunsLeft)
			var ch SIWXChallenge
			if json.Unmarshal(p.Resume.SIWX, &ch) != nil || ch.Info.Nonce == "" {
				return nil, &Error{Kind: KindPayment, Status: a.status, Transaction: tx, Msg: "client: the 202 carries no resume challenge"}
			}
			proof, err := Prove(&ch, c.Wallet)
			if err != nil {
				return nil, &Error{Kind: KindProof, Transaction: tx, Msg: "client: " + err.Error()}
			}
			headers = map[string]string{HeaderPaymentSignature: payment, HeaderSIWX: proof}
		case http.StatusUnauthorized:
			// A resume whose proof was refused or expired: a fresh challenge bound to the payment.
			proof, err := c.proveFor(a, "")
			if err != nil {
				err.(*Error).Transaction = tx
				return nil, err
			}
			headers = map[string]string{HeaderPaymentSignature: payment, HeaderSIWX: proof}
			resumed++
			continue
		case http.StatusServiceUnavailable:
			if tx == "" {
				e := refusal(a, c.auditRoute())
				e.Kind, e.Msg = KindPayment, "client: the payment could not be settled now; nothing was charged"
				return nil, e
			}
			c.progress("audit: 503, settlement of transaction %s pending; retrying with the same payment", tx)
			headers = map[string]string{HeaderPaymentSignature: payment}
		case http.StatusPaymentRequired:
			reason := ""
			var pr PaymentRequired
			if decodeHeader(a.header.Get(HeaderPaymentRequired), &pr) == nil && staticToken(pr.Error) {
				reason = pr.Error
			}
			return nil, &Error{Kind: KindPayment, Status: a.status, Rule: reason, Transaction: tx, Msg: "client: the payment was refused"}
		default:
			e := refusal(a, c.auditRoute())
			e.Transaction = tx
			return nil, e
		}
		if time.Now().After(deadline) {
			return nil, &Error{Kind: KindPayment, Transaction: tx, Msg: "client: the settlement was still pending when the wait ended; resume later with the same payment"}
		}
		resumed++
		if err := c.sleep(ctx, retryAfter(a.header)); err != nil {
			return nil, &Error{Kind: KindTransport, Transaction: tx, Msg: "client: interrupted while the settlement was pending"}
		}
	}
	return nil, &Error{Kind: KindPayment, Transaction: tx, Msg: "client: the settlement did not end within the attempt bound"}
}

func retryAfter(h http.Header) time.Duration {
	if n, err := strconv.Atoi(h.Get("Retry-After")); err == nil && n > 0 && n <= 60 {
		return time.Duration(n) * time.Second
	}
	return 2 * time.Second
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Verified is what a successful verification establishes.
type Verified struct {
	// KeyID names the key that signed.
	KeyID string
	// Kind is the document's kind (audit_report, precheck_result, ...).
	Kind string
	// CriteriaRevision is the revision the document was produced under.
	CriteriaRevision string
}

// Verify checks a saved signed document byte for byte against pub.
func Verify(doc []byte, pub ed25519.PublicKey) (*Verified, error) {
	blk, err := sign.Verify(doc, pub)
	if err != nil {
		return nil, &Error{Kind: KindVerify, Msg: "client: the signed result does not verify against the published key"}
	}
	var head struct {
		Kind     string `json:"kind"`
		Revision string `json:"criteria_revision"`
	}
	_ = json.Unmarshal(doc, &head)
	return &Verified{KeyID: blk.KeyID, Kind: head.Kind, CriteriaRevision: head.Revision}, nil
}

// ErrNoWallet is returned by LoadWallet for an unreadable keypair file.
var ErrNoWallet = errors.New("client: the wallet file is not a solana-keygen JSON keypair")

// LoadWallet reads a solana-keygen JSON keypair file (a JSON array of 64 byte values).
func LoadWallet(path string) (solana.PrivateKey, error) {
	k, err := solana.PrivateKeyFromSolanaKeygenFile(path)
	if err != nil || len(k) != ed25519.PrivateKeySize {
		return nil, ErrNoWallet
	}
	return k, nil
}
