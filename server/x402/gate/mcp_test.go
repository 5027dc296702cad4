package gate_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/internal/schematest"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// TestPendingOverMCP: a payment sent in _meta["x402/payment"] whose confirmation outlasts the
// call is the 202's answer over MCP: an isError result whose structuredContent says how to
// resume and whose _meta["x402/payment-response"] names the broadcast transaction (pending):
// never a bare failure for a payment whose USDC may have moved.
func TestPendingOverMCP(t *testing.T) {
	r := newRigWith(t, priced(t, "50000", "$0.05"), "https://audit.example.com", x402.NewMemStore(), slowChain{})
	r.gate.Settler().ConfirmTimeout = 50 * time.Millisecond
	r.gate.Settler().PollInterval = 10 * time.Millisecond
	hv, sig := payment(t, r, r.memo(t))
	raw, err := base64.StdEncoding.DecodeString(hv)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcp.New(r.srv.Handler(), api.MCPOptions{BodyCap: r.ps.BodyCap()}))
	defer ts.Close()
	s, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: mcp.ToolAudit, Arguments: map[string]any{"export": json.RawMessage(exportBody)},
		Meta: sdk.Meta{mcp.MetaPayment: json.RawMessage(raw)}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Meta[mcp.MetaHTTPStatus] != float64(202) {
		t.Fatalf("isError %v meta %v", res.IsError, res.Meta)
	}
	body, _ := json.Marshal(res.StructuredContent)
	schematest.Check(t, "payment-pending", "", body)
	srb, _ := json.Marshal(res.Meta[mcp.MetaPaymentResponse])
	var sr x402.SettlementResponse
	if err := json.Unmarshal(srb, &sr); err != nil || sr.Transaction != sig || sr.Status != "pending" || !sr.Success {
		t.Errorf("_meta[x402/payment-response] = %s, want the pending transaction %s", srb, sig)
	}
}
