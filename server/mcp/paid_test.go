package mcp_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/server/x402/gate"
)

// withGate turns x402 payments on (devnet, an RPC nobody answers: nothing here settles).
func withGate(t *testing.T) func(*api.Config) {
	return func(c *api.Config) {
		pr := c.Criteria.(interface{ PriceUnits() int64 })
		cfg := &x402.Config{Network: x402.Devnet, RPCURL: "http://127.0.0.1:1",
			FeePayer:     solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32))),
			PayTo:        solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32))).PublicKey(),
			ChallengeKey: bytes.Repeat([]byte{9}, 32),
			Price:        x402.Price{Units: uint64(pr.PriceUnits()), Label: c.Criteria.PriceLabel(), Status: c.PriceStatus}}
		g, err := gate.New(cfg, x402.NewSolanaRPC(cfg.RPCURL), x402.NewMemStore(), nil, nil, func() time.Time { return time.Now() })
		if err != nil {
			t.Fatal(err)
		}
		c.Payments = g
	}
}

// TestAuditPaymentRequired: an unpaid audit over MCP is the x402 MCP transport's answer: a
// result (not a JSON-RPC error) with isError, structuredContent the PaymentRequired naming
// mcp://tool/audit with the bazaar description, content[0] its x402/error envelope; and a
// payment that is not a PaymentPayload is the same static 400 as a malformed PAYMENT-SIGNATURE.
func TestAuditPaymentRequired(t *testing.T) {
	r := newRig(t, withGate(t))
	s := r.session(nil)
	res := call(t, s, mcp.ToolAudit, exportArgs(exportBody), nil)
	if !res.IsError {
		t.Fatal("an unpaid audit is not isError")
	}
	var pr x402.PaymentRequired
	if err := json.Unmarshal(structured(t, res), &pr); err != nil {
		t.Fatal(err)
	}
	validate(t, "payment-required.schema.json", mustMarshal(map[string]any{"kind": "payment_required", "op": "audit",
		"price": map[string]any{"usdc_units": 1, "label": "x", "status": "x"}, "network": pr.Accepts[0].Network,
		"x402Version": pr.X402Version, "error": pr.Error, "resource": pr.Resource, "accepts": pr.Accepts, "extensions": pr.Extensions}))
	if pr.Error != "x402 payment is required in the call meta" {
		t.Errorf("error %q, want the MCP wording", pr.Error)
	}
	if pr.X402Version != 2 || pr.Resource.URL != "mcp://tool/audit" || len(pr.Accepts) != 1 || pr.Accepts[0].Amount != "50000" {
		t.Errorf("PaymentRequired = %+v", pr)
	}
	if b, ok := pr.Extensions[api.BazaarExtension].(map[string]any); !ok || b["info"].(map[string]any)["input"].(map[string]any)["toolName"] != "audit" {
		t.Errorf("no MCP bazaar description: %v", pr.Extensions)
	}
	var env map[string]struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &env); err != nil {
		t.Fatalf("content[0] is not JSON: %v", err)
	}
	e := env[mcp.MetaError]
	if e.Code != 402 || e.Message == "" || !sameJSON(t, e.Data, pr) {
		t.Errorf("content[0] x402/error = %+v", e)
	}
	bad := call(t, s, mcp.ToolAudit, exportArgs(exportBody), sdk.Meta{mcp.MetaPayment: strings.Repeat("x", 9000)})
	if !bad.IsError || !strings.Contains(string(structured(t, bad)), gate.ReasonHeaderMalformed) {
		t.Errorf("an oversized payment: %s", structured(t, bad))
	}
	wrong := call(t, s, mcp.ToolAudit, exportArgs(exportBody), sdk.Meta{mcp.MetaPayment: map[string]any{"x402Version": 2, "accepted": pr.Accepts[0],
		"payload": map[string]any{"transaction": "AAAA"}}})
	if !wrong.IsError || wrong.Meta[mcp.MetaHTTPStatus] != float64(402) {
		t.Errorf("an invalid payment: isError %v meta %v %s", wrong.IsError, wrong.Meta, structured(t, wrong))
	}
	if err := json.Unmarshal(structured(t, wrong), &pr); err != nil || pr.Error == "" || pr.Error == "PAYMENT-SIGNATURE header is required" {
		t.Errorf("an invalid payment's PaymentRequired names no reason: %q", pr.Error)
	}
}

func mustMarshal(v any) []byte { b, _ := json.Marshal(v); return b }
