// Package gate implements the API's payment seam (api.Payments) with self-facilitated x402 v2
// payments on Solana: 402 with PAYMENT-REQUIRED, verification and settlement of
// PAYMENT-SIGNATURE, PAYMENT-RESPONSE on success, one ledger row per payment.
package gate

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	solana "github.com/gagliardetto/solana-go"
	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// ExposeHeaders are the response headers a browser client must be able to read.
const ExposeHeaders = x402.HeaderPaymentRequired + ", " + x402.HeaderPaymentResponse

// Gate is the x402 implementation of api.Payments.
type Gate struct {
	cfg     *x402.Config
	ch      *x402.Challenger
	ver     *x402.Verifier
	settler *x402.Settler
	rates   *x402.Rates
	rpc     x402.RPC
	log     *slog.Logger
	now     func() time.Time

	accMu    sync.Mutex
	accounts map[string]accountEntry
	attempts *siwx.Budget
}

var _ api.Payments = (*Gate)(nil)

// New returns a Gate. rates may be nil (every day pending).
func New(cfg *x402.Config, r x402.RPC, st x402.SettlementStore, rates *x402.Rates, log *slog.Logger, now func() time.Time) (*Gate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if rates == nil {
		rates, _ = x402.LoadRates("", "")
	}
	ch := x402.NewChallenger(cfg, now)
	v, err := x402.NewVerifier(cfg, ch)
	if err != nil {
		return nil, err
	}
	s, err := x402.NewSettler(cfg, r, st, now)
	if err != nil {
		return nil, err
	}
	return &Gate{cfg: cfg, ch: ch, ver: v, settler: s, rates: rates, rpc: r, log: log, now: now, accounts: map[string]accountEntry{},
		attempts: siwx.NewBudget(DefaultPayerAttemptsPerMinute, time.Minute, now)}, nil
}

// Network names the network payments are taken on (GET /criteria states it).
func (g *Gate) Network() (caip2, name string, revenue bool) {
	return g.cfg.Network.CAIP2, g.cfg.Network.Name, g.cfg.Network.IsMainnet()
}

// Settler exposes the settlement state machine (reconciler, tests).
func (g *Gate) Settler() *x402.Settler { return g.settler }

// paymentRequiredBody is the JSON body of our 402: the PaymentRequired object of the header
// (x402Version, error, resource, accepts, extensions) plus the price as the criteria state it
// and the network, for readers that do not decode the header (schema/payment-required.schema.json).
type paymentRequiredBody struct {
	x402.PaymentRequired
	Kind    string    `json:"kind"`
	Op      string    `json:"op"`
	Price   api.Price `json:"price"`
	Network string    `json:"network"`
}

// ReasonPayerAttemptBudget is the 429 reason of a payer over its payment-attempt budget.
const ReasonPayerAttemptBudget = "payer_attempt_budget"

// DefaultPayerAttemptsPerMinute is each payer wallet's payment-attempt budget per replica.
const DefaultPayerAttemptsPerMinute = 30

// ReasonHeaderMalformed is the 400 reason of a PAYMENT-SIGNATURE that does not decode.
const ReasonHeaderMalformed = "payment_header_malformed"

