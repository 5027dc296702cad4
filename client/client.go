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
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/sign"
)

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
