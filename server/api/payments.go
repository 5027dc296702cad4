package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Quote is what one paid call costs.
type Quote struct {
	Op               string
	USDCUnits        int64
	Label            string
	Status           string
	CriteriaRevision string
	// ResourceURL is the absolute URL of the paid route (public base URL + route).
	ResourceURL string
	// MCPTool names the MCP tool when the call came over /mcp ("" over HTTP): the resource is
	// then mcp://tool/<name>.
	MCPTool string
	// Discovery is the x402 v2 bazaar discovery extension ({info, schema}) of the paid resource,
	// carried in PaymentRequired.extensions["bazaar"].
	Discovery map[string]any
	// Network is the CAIP-2 id of the network payments are taken on ("" without payments).
	Network string
	// ProveCaller checks that the request carries a sign-in-with-x proof by wallet for
	// purpose; when it does not, it has answered (401 with a fresh challenge bound to purpose,
	// 429 out of budget) and returns non-nil.
	ProveCaller func(wallet, purpose string) error
	// Challenge issues a sign-in-with-x challenge for purpose on this route (e.g. the resume
	// challenge of a 202).
	Challenge func(purpose string) (siwx.Challenge, error)
}

// Payment is a verified payment for one audit, as the ledger records it.
type Payment struct {
	// Payer is the payer's wallet.
	Payer string
	// TxID is the payment transaction id.
	TxID string
	// FeeLamports is the Solana fee of the payment, when known.
	FeeLamports *int64
	// USDCUnits is the amount paid.
	USDCUnits int64
	// CAD is the CAD fair-market-value block.
	CAD store.CADBlock
	// Handle is the payment implementation's own state.
	Handle any
}

// Payments is the seam the x402 work implements. The API calls Require after the export is
// validated (a malformed export never reaches it), runs the audit only when Require returns a
// Payment, and then calls Settle (or Abandon if the audit could not be produced).
type Payments interface {
	// Require verifies the request's payment. It returns nil, nil after writing the response
	// itself when the call is not paid (402 with the price, or any other answer it chooses).
	Require(c echo.Context, q Quote) (*Payment, error)
	// Settle completes a paid audit whose signed report is ready: it fills the payment facts
	// into entry and appends it to the ledger through appendLedger, exactly once.
	Settle(c echo.Context, p *Payment, entry store.LedgerEntry, appendLedger func(store.LedgerEntry) (int64, error)) error
	// Abandon is called when a paid audit could not be produced.
	Abandon(c echo.Context, p *Payment)
}

// PaymentVerifier is implemented by a Payments that can tell, offline (no RPC, no store), whether
// a PAYMENT-SIGNATURE header verifies: signed by its payer, for our price, payTo and fee payer.
type PaymentVerifier interface {
	VerifiesOffline(header string) bool
}

// ReadinessChecker is implemented by a Payments whose paid audits depend on an outside service
// (the payment network's RPC): Ready fails while it does not answer.
type ReadinessChecker interface {
	Ready(ctx context.Context) error
}

// PaymentsCheck is the name of the readiness check of paid audits in GET /readyz.
const PaymentsCheck = "payments_rpc"

// paymentsReady is the readiness check of paid audits (PaymentsCheck): nil without payments or
// while the payment network's RPC answers. The health code lists it beside the store's checks.
func (s *Server) paymentsReady(ctx context.Context) error {
	if rc, ok := s.cfg.Payments.(ReadinessChecker); ok {
		return rc.Ready(ctx)
	}
	return nil
}

// NetworkNamer is implemented by a Payments that takes payments on a network: GET /criteria and
// the 402 name it, and whether it is revenue (only mainnet is).
type NetworkNamer interface {
	Network() (caip2, name string, revenue bool)
}

// paymentsDoc is the "payments" member of GET /criteria: the network payments are taken on (or
// none) beside the price as the criteria state it.
func (s *Server) paymentsDoc() map[string]any {
	d := map[string]any{"price": Price{USDCUnits: s.cfg.Criteria.PriceUnits(), Label: s.cfg.Criteria.PriceLabel(), Status: s.cfg.PriceStatus},
		"network": nil, "enabled": false}
	if n, ok := s.cfg.Payments.(NetworkNamer); ok {
		caip2, name, revenue := n.Network()
		d["network"] = map[string]any{"chain_id": caip2, "name": name, "revenue": revenue}
		d["enabled"] = true
	}
	return d
}

// NoPayments is the default: every unpaid /audit answers 402 stating the price.
type NoPayments struct{}

// PaymentRequired is the 402 body of NoPayments.
type PaymentRequired struct {
	Kind  string `json:"kind"`
	Op    string `json:"op"`
	Price Price  `json:"price"`
}

// Price is the published price.
type Price struct {
	USDCUnits int64  `json:"usdc_units"`
	Label     string `json:"label"`
	Status    string `json:"status"`
}

// Require answers 402 with the price.
func (NoPayments) Require(c echo.Context, q Quote) (*Payment, error) {
	return nil, c.JSON(http.StatusPaymentRequired, PaymentRequired{Kind: "payment_required", Op: q.Op,
		Price: Price{USDCUnits: q.USDCUnits, Label: q.Label, Status: q.Status}})
}

// Settle writes the ledger row with the payment's facts.
func (NoPayments) Settle(c echo.Context, p *Payment, entry store.LedgerEntry, appendLedger func(store.LedgerEntry) (int64, error)) error {
	FillPayment(&entry, p)
	_, err := appendLedger(entry)
	return err
}

// Abandon does nothing.
func (NoPayments) Abandon(echo.Context, *Payment) {}

// FillPayment copies a payment's facts into a ledger entry.
func FillPayment(e *store.LedgerEntry, p *Payment) {
	e.PayerWallet, e.PaymentTx, e.SolanaFeeLamports = p.Payer, p.TxID, p.FeeLamports
	e.PriceUSDCUnits, e.CAD = p.USDCUnits, p.CAD
}