// PaymentError is the body of a payment answer that is not a 402 (400 malformed header, 429
// payer over a budget, 503 settlement unavailable): schema/payment-error.schema.json. Every field is a static string.
type PaymentError struct {
	Kind   string `json:"kind"`
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

// resourceURL is mcp://tool/<name> for a call over MCP, else the configured resource URL, else
// the API's absolute URL of the route.
func resourceURL(cfg *x402.Config, q api.Quote) string {
	if q.MCPTool != "" {
		return "mcp://tool/" + q.MCPTool
	}
	if cfg.ResourceURL != "" {
		return cfg.ResourceURL
	}
	return q.ResourceURL
}

func cors(c echo.Context) {
	h := c.Response().Header()
	h.Set("Access-Control-Expose-Headers", ExposeHeaders)
}

// require402 answers 402 with a fresh PAYMENT-REQUIRED naming reason.
func (g *Gate) require402(c echo.Context, q api.Quote, reason string, settle *x402.SettlementResponse) error {
	memo, _, err := g.ch.Issue()
	if err != nil {
		return err
	}
	pr := x402.PaymentRequired{X402Version: x402.Version, Error: reason,
		Resource: x402.Resource{URL: resourceURL(g.cfg, q), Description: "one scope-hygiene audit (memory-scope-hygiene/v1)", MimeType: "application/json"},
		Accepts:  []x402.PaymentRequirements{g.cfg.Requirements(memo)}}
	if q.Discovery != nil {
		pr.Extensions = map[string]any{api.BazaarExtension: q.Discovery}
	}
	hv, err := x402.EncodeHeader(pr)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(x402.HeaderPaymentRequired, hv)
	h.Set("Cache-Control", "no-store")
	if settle != nil {
		if sv, err := x402.EncodeHeader(settle); err == nil {
			h.Set(x402.HeaderPaymentResponse, sv)
		}
	}
	cors(c)
	return c.JSON(http.StatusPaymentRequired, paymentRequiredBody{PaymentRequired: pr, Kind: "payment_required", Op: q.Op,
		Price: api.Price{USDCUnits: q.USDCUnits, Label: q.Label, Status: q.Status}, Network: g.cfg.Network.CAIP2})
}

// Require implements api.Payments.
func (g *Gate) Require(c echo.Context, q api.Quote) (*api.Payment, error) {
	if q.USDCUnits != int64(g.cfg.Price.Units) {
		return nil, errors.New("gate: quoted price differs from the x402 price")
	}
	hdr := c.Request().Header.Get(x402.HeaderPaymentSignature)
	if hdr == "" {
		reason := "PAYMENT-SIGNATURE header is required"
		if q.MCPTool != "" {
			reason = "x402 payment is required in the call meta" // _meta["x402/payment"] over MCP
		}
		return nil, g.require402(c, q, reason, nil)
	}
	ctx := c.Request().Context()
	// A header that is not base64 JSON (or is over the size cap) is the client's malformed
	// request, not a payment to refuse: 400 with a static reason, no fresh challenge.
	if _, err := x402.DecodePaymentPayload(hdr); err != nil {
		cors(c)
		c.Response().Header().Set("Cache-Control", "no-store")
		return nil, c.JSON(http.StatusBadRequest, PaymentError{Kind: "error", Error: ReasonHeaderMalformed,
			Detail: "the PAYMENT-SIGNATURE header is not base64 of a JSON x402 PaymentPayload (or is over 8192 bytes)"})
	}
	v, err := g.ver.VerifyHeader(hdr)
	if err != nil {
		var rj *x402.Rejection
		if errors.As(err, &rj) {
			g.log.Info("payment refused", "item", rj.Item, "reason", rj.Reason)
			return nil, g.require402(c, q, rj.Reason, nil)
		}
		return nil, err
	}
	// Payment attempts are budgeted per payer once the payload names it (fee-payer protection:
	// each attempt may cost an RPC simulation, and a broadcast one a fee).
	if ok, retry := g.attempts.Take(v.Payer.String()); !ok {
		cors(c)
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(retry.Seconds())+1))
		return nil, c.JSON(http.StatusTooManyRequests, PaymentError{Kind: "error", Error: ReasonPayerAttemptBudget,
			Detail: "too many payment attempts by this payer wallet in the last minute; retry after the time in Retry-After"})
	}
	// A payment that already has a live settlement row is a resume (or a replay): only its
	// payer, proving the wallet over a challenge bound to this transaction, gets anything.
	if row, err := g.settler.Lookup(ctx, v); err == nil {
		if (row.Status == x402.StatusSettled || row.Status == x402.StatusSubmitted) && q.ProveCaller != nil {
			if err := q.ProveCaller(row.Payer, siwx.PurposeResumePrefix+row.TxSig); err != nil {
				return nil, nil // answered: 401 with a challenge bound to resume:<transaction>
			}
		}
	} else if !errors.Is(err, x402.ErrSettlementNotFound) {
		return nil, g.unavailable(c, &x402.Unavailable{Item: "S18", Reason: "settlement_store_unavailable"}, v)
	}
	rc, err := g.settler.Settle(ctx, v)
	if err != nil {
		var rj *x402.Rejection
		var un *x402.Unavailable
		var th *x402.Throttled
		switch {
		case errors.As(err, &th):
			g.log.Info("payment throttled", "item", th.Item, "reason", th.Reason)
			cors(c)
			h := c.Response().Header()
			h.Set("Retry-After", strconv.Itoa(int(th.RetryAfter.Seconds())+1))
			h.Set("Cache-Control", "no-store")
			return nil, c.JSON(http.StatusTooManyRequests, PaymentError{Kind: "error", Error: th.Reason,
				Detail: "this payer wallet's failed transactions used up the fee budget of the last hour; nothing was broadcast or charged; retry after the time in Retry-After"})
		case errors.As(err, &rj):
			g.log.Info("payment refused", "item", rj.Item, "reason", rj.Reason)
			return nil, g.require402(c, q, rj.Reason, &x402.SettlementResponse{Success: false, ErrorReason: rj.Reason,
				Network: g.cfg.Network.CAIP2, Payer: v.Payer.String()})
		case errors.As(err, &un):
			if un.TxSig != "" {
				return nil, g.pending(c, q, un, v)
			}
			return nil, g.unavailable(c, un, v)
		}
		return nil, err
	}
	day := store.Day(g.now())
	cad := g.rates.For(day)
	fee := rc.FeeLamports
	return &api.Payment{Payer: rc.Payer, TxID: rc.TxSig, FeeLamports: &fee, USDCUnits: int64(g.cfg.Price.Units),
		CAD: store.CADBlock{Rate: cad.Rate, RateDate: cad.RateDate, Basis: cad.Basis, Pending: cad.Pending}, Handle: rc}, nil
}

