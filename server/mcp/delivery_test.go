package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// acceptingPayments takes any call that carries a payment as paid, and counts deliveries.
type acceptingPayments struct{ delivered atomic.Int32 }

func (p *acceptingPayments) Require(c echo.Context, q api.Quote) (*api.Payment, error) {
	if c.Request().Header.Get("PAYMENT-SIGNATURE") == "" {
		return api.NoPayments{}.Require(c, q)
	}
	return &api.Payment{Payer: "11111111111111111111111111111111", TxID: "tx-mcp", USDCUnits: q.USDCUnits,
		CAD: store.CADBlock{Pending: true}}, nil
}

func (p *acceptingPayments) Settle(c echo.Context, pay *api.Payment, e store.LedgerEntry, add func(store.LedgerEntry) (int64, error)) error {
	return api.NoPayments{}.Settle(c, pay, e, add)
}

func (p *acceptingPayments) Abandon(echo.Context, *api.Payment) {}

func (p *acceptingPayments) Delivered(context.Context, *api.Payment) { p.delivered.Add(1) }

// brokenClient is a client that went away: every write of the answer fails.
type brokenClient struct{ h http.Header }

func (b *brokenClient) Header() http.Header { return b.h }
func (b *brokenClient) WriteHeader(int)     {}
func (b *brokenClient) Write([]byte) (int, error) {
	return 0, errors.New("connection reset by peer")
}

// TestPaidAuditOverMCPDeliveredWithTheEnvelope: a paid audit answered over MCP is marked delivered
// only once the MCP answer carrying it has been written; when that write fails the payment stays
// undelivered (the payer may resume it), though the route's own 200 was written in memory.
func TestPaidAuditOverMCPDeliveredWithTheEnvelope(t *testing.T) {
	pay := &acceptingPayments{}
	r := newRig(t, func(c *api.Config) { c.Payments = pay })
	envelope := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + mcp.ToolAudit +
		`","arguments":{"export":` + exportBody + `},"_meta":{"` + mcp.MetaPayment + `":{"x402Version":2}}}}`
	send := func(w http.ResponseWriter) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(envelope))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		r.srv.Handler().ServeHTTP(w, req)
	}
	send(&brokenClient{h: http.Header{}})
	if n := pay.delivered.Load(); n != 0 {
		t.Fatalf("the MCP answer never reached the payer, yet %d payment(s) were marked delivered", n)
	}
	rec := httptest.NewRecorder()
	send(rec)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"verdict_line"`) || strings.Contains(rec.Body.String(), `"isError":true`) {
		t.Fatalf("paid audit over MCP: %d %.300s", rec.Code, rec.Body.String())
	}
	if n := pay.delivered.Load(); n != 1 {
		t.Fatalf("%d payment(s) marked delivered after the MCP answer was written, want 1", n)
	}
}
