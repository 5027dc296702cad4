package mcp_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
)

// FuzzEnvelope feeds arbitrary request bodies to /mcp, in front of a routes stub that answers
// like the API (a refusal, or a 402 with a PAYMENT-REQUIRED header): the endpoint never panics,
// answers only the statuses the OpenAPI document describes for it, always with a JSON body (or
// none), and never echoes the export it was given.
func FuzzEnvelope(f *testing.F) {
	call := func(tool, export string, meta string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"export":` + export + `}` + meta + `}}`
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		call("precheck", `{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"x"}]}`, ""),
		call("audit", `{"family":"mem0"}`, `,"_meta":{"x402/payment":{"x402Version":2}}`),
		call("audit", `"not an object"`, ""),
		call("criteria", `{}`, `,"_meta":{"x402/sign-in-with-x":"AAAA"}`),
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/call","params":null}`,
		`not json`, ``, `[]`, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	var (
		once sync.Once
		h    http.Handler
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		once.Do(func() { h = mcp.New(routesStub{}, api.MCPOptions{BodyCap: 4096}) })
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
		if out := rec.Body.Bytes(); len(out) > 0 && !json.Valid(out) {
			t.Fatalf("a body that is not JSON: %.200q", out)
		}
		// What the export carried never comes back (the stub answers without it).
		var env struct {
			Params struct {
				Arguments struct {
					Export json.RawMessage `json:"export"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &env) == nil && len(env.Params.Arguments.Export) >= 12 {
			if x := string(env.Params.Arguments.Export); strings.Contains(rec.Body.String(), x) {
				t.Fatalf("the export %.80q came back", x)
			}
		}
	})
}

// routesStub answers like the API without looking at the export: a refusal for /precheck, a
// 402 with PAYMENT-REQUIRED for /audit, the criteria document for /criteria.
type routesStub struct{}

func (routesStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/audit":
		w.Header().Set("PAYMENT-REQUIRED", "eyJ4NDAyVmVyc2lvbiI6MiwiZXJyb3IiOiJlIiwicmVzb3VyY2UiOnsidXJsIjoibWNwOi8vdG9vbC9hdWRpdCJ9LCJhY2NlcHRzIjpbXX0=")
		w.WriteHeader(http.StatusPaymentRequired)
		w.Write([]byte(`{"kind":"payment_required","op":"audit","price":{"usdc_units":50000,"label":"$0.05","status":"RULED"}}`))
	case "/precheck":
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"kind":"refusal","rule":"records_empty"}`))
	default:
		w.Write([]byte(`{"criteria_id":"memory-scope-hygiene/v1"}`))
	}
}