// Settle implements api.Payments: one ledger row per payment (a resumed audit reuses it),
// PAYMENT-RESPONSE on the report, and the settlement marked delivered once the report is written.
func (g *Gate) Settle(c echo.Context, p *api.Payment, entry store.LedgerEntry, appendLedger func(store.LedgerEntry) (int64, error)) error {
	rc, ok := p.Handle.(*x402.Receipt)
	if !ok {
		return errors.New("gate: payment without a receipt")
	}
	api.FillPayment(&entry, p)
	// Only mainnet is revenue: a payment on any other network is booked as a house row.
	entry.House = entry.House || !g.cfg.Network.IsMainnet()
	if err := g.settler.RecordLedger(c.Request().Context(), rc, func() (int64, error) { return appendLedger(entry) }); err != nil {
		g.Abandon(c, p)
		return err
	}
	sv, err := x402.EncodeHeader(rc.Response())
	if err != nil {
		return err
	}
	c.Response().Header().Set(x402.HeaderPaymentResponse, sv)
	cors(c)
	return nil
}

// unavailable answers 503: nothing was broadcast, nothing charged.
func (g *Gate) unavailable(c echo.Context, un *x402.Unavailable, v *x402.Verified) error {
	g.log.Warn("payment not settled", "item", un.Item, "reason", un.Reason)
	h := c.Response().Header()
	h.Set("Retry-After", strconv.Itoa(10))
	h.Set("Cache-Control", "no-store")
	if sv, err := x402.EncodeHeader(x402.SettlementResponse{Success: false, ErrorReason: un.Reason,
		Network: g.cfg.Network.CAIP2, Payer: v.Payer.String()}); err == nil {
		h.Set(x402.HeaderPaymentResponse, sv)
	}
	cors(c)
	return c.JSON(http.StatusServiceUnavailable, PaymentError{Kind: "error", Error: un.Reason,
		Detail: "payment could not be settled now: no audit was run and nothing was charged; retry later"})
}

