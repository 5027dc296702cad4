package gate_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// discovery is the bazaar extension of a 402 as a catalogue reads it.
type discovery struct {
	Info struct {
		Input  map[string]any `json:"input"`
		Output map[string]any `json:"output"`
	} `json:"info"`
	Schema map[string]any `json:"schema"`
}

func bazaarOf(t *testing.T, pr *x402.PaymentRequired) (discovery, []byte) {
	t.Helper()
	raw, ok := pr.Extensions[api.BazaarExtension]
	if !ok {
		t.Fatalf("PAYMENT-REQUIRED has no extensions.%s: %v", api.BazaarExtension, pr.Extensions)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var d discovery
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d, b
}

// validateInfo checks the extension the way a facilitator must before cataloguing it: info
// validates against the extension's own schema (JSON Schema 2020-12).
func validateInfo(t *testing.T, d discovery) {
	t.Helper()
	sb, _ := json.Marshal(d.Schema)
	ib, _ := json.Marshal(d.Info)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sb))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("bazaar.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("bazaar.json")
	if err != nil {
		t.Fatalf("the bazaar schema does not compile: %v", err)
	}
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(ib))
	if err := sch.Validate(inst); err != nil {
		t.Errorf("bazaar info does not validate against its own schema: %v", err)
	}
}

// TestDiscoveryExtension: the 402 carries the resource description and mimeType and the x402 v2
// bazaar extension (a JSON POST with an example body that really pre-checks, and the report as
// output, pointing at its published schema), small enough that a client echoing it in
// PAYMENT-SIGNATURE stays under the header cap.
func TestDiscoveryExtension(t *testing.T) {
	r := newRig(t, priced(t, "50000", "$0.05"), "https://audit.example.com")
	rec := r.do(http.MethodPost, "/audit", exportBody, nil)
	if rec.Code != http.StatusPaymentRequired {
		t.Fatalf("status %d, want 402", rec.Code)
	}
	pr, err := x402.DecodePaymentRequired(rec.Header().Get(x402.HeaderPaymentRequired))
	if err != nil {
		t.Fatal(err)
	}
	if pr.Resource.Description == "" || pr.Resource.MimeType != "application/json" {
		t.Errorf("resource = %+v, want a description and mimeType application/json", pr.Resource)
	}
	d, raw := bazaarOf(t, pr)
	validateInfo(t, d)
	in := d.Info.Input
	if in["type"] != "http" || in["method"] != "POST" || in["bodyType"] != "json" {
		t.Errorf("info.input = %v, want an http JSON POST", in)
	}
	// The body example is an export the service accepts: it pre-checks free.
	example, _ := json.Marshal(in["body"])
	if pre := r.do(http.MethodPost, "/precheck", string(example), nil); pre.Code != http.StatusOK {
		t.Errorf("the discovery body example pre-checks %d, want 200: %s", pre.Code, pre.Body)
	}
	out := d.Info.Output
	if out["type"] != "json" || !strings.Contains(out["format"].(string), "https://audit.example.com/schema/report.schema.json") {
		t.Errorf("info.output = %v, want json pointing at the published report schema", out)
	}
	// The output schema's required members are required by the published report schema too.
	summary := d.Schema["properties"].(map[string]any)["output"].(map[string]any)["properties"].(map[string]any)["example"].(map[string]any)
	rb, err := os.ReadFile(filepath.Join("..", "..", "..", "schema", "report.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var report struct{ Required []string }
	if err := json.Unmarshal(rb, &report); err != nil {
		t.Fatal(err)
	}
	req := map[string]bool{"signature": true} // the signing envelope adds it
	for _, k := range report.Required {
		req[k] = true
	}
	for _, k := range summary["required"].([]any) {
		if !req[k.(string)] {
			t.Errorf("the discovery output schema requires %q, which schema/report.schema.json does not", k)
		}
	}
	// A client echoes the extension (and the resource and accepted requirements) in its
	// PaymentPayload: with a real-sized transaction it must fit PAYMENT-SIGNATURE's cap.
	echo := map[string]any{"x402Version": 2, "resource": pr.Resource, "accepted": pr.Accepts[0],
		"payload":    map[string]any{"transaction": strings.Repeat("A", 1400)},
		"extensions": map[string]json.RawMessage{api.BazaarExtension: raw}}
	eb, _ := json.Marshal(echo)
	if hv, err := x402.EncodeHeader(json.RawMessage(eb)); err != nil || len(hv) > x402.MaxHeaderBytes {
		t.Errorf("an echoing PAYMENT-SIGNATURE is %d bytes, over the %d-byte cap (err %v)", len(hv), x402.MaxHeaderBytes, err)
	}
}

// TestDiscoveryExtensionOverMCP: the same audit asked by the MCP endpoint names the resource
// mcp://tool/audit and describes the tool with its published input schema.
func TestDiscoveryExtensionOverMCP(t *testing.T) {
	r := newRig(t, priced(t, "50000", "$0.05"), "https://audit.example.com")
	req, _ := http.NewRequestWithContext(api.WithMCPTool(t.Context(), "audit"), http.MethodPost, "/audit", strings.NewReader(exportBody))
	req.Host = "audit.test"
	rec := httptest.NewRecorder()
	r.srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusPaymentRequired {
		t.Fatalf("status %d, want 402", rec.Code)
	}
	pr, err := x402.DecodePaymentRequired(rec.Header().Get(x402.HeaderPaymentRequired))
	if err != nil {
		t.Fatal(err)
	}
	if pr.Resource.URL != "mcp://tool/audit" {
		t.Errorf("resource.url = %q, want mcp://tool/audit", pr.Resource.URL)
	}
	d, _ := bazaarOf(t, pr)
	validateInfo(t, d)
	in := d.Info.Input
	// toolName, as @x402/extensions' validateDiscoveryExtensionSpec requires (server/mcp/hosttest
	// runs the library's own checks on both blocks).
	if in["type"] != "mcp" || in["toolName"] != "audit" || in["transport"] != "streamable-http" {
		t.Errorf("info.input = %v, want the MCP tool audit", in)
	}
	b, _ := os.ReadFile(filepath.Join("..", "..", "..", "schema", api.MCPInputSchema))
	var want map[string]any
	var got any
	_ = json.Unmarshal(b, &want)
	delete(want, "$id") // the published $id names no address a caller can fetch
	gb, _ := json.Marshal(in["inputSchema"])
	_ = json.Unmarshal(gb, &got)
	if !bytes.Equal(mustJSON(want), mustJSON(got)) {
		t.Errorf("info.input.inputSchema is not schema/%s without its $id", api.MCPInputSchema)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
