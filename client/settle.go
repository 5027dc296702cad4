package client

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

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
		if a.status == http.StatusOK {
			if !hasSR || !sr.Success {
				return nil, &Error{Kind: KindPayment, Status: a.status, Transaction: tx, Msg: "client: the paid report came without a successful PAYMENT-RESPONSE"}
			}
			c.progress("audit: 200 paid, transaction %s, signed report of %d bytes", sr.Transaction, len(a.body))
			return &Result{Body: a.body, Settlement: &sr, Resumed: resumed}, nil
		}
		if headers, err = c.nextAttempt(a, payment, &tx); err != nil {
			return nil, err
		}
		resumed++
		if a.status == http.StatusUnauthorized {
			continue
		}
		if time.Now().After(deadline) {
			return nil, &Error{Kind: KindPayment, Transaction: tx, Msg: "client: the settlement was still pending when the wait ended; resume later with the same payment"}
		}
		if err := c.sleep(ctx, retryAfter(a.header)); err != nil {
			return nil, &Error{Kind: KindTransport, Transaction: tx, Msg: "client: interrupted while the settlement was pending"}
		}
	}
	return nil, &Error{Kind: KindPayment, Transaction: tx, Msg: "client: the settlement did not end within the attempt bound"}
}

// nextAttempt reads an answer other than 200 to a paid request: the headers of the next attempt
// while the settlement is pending (with the payer's resume proof when the service asks for it),
// or the error that ends it. tx is the transaction id known so far; a 202 names it.
func (c *Client) nextAttempt(a *answer, payment string, tx *string) (map[string]string, error) {
	switch a.status {
	case http.StatusAccepted:
		var p Pending
		if json.Unmarshal(a.body, &p) != nil || p.Transaction == "" {
			return nil, &Error{Kind: KindPayment, Status: a.status, Transaction: *tx, Msg: "client: the 202 carries no pending settlement"}
		}
		*tx = p.Transaction
		c.progress("audit: 202 pending, transaction %s, %d runs left; resuming as the payer", *tx, p.Resume.RunsLeft)
		var ch SIWXChallenge
		if json.Unmarshal(p.Resume.SIWX, &ch) != nil || ch.Info.Nonce == "" {
			return nil, &Error{Kind: KindPayment, Status: a.status, Transaction: *tx, Msg: "client: the 202 carries no resume challenge"}
		}
		proof, err := Prove(&ch, c.Wallet)
		if err != nil {
			return nil, &Error{Kind: KindProof, Transaction: *tx, Msg: "client: " + err.Error()}
		}
		return map[string]string{HeaderPaymentSignature: payment, HeaderSIWX: proof}, nil
	case http.StatusUnauthorized:
		// A resume whose proof was refused or expired: a fresh challenge bound to the payment.
		proof, err := c.proveFor(a, "")
		if err != nil {
			err.(*Error).Transaction = *tx
			return nil, err
		}
		return map[string]string{HeaderPaymentSignature: payment, HeaderSIWX: proof}, nil
	case http.StatusServiceUnavailable:
		if *tx == "" {
			e := refusal(a, c.auditRoute())
			e.Kind, e.Msg = KindPayment, "client: the payment could not be settled now; nothing was charged"
			return nil, e
		}
		c.progress("audit: 503, settlement of transaction %s pending; retrying with the same payment", *tx)
		return map[string]string{HeaderPaymentSignature: payment}, nil
	case http.StatusPaymentRequired:
		reason := ""
		var pr PaymentRequired
		if decodeHeader(a.header.Get(HeaderPaymentRequired), &pr) == nil && staticToken(pr.Error) {
			reason = pr.Error
		}
		return nil, &Error{Kind: KindPayment, Status: a.status, Rule: reason, Transaction: *tx, Msg: "client: the payment was refused"}
	}
	e := refusal(a, c.auditRoute())
	e.Transaction = *tx
	return nil, e
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
