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
	// presenters budgets, per client address, the re-sending of known payments never broadcast.
	presenters *siwx.Budget

	readyMu    sync.Mutex
	readyErr   error
	readyUntil time.Time
}

var (
	_ api.Payments         = (*Gate)(nil)
	_ api.PaymentVerifier  = (*Gate)(nil)
	_ api.ReadinessChecker = (*Gate)(nil)
)

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
		attempts:   siwx.NewBudget(DefaultPayerAttemptsPerMinute, time.Minute, now),
		presenters: siwx.NewBudget(DefaultPayerAttemptsPerMinute, time.Minute, now)}, nil
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

// AnswerReserve is the part of a request's deadline kept for the answer after settlement (the
// audit, the ledger row and the report, or the 202 of a payment still unconfirmed).
const AnswerReserve = 2 * time.Second

// ReasonAddressAttemptBudget is the 429 reason of a client address re-sending too many known,
// never-broadcast payments (a stranger's replays spend its own address's budget, never a payer's).
const ReasonAddressAttemptBudget = "address_attempt_budget"

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
	// What the header is decides whose budget it may spend: a transaction the store already
	// knows (a replay, a resume, a duplicate) spends nothing of its payer's, because anyone can
	// rebuild a broadcast transaction from the chain; only a new transaction, which only its
	// payer can sign, spends the payer's attempt budget.
	row, err := g.settler.Lookup(ctx, v)
	switch {
	case err == nil:
		if done, err := g.known(c, q, v, row); done || err != nil {
			return nil, err
		}
	case errors.Is(err, x402.ErrSettlementNotFound):
		if v.ChallengeExpired {
			// Nothing new is reserved or broadcast on an expired challenge (and no budget spent).
			g.log.Info("payment refused", "item", "C02", "reason", x402.ReasonChallengeExpired)
			return nil, g.require402(c, q, x402.ReasonChallengeExpired, nil)
		}
		// Payment attempts are budgeted per payer (fee-payer protection: each attempt may cost
		// an RPC simulation, and a broadcast one a fee).
		if ok, retry := g.attempts.Take(v.Payer.String()); !ok {
			return nil, g.throttled(c, ReasonPayerAttemptBudget, retry,
				"too many payment attempts by this payer wallet in the last minute; retry after the time in Retry-After")
		}
	default:
		return nil, g.unavailable(c, &x402.Unavailable{Item: "S18", Reason: "settlement_store_unavailable"}, v)
	}
	// Settlement runs to a deadline counted from the request's start, short of the request's own
	// by AnswerReserve: a broadcast payment is always answered (200 with the report, or 202 with
	// its transaction) before the request runs out of time. It does not end when the client
	// leaves: a payment that moved is recorded whatever happens to the connection.
	base := context.WithoutCancel(ctx)
	sctx, cancel := context.WithCancel(base)
	if dl, ok := ctx.Deadline(); ok {
		cancel()
		sctx, cancel = context.WithDeadline(base, dl.Add(-AnswerReserve))
	}
	defer cancel()
	rc, err := g.settler.Settle(sctx, v)
	if err != nil {
		var rj *x402.Rejection
		var un *x402.Unavailable
		var th *x402.Throttled
		var pz *x402.Paused
		switch {
		case errors.As(err, &pz):
			return nil, g.paused(c, pz, v)
		case errors.As(err, &th):
			g.log.Info("payment throttled", "item", th.Item, "reason", th.Reason)
			return nil, g.throttled(c, th.Reason, th.RetryAfter,
				"this payer wallet's failed transactions used up the fee budget of the last hour; nothing was broadcast or charged; retry after the time in Retry-After")
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

// VerifiesOffline implements api.PaymentVerifier: the header decodes and passes the offline
// checklist (an expired challenge still verifies: a resume carries one).
func (g *Gate) VerifiesOffline(header string) bool {
	_, err := g.ver.VerifyHeader(header)
	return err == nil
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
	// PAYMENT-RESPONSE goes on whatever answers now: the report, or the store's 503 when the
	// ledger row cannot be written (the payment settled; its payer resumes), never a bare 503.
	sv, err := x402.EncodeHeader(rc.Response())
	if err != nil {
		return err
	}
	c.Response().Header().Set(x402.HeaderPaymentResponse, sv)
	cors(c)
	if err := g.settler.RecordLedger(c.Request().Context(), rc, func() (int64, error) { return appendLedger(entry) }); err != nil {
		g.Abandon(c, p)
		return err
	}
	return nil
}

// known handles a payment whose transaction the store already holds, and reports whether it
// has answered. A transaction that was broadcast (submitted, settled, delivered, failed) is
// answered only to its payer, proven over a challenge bound to resume:<transaction>: anyone else
// gets the same 401 whatever the payment's state, and spends only the sign-in-with-x budget of
// its own address. One never broadcast (reserved, released) may be sent again, work budgeted per
// presenting address.
func (g *Gate) known(c echo.Context, q api.Quote, v *x402.Verified, row *x402.Settlement) (bool, error) {
	switch row.Status {
	case x402.StatusReserved, x402.StatusReleased:
		if v.ChallengeExpired {
			g.log.Info("payment refused", "item", "C02", "reason", x402.ReasonChallengeExpired)
			return true, g.require402(c, q, x402.ReasonChallengeExpired, nil)
		}
		if ok, retry := g.presenters.Take(c.RealIP()); !ok {
			return true, g.throttled(c, ReasonAddressAttemptBudget, retry,
				"too many re-sent payments from this client address in the last minute; retry after the time in Retry-After")
		}
		return false, nil
	}
	if q.ProveCaller != nil {
		if err := q.ProveCaller(row.Payer, siwx.PurposeResumePrefix+row.TxSig); err != nil {
			return true, nil // answered: 401 with a challenge bound to resume:<transaction>
		}
	}
	if row.Status == x402.StatusFailed && row.Reason == x402.ReasonRefunded {
		return true, g.refunded(c, row)
	}
	return false, nil
}

// Refunded is the 410 body of a resume of a refunded payment (schema/payment-refunded.schema.json):
// the operator refunded it, so no report is owed and no new payment is asked for.
type Refunded struct {
	Kind        string `json:"kind"`
	Status      string `json:"status"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Detail      string `json:"detail"`
}

// refunded answers 410 with the refunded payment's transaction and no PAYMENT-REQUIRED.
func (g *Gate) refunded(c echo.Context, row *x402.Settlement) error {
	g.log.Info("resume of a refunded payment")
	cors(c)
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusGone, Refunded{Kind: "payment_refunded", Status: "refunded", Transaction: row.TxSig,
		Network: row.Network, Detail: "this payment was refunded by the operator: no report is owed for it and nothing more is charged; do not pay again for it"})
}

// throttled answers 429 with Retry-After: nothing was broadcast, nothing charged.
func (g *Gate) throttled(c echo.Context, reason string, retry time.Duration, detail string) error {
	cors(c)
	h := c.Response().Header()
	h.Set("Retry-After", strconv.Itoa(int(retry.Seconds())+1))
	h.Set("Cache-Control", "no-store")
	return c.JSON(http.StatusTooManyRequests, PaymentError{Kind: "error", Error: reason, Detail: detail})
}

// paused answers 503 payments_paused: the fee payer's global failed-fee budget is spent, so no
// payment that needs the fee payer is taken until Retry-After; nothing was broadcast or charged.
// Free pre-checks are not payments and keep working.
func (g *Gate) paused(c echo.Context, pz *x402.Paused, v *x402.Verified) error {
	g.log.Error("x402 tripwire: the fee payer's budget of lamports lost on failed transactions is spent; payments paused",
		"reason", x402.ReasonPaymentsPaused, "retry_after_s", int(pz.RetryAfter.Seconds())+1)
	h := c.Response().Header()
	h.Set("Retry-After", strconv.Itoa(int(pz.RetryAfter.Seconds())+1))
	h.Set("Cache-Control", "no-store")
	if sv, err := x402.EncodeHeader(x402.SettlementResponse{Success: false, ErrorReason: x402.ReasonPaymentsPaused,
		Network: g.cfg.Network.CAIP2, Payer: v.Payer.String()}); err == nil {
		h.Set(x402.HeaderPaymentResponse, sv)
	}
	cors(c)
	return c.JSON(http.StatusServiceUnavailable, PaymentError{Kind: "error", Error: x402.ReasonPaymentsPaused,
		Detail: "paid audits are paused: failed transactions of the last hour, with the payments now in flight at their worst case, would take the fee payer past its budget; nothing was broadcast or charged; retry after the time in Retry-After"})
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

// ReadyRPCTimeout bounds the readiness check's RPC read; ReadyCacheFor is how long its outcome
// answers /readyz before the RPC is asked again (probes come every few seconds).
const (
	ReadyRPCTimeout = 2 * time.Second
	ReadyCacheFor   = 5 * time.Second
)

// Ready implements api.ReadinessChecker: paid audits are ready while the payment network's RPC
// answers (one getBlockHeight, its outcome kept ReadyCacheFor).
func (g *Gate) Ready(ctx context.Context) error {
	g.readyMu.Lock()
	defer g.readyMu.Unlock()
	if now := time.Now(); now.Before(g.readyUntil) {
		return g.readyErr
	}
	ctx, cancel := context.WithTimeout(ctx, ReadyRPCTimeout)
	defer cancel()
	_, err := g.rpc.BlockHeight(ctx)
	if err != nil {
		err = errors.New("gate: the payment network's RPC does not answer")
	}
	g.readyErr, g.readyUntil = err, time.Now().Add(ReadyCacheFor)
	return err
}

// HasTokenAccount implements api.WalletChecker: whether wallet's USDC associated token account
// exists on the payment network. A wallet with an account is read again every time (an account
// closed since is not counted; each read follows a proof, which the caller's address budget
// bounds); a wallet without one is remembered ten minutes (a storm of fresh keys costs one read
// each).
func (g *Gate) HasTokenAccount(ctx context.Context, wallet string) (bool, error) {
	pk, err := solana.PublicKeyFromBase58(wallet)
	if err != nil {
		return false, nil
	}
	g.accMu.Lock()
	if e, ok := g.accounts[wallet]; ok && g.now().Before(e.until) {
		g.accMu.Unlock()
		return false, nil
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
	if has {
		delete(g.accounts, wallet)
	} else {
		g.accounts[wallet] = accountEntry{until: g.now().Add(10 * time.Minute)}
	}
	g.accMu.Unlock()
	return has, nil
}

// accountEntry remembers a wallet seen without a token account until a time.
type accountEntry struct {
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
