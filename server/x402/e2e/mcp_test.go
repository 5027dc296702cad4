package e2e

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/gagliardetto/solana-go/rpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopehygiene/scope-hygiene/client"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// mcpCases: a paid audit over MCP on the real binary settling on LiteSVM. The SDK's client
// calls the tool unpaid, reads the PaymentRequired from the isError result, builds the exact-SVM
// payment with the Go client (the layout the server accepts), retries with it in
// params._meta["x402/payment"], and gets the signed report with the settlement in
// result._meta["x402/payment-response"]: one charge, one ledger row, the same gate as POST /audit.
// Replaying the same payment charges nothing more.
func mcpCases(t *testing.T, w *world) {
	t.Run("mcp_paid_audit", func(t *testing.T) {
		ctx := t.Context()
		c := sdk.NewClient(&sdk.Implementation{Name: "scope-hygiene-e2e", Version: "1"}, nil)
		s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: w.server + "/mcp"}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer s.Close()
		args := map[string]any{"export": json.RawMessage(exportBody)}
		first, err := s.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolAudit, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if !first.IsError {
			t.Fatal("an unpaid audit over MCP was not isError")
		}
		prb, _ := json.Marshal(first.StructuredContent)
		var pr client.PaymentRequired
		if err := json.Unmarshal(prb, &pr); err != nil {
			t.Fatal(err)
		}
		if pr.Resource.URL != "mcp://tool/audit" {
			t.Errorf("resource %q, want mcp://tool/audit", pr.Resource.URL)
		}
		offer, err := client.PickOffer(&pr)
		if err != nil {
			t.Fatal(err)
		}
		alice := w.clients["alice"]
		before := w.tokenAmount(alice.PublicKey())
		rows := len(w.ledger())
		payment, err := client.BuildPayment(ctx, rpc.New(w.clientRPC), offer, alice, &pr.Resource)
		if err != nil {
			t.Fatal(err)
		}
		meta := sdk.Meta{mcp.MetaPayment: payment}
		paid, err := s.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolAudit, Arguments: args, Meta: meta})
		if err != nil {
			t.Fatal(err)
		}
		report, _ := json.Marshal(paid.StructuredContent)
		if paid.IsError {
			t.Fatalf("the paid audit over MCP: %s", report)
		}
		_, pub, err := (&client.Client{BaseURL: w.server}).Criteria(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Verify(report, pub); err != nil {
			t.Errorf("the report over MCP does not verify against /criteria's key: %v", err)
		}
		srb, _ := json.Marshal(paid.Meta[mcp.MetaPaymentResponse])
		var sr x402.SettlementResponse
		if err := json.Unmarshal(srb, &sr); err != nil || !sr.Success || sr.Transaction == "" || sr.Payer != alice.PublicKey().String() {
			t.Fatalf("_meta[x402/payment-response] = %s", srb)
		}
		after := w.tokenAmount(alice.PublicKey())
		if d := atoi(t, before) - atoi(t, after); d != price {
			t.Errorf("alice paid %d units, want %d", d, price)
		}
		n := 0
		for _, e := range w.ledger()[rows:] {
			if e.PaymentTx == sr.Transaction {
				n++
			}
		}
		if n != 1 || len(w.ledger()) != rows+1 {
			t.Errorf("%d ledger rows for the MCP payment (%d new), want 1", n, len(w.ledger())-rows)
		}
		// The same payment again: no second charge, no second row.
		again, err := s.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolAudit, Arguments: args, Meta: meta})
		if err != nil {
			t.Fatal(err)
		}
		if !again.IsError {
			t.Errorf("a replayed payment over MCP delivered again without the payer's proof")
		}
		if w.tokenAmount(alice.PublicKey()) != after || len(w.ledger()) != rows+1 {
			t.Error("a replayed payment over MCP charged or booked again")
		}
	})
}

func atoi(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return n
}
