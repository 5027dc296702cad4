package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

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

// postProving posts body to route; when the service answers 401 for proof of the caller wallet
// the export names, it signs the challenge with Wallet and posts once more with the proof. on401
// is the progress line of that 401 ("": none).
func (c *Client) postProving(ctx context.Context, route string, body []byte, on401 string) (*answer, error) {
	a, err := c.do(ctx, http.MethodPost, route, body, nil)
	if err != nil || a.status != http.StatusUnauthorized {
		return a, err
	}
	if on401 != "" {
		c.progress("%s", on401)
	}
	proof, err := c.proveFor(a, callerOf(body))
	if err != nil {
		return nil, err
	}
	return c.do(ctx, http.MethodPost, route, body, map[string]string{HeaderSIWX: proof})
}

// Precheck runs the free pre-check. When the service asks for proof of the caller wallet the
// export names, it signs the challenge with Wallet and sends the request again once.
func (c *Client) Precheck(ctx context.Context, body []byte) (*Result, error) {
	c.progress("precheck: sending %d bytes", len(body))
	a, err := c.postProving(ctx, c.precheckRoute(), body, "precheck: 401, the service asks for proof of the caller wallet")
	if err != nil {
		return nil, err
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
		return c.resend(ctx, body)
	}
	c.progress("audit: sending %d bytes unpaid to read the price", len(body))
	a, err := c.postProving(ctx, c.auditRoute(), body, "")
	if err != nil {
		return nil, err
	}
	if a.status == http.StatusOK {
		c.progress("audit: 200 without payment, signed report of %d bytes", len(a.body))
		return &Result{Body: a.body}, nil
	}
	if a.status != http.StatusPaymentRequired {
		return nil, refusal(a, c.auditRoute())
	}
	offer, header, err := c.pay(ctx, a)
	if err != nil {
		return nil, err
	}
	out, err := c.settle(ctx, body, header)
	if out != nil {
		out.Units, out.Network, out.Asset = offer.Units, offer.Network, offer.Asset
	}
	return out, err
}

// resend sends the saved Payment again with the same export to collect the report it paid for.
func (c *Client) resend(ctx context.Context, body []byte) (*Result, error) {
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

// pay reads the 402's offer, refuses it over the spend cap, and builds and signs the payment; it
// returns the offer and the PAYMENT-SIGNATURE header, kept through OnPayment before it is sent.
func (c *Client) pay(ctx context.Context, a *answer) (*Offer, string, error) {
	h := a.header.Get(HeaderPaymentRequired)
	if h == "" {
		return nil, "", &Error{Kind: KindPayment, Status: a.status, Msg: "client: the service states a price but takes no x402 payment (payments are off)"}
	}
	var pr PaymentRequired
	if decodeHeader(h, &pr) != nil {
		return nil, "", &Error{Kind: KindPayment, Status: a.status, Msg: "client: PAYMENT-REQUIRED is not base64 JSON"}
	}
	offer, err := PickOffer(&pr)
	if err != nil {
		return nil, "", &Error{Kind: KindPayment, Status: a.status, Msg: err.Error()}
	}
	c.progress("audit: 402, price %d units of %s on %s to %s", offer.Units, offer.Asset, offer.Network, offer.PayTo)
	if offer.Units > c.MaxSpendUnits {
		return nil, "", &Error{Kind: KindSpendCap, Status: a.status,
			Msg: fmt.Sprintf("client: the price %d units is over the spend cap %d units; nothing was signed", offer.Units, c.MaxSpendUnits)}
	}
	chain := c.Chain
	if chain == nil && c.ChainFor != nil {
		chain = c.ChainFor(offer.Network)
	}
	if c.Wallet == nil || chain == nil {
		return nil, "", &Error{Kind: KindPayment, Msg: "client: paying needs -wallet and a Solana RPC for the network (-rpc)"}
	}
	offer.Decimals = c.SpendDecimals
	res := pr.Resource
	payload, err := BuildPayment(ctx, chain, offer, c.Wallet, &res)
	if err != nil {
		return nil, "", &Error{Kind: KindTransport, Msg: err.Error()}
	}
	header, err := encodeHeader(payload)
	if err != nil {
		return nil, "", &Error{Kind: KindPayment, Msg: "client: encode PAYMENT-SIGNATURE"}
	}
	c.progress("pay: signed a transfer of %d units from %s (fee payer %s)", offer.Units, c.Wallet.PublicKey(), offer.extraString("feePayer"))
	if c.OnPayment != nil {
		if err := c.OnPayment(header); err != nil {
			return nil, "", &Error{Kind: KindPayment, Msg: "client: the payment could not be kept for a resume; nothing was sent"}
		}
	}
	return offer, header, nil
}