// Pending is the 202 body of a broadcast payment whose confirmation outlasted this request
// (schema/payment-pending.schema.json).
type Pending struct {
	Status      string `json:"status"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Resume      Resume `json:"resume"`
}

// Resume says how the payer collects the report of a pending or undelivered payment.
type Resume struct {
	Route    string         `json:"route"`
	Until    string         `json:"until"`
	RunsLeft int            `json:"runs_left"`
	How      string         `json:"how"`
	SIWX     siwx.Challenge `json:"sign-in-with-x"`
}

// resumeHow is the static instruction of a 202.
const resumeHow = "Re-send POST /audit with the same export and the same PAYMENT-SIGNATURE, adding a SIGN-IN-WITH-X proof signed by the payer wallet over a challenge bound to resume:<transaction> (this one, or the fresh one a 401 gives); the report is delivered without a second charge once the transaction is confirmed."

// pending answers 202 with PAYMENT-RESPONSE naming the broadcast transaction: never a bare
// timeout for a payment whose USDC may have moved.
func (g *Gate) pending(c echo.Context, q api.Quote, un *x402.Unavailable, v *x402.Verified) error {
	g.log.Info("payment pending", "item", un.Item, "reason", un.Reason)
	h := c.Response().Header()
	h.Set("Retry-After", strconv.Itoa(5))
	h.Set("Cache-Control", "no-store")
	if sv, err := x402.EncodeHeader(x402.SettlementResponse{Success: true, Transaction: un.TxSig,
		Network: g.cfg.Network.CAIP2, Payer: v.Payer.String(), Status: "pending"}); err == nil {
		h.Set(x402.HeaderPaymentResponse, sv)
	}
	cors(c)
	body := Pending{Status: "pending", Transaction: un.TxSig, Network: g.cfg.Network.CAIP2,
		Resume: Resume{Route: "/audit", Until: g.now().UTC().Add(g.settler.ResumeWindow).Format(time.RFC3339),
			RunsLeft: g.settler.MaxClaims, How: resumeHow}}
	if q.Challenge != nil {
		ch, err := q.Challenge(siwx.PurposeResumePrefix + un.TxSig)
		if err != nil {
			return err
		}
		body.Resume.SIWX = ch
	}
	return c.JSON(http.StatusAccepted, body)
}

// Delivered implements api.Deliverer: the whole 200 body was written, so no resume remains.
func (g *Gate) Delivered(ctx context.Context, p *api.Payment) {
	if rc, ok := p.Handle.(*x402.Receipt); ok {
		if err := g.settler.Delivered(ctx, rc); err != nil {
			g.log.Warn("settlement not marked delivered", "reason", "store_error")
		}
	}
}

// HasTokenAccount implements api.WalletChecker: whether wallet's USDC associated token account
// exists on the payment network (one RPC read, cached ten minutes).
func (g *Gate) HasTokenAccount(ctx context.Context, wallet string) (bool, error) {
	pk, err := solana.PublicKeyFromBase58(wallet)
	if err != nil {
		return false, nil
	}
	g.accMu.Lock()
	if e, ok := g.accounts[wallet]; ok && g.now().Before(e.until) {
		g.accMu.Unlock()
		return e.has, nil
	}
	g.accMu.Unlock()
	ata, _, err := solana.FindAssociatedTokenAddress(pk, g.cfg.Network.USDCMint)
	if err != nil {
		return false, nil
	}
	acc, err := g.rpc.Account(ctx, ata)
	if err != nil {
		return false, err
	}
	has := acc != nil && (acc.Owner.Equals(solana.TokenProgramID) || acc.Owner.Equals(solana.Token2022ProgramID))
	g.accMu.Lock()
	if len(g.accounts) >= 100000 {
		g.accounts = map[string]accountEntry{}
	}
	g.accounts[wallet] = accountEntry{has: has, until: g.now().Add(10 * time.Minute)}
	g.accMu.Unlock()
	return has, nil
}

type accountEntry struct {
	has   bool
	until time.Time
}

// Abandon implements api.Payments: the paid audit was not produced, so the payer may resume.
func (g *Gate) Abandon(c echo.Context, p *api.Payment) {
	if rc, ok := p.Handle.(*x402.Receipt); ok {
		if err := g.settler.Abandon(context.Background(), rc); err != nil {
			g.log.Warn("settlement not marked undelivered", "reason", "store_error")
		}
	}
}
