// Package mcp serves the Model Context Protocol at /mcp (Streamable HTTP, stateless, JSON
// answers) with the tools criteria, precheck and audit. Each tool call is answered by the API's
// own route (GET /criteria, POST /precheck, POST /audit) through an in-process request, so caps,
// refusals, the free tier, sign-in-with-x, the house token, x402 verification and settlement
// and the ledger are the same code as over HTTP; this package only translates. The paid audit
// follows x402 v2's MCP transport: an isError result carrying the PaymentRequired, the payment in
// params._meta["x402/payment"], the settlement in result._meta["x402/payment-response"].
package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path"
	"runtime/debug"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopehygiene/scope-hygiene/server/api"
)

// Meta keys of x402 v2's MCP transport, and this service's key for a caller's proof.
const (
	MetaPayment         = "x402/payment"
	MetaPaymentResponse = "x402/payment-response"
	MetaError           = "x402/error"
	// MetaSignInWithX carries a sign-in-with-x proof: the base64 text a SIGN-IN-WITH-X header
	// would carry (the spec has no _meta key for it; this one is ours).
	MetaSignInWithX = "x402/sign-in-with-x"
	// MetaHTTPStatus and MetaRetryAfter state the status the route answered and its
	// Retry-After, on every tool error.
	MetaHTTPStatus = "scope-hygiene/http-status"
	MetaRetryAfter = "scope-hygiene/retry-after"
	// MetaIdempotencyKey hands back the key of a consuming write whose outcome is unknown (the
	// route's Idempotency-Key answer header): the caller's own, or one the service minted. The
	// MCP HTTP request's Idempotency-Key header is the key of the write a tool call makes.
	MetaIdempotencyKey = "scope-hygiene/idempotency-key"
)

// EnvelopeOverhead is what the JSON-RPC envelope may add to an export at the body cap.
const EnvelopeOverhead = 64 << 10

// Tool names.
const (
	ToolCriteria = "criteria"
	ToolPrecheck = "precheck"
	ToolAudit    = "audit"
)

// handler is the /mcp endpoint.
type handler struct {
	routes      http.Handler
	envelope    int64
	behindProxy bool
	sdk         *sdk.StreamableHTTPHandler
}

// New returns the /mcp handler over routes (the API's own handler): the signature
// api.Config.MCP takes.
func New(routes http.Handler, o api.MCPOptions) http.Handler { return newHandler(routes, o, false) }

// Handler is New, or with conformance set New plus ToolConformanceError: the one tool the MCP
// conformance suite's tools-call-error scenario calls by name, which always answers a tool
// error. Only the conformance run serves it (serve -mcp-conformance-tools).
func Handler(conformance bool) func(http.Handler, api.MCPOptions) http.Handler {
	return func(routes http.Handler, o api.MCPOptions) http.Handler { return newHandler(routes, o, conformance) }
}

// ToolConformanceError is the tool name the conformance suite's tools-call-error calls.
const ToolConformanceError = "test_error_handling"

func newHandler(routes http.Handler, o api.MCPOptions, conformance bool) http.Handler {
	h := &handler{routes: routes, envelope: int64(o.BodyCap) + EnvelopeOverhead, behindProxy: o.BehindProxy}
	srv := sdk.NewServer(&sdk.Implementation{Name: "scope-hygiene", Title: "scope-hygiene audit", Version: version()}, &sdk.ServerOptions{
		Instructions: "Audits the scope hygiene of one AI-agent memory-store export under memory-scope-hygiene/v1 " +
			"(and, with the tools named <rule set>_criteria, _precheck and _audit, under each further rule set the service publishes). " +
			"criteria: the published criteria, price and signing key (free). precheck: validate an export and see which factors are assessable (free). " +
			"audit: the signed report of five factors, paid per call with x402 (USDC on Solana): the first call answers the PaymentRequired; " +
			"retry with the PaymentPayload in _meta[\"x402/payment\"]. No composite score exists.",
	})
	exportIn := must(toolInputSchema(api.MCPInputSchema))
	srv.AddTool(&sdk.Tool{Name: ToolCriteria, Title: "Published criteria",
		Description:  "The published criteria document (GET /criteria): criteria id, revision and digest, the report-signing key, the price and the payment network. Free.",
		InputSchema:  json.RawMessage(noArguments),
		OutputSchema: must(toolOutputSchema(http.MethodGet, "/criteria", false)),
		Annotations:  &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}},
		h.tool(ToolCriteria, http.MethodGet, "/criteria"))
	srv.AddTool(&sdk.Tool{Name: ToolPrecheck, Title: "Free pre-check of an export",
		Description: "Validates one memory-store export and states which of the five factors are assessable for its family and form (POST /precheck); signed. " +
			"Free within the daily allowance. A caller wallet named in the export is proven with _meta[\"x402/sign-in-with-x\"].",
		InputSchema: exportIn, OutputSchema: must(toolOutputSchema(http.MethodPost, "/precheck", false)),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}},
		h.tool(ToolPrecheck, http.MethodPost, "/precheck"))
	srv.AddTool(&sdk.Tool{Name: ToolAudit, Title: "Paid audit of an export",
		Description: "The signed scope-hygiene report of one memory-store export (POST /audit): scope presence, unscoped rate, cross-scope identical-content clusters, scope conflicts and duplicates, each stated on its own; " +
			"a factor the export cannot support is NOT ASSESSABLE with its reason. Paid per call with x402 v2 (exact, USDC on Solana): " +
			"an unpaid call answers isError with the PaymentRequired; pay in _meta[\"x402/payment\"]; the settlement is in the result's _meta[\"x402/payment-response\"].",
		InputSchema: exportIn, OutputSchema: must(toolOutputSchema(http.MethodPost, "/audit", true)),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: false, OpenWorldHint: ptr(false)}},
		h.tool(ToolAudit, http.MethodPost, "/audit"))
	for _, m := range o.Mounts {
		h.addMount(srv, m)
	}
	if conformance {
		srv.AddTool(&sdk.Tool{Name: ToolConformanceError, Description: "Always answers a tool error (the MCP conformance suite's tools-call-error).",
			InputSchema: json.RawMessage(noArguments)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "This tool intentionally returns an error for testing"}}}, nil
			})
	}
	// The DNS-rebinding guard is ServeHTTP's (a static answer, and off behind a proxy).
	h.sdk = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, MaxRequestBodyBytes: h.envelope, DisableLocalhostProtection: true})
	return h
}

type outerKey struct{}

// outer is what a tool call keeps of the HTTP request that carried it.
type outer struct {
	host, remoteAddr string
	header           http.Header
}

// ServeHTTP bounds the envelope and refuses what is not JSON with static answers before the
// SDK parses anything (a JSON syntax error's text would quote a byte of the request).
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.rebound(r) {
		writeJSON(w, http.StatusForbidden, staticError(http.StatusForbidden))
		return
	}
	if r.ContentLength > h.envelope {
		writeJSON(w, http.StatusRequestEntityTooLarge, staticError(http.StatusRequestEntityTooLarge))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.envelope+1))
	if err != nil {
		// The body budget or the body timeout cut the envelope short: the service's own answer.
		if !api.AnswerBodyLimit(w, r, err) {
			writeJSON(w, http.StatusBadRequest, staticError(http.StatusBadRequest))
		}
		return
	}
	if int64(len(body)) > h.envelope {
		writeJSON(w, http.StatusRequestEntityTooLarge, staticError(http.StatusRequestEntityTooLarge))
		return
	}
	if !json.Valid(body) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": -32700, "message": "Parse error"}})
		return
	}
	o := outer{host: r.Host, remoteAddr: r.RemoteAddr, header: http.Header{}}
	for _, k := range []string{"Authorization", "X-Forwarded-For", "X-Real-Ip", api.HeaderIdempotencyKey} {
		if v := r.Header.Values(k); len(v) > 0 {
			o.header[k] = v
		}
	}
	// A paid audit answered in this envelope reaches its payer only with the envelope: it is
	// marked delivered once the whole answer has been written without error (as a plain /audit
	// is), and otherwise stays settled but undelivered, so that the payer may resume it.
	deliveries := &api.Deliveries{}
	r = r.WithContext(api.WithDeferredDelivery(context.WithValue(r.Context(), outerKey{}, o), deliveries))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	sw := &staticRefusals{ResponseWriter: w}
	h.sdk.ServeHTTP(sw, r)
	if sw.err == nil && r.Context().Err() == nil {
		deliveries.Done()
	}
}

// staticRefusals replaces the SDK's plain-text refusals (whose text may quote a value of the
// request) with static JSON: a JSON-RPC Invalid Request for a 400, the status text otherwise.
type staticRefusals struct {
	http.ResponseWriter
	replaced bool
	err      error // the first failed write: the answer did not reach the client whole
}

func (s *staticRefusals) WriteHeader(code int) {
	if code < 400 || strings.HasPrefix(s.Header().Get("Content-Type"), "application/json") {
		s.ResponseWriter.WriteHeader(code)
		return
	}
	s.replaced = true
	s.Header().Del("Content-Length")
	s.Header().Del("X-Content-Type-Options")
	var v any = staticError(code)
	if code == http.StatusBadRequest {
		v = map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": "Invalid Request"}}
	}
	writeJSON(s.ResponseWriter, code, v)
}

func (s *staticRefusals) Write(b []byte) (int, error) {
	if s.replaced {
		return len(b), nil
	}
	n, err := s.ResponseWriter.Write(b)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

// Flush lets a streamed answer through.
func (s *staticRefusals) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok && !s.replaced {
		f.Flush()
	}
}

// rebound reports a request that reached a loopback listener under a Host that is not a
// loopback name: a page rebinding its own name to 127.0.0.1. Behind a proxy every request
// arrives on loopback under the public Host, so the guard is off there.
func (h *handler) rebound(r *http.Request) bool {
	if h.behindProxy {
		return false
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	ap, err := netip.ParseAddrPort(local.String())
	if err != nil || !ap.Addr().IsLoopback() {
		return false
	}
	host := r.Host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err != nil || !a.IsLoopback()
}

// tool answers one tool by the API route method+path.
func (h *handler) tool(name, method, path string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		o, ok := ctx.Value(outerKey{}).(outer)
		if !ok {
			return nil, errors.New("mcp: tool call without its HTTP request")
		}
		var body []byte
		if method == http.MethodPost {
			var args struct {
				Export json.RawMessage `json:"export"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || len(args.Export) == 0 || args.Export[0] != '{' {
				return argumentError(), nil
			}
			body = args.Export
		}
		in, err := http.NewRequestWithContext(api.WithMCPTool(ctx, name), method, path, bytes.NewReader(body))
		if err != nil {
			return nil, errors.New("mcp: inner request")
		}
		in.Host, in.RemoteAddr = o.host, o.remoteAddr
		for k, v := range o.header {
			in.Header[k] = v
		}
		if method == http.MethodPost {
			in.Header.Set("Content-Type", "application/json")
		}
		meta := req.Params.GetMeta()
		if p, ok := meta[MetaPayment]; ok && p != nil {
			pb, err := json.Marshal(p)
			if err != nil {
				return argumentError(), nil
			}
			in.Header.Set("PAYMENT-SIGNATURE", base64.StdEncoding.EncodeToString(pb))
		}
		if p, ok := meta[MetaSignInWithX].(string); ok && p != "" {
			in.Header.Set("SIGN-IN-WITH-X", p)
		}
		rec := &recorder{header: http.Header{}}
		h.routes.ServeHTTP(rec, in)
		return translate(rec), nil
	}
}

// translate turns the route's answer into the tool result.
func translate(rec *recorder) *sdk.CallToolResult {
	body := rec.body.Bytes()
	res := &sdk.CallToolResult{Meta: sdk.Meta{}}
	if pr := decodeHeader(rec.header.Get("PAYMENT-RESPONSE")); pr != nil {
		res.Meta[MetaPaymentResponse] = pr
	}
	if rec.status == http.StatusOK {
		res.StructuredContent = json.RawMessage(body)
		res.Content = []sdk.Content{&sdk.TextContent{Text: string(body)}}
		return res
	}
	res.IsError = true
	res.Meta[MetaHTTPStatus] = rec.status
	if ra, err := strconv.Atoi(rec.header.Get("Retry-After")); err == nil {
		res.Meta[MetaRetryAfter] = ra
	}
	if k := rec.header.Get(api.HeaderIdempotencyKey); k != "" {
		res.Meta[MetaIdempotencyKey] = k
	}
	if required := decodeHeader(rec.header.Get("PAYMENT-REQUIRED")); rec.status == http.StatusPaymentRequired && required != nil {
		// x402 MCP transport: structuredContent is the PaymentRequired, content[0] its x402/error
		// envelope; a failed settlement adds the settlement response inside structuredContent.
		var pr map[string]any
		if json.Unmarshal(required, &pr) == nil {
			if settle, ok := res.Meta[MetaPaymentResponse]; ok {
				pr[MetaPaymentResponse] = settle
			}
			msg, _ := pr["error"].(string)
			if msg == "" {
				msg = "payment required"
			}
			text, _ := json.Marshal(map[string]any{MetaError: map[string]any{"code": http.StatusPaymentRequired, "message": msg, "data": json.RawMessage(required)}})
			res.StructuredContent = pr
			res.Content = []sdk.Content{&sdk.TextContent{Text: string(text)}}
			return res
		}
	}
	if !json.Valid(body) || len(body) == 0 || body[0] != '{' {
		body, _ = json.Marshal(staticError(rec.status))
	}
	res.StructuredContent = json.RawMessage(body)
	res.Content = []sdk.Content{&sdk.TextContent{Text: string(body)}}
	return res
}

// argumentError is the tool error of arguments without an export object: a static error (its
// structuredContent meets error.schema.json), the sentence that explains it in a second text.
func argumentError() *sdk.CallToolResult {
	b, _ := json.Marshal(map[string]any{"kind": "error", "error": "Invalid arguments"})
	return &sdk.CallToolResult{IsError: true, StructuredContent: json.RawMessage(b),
		Content: []sdk.Content{&sdk.TextContent{Text: string(b)}, &sdk.TextContent{Text: "arguments must be an object with an export member that is a JSON object"}},
		Meta:    sdk.Meta{MetaHTTPStatus: http.StatusBadRequest}}
}

// decodeHeader is the JSON of a base64 x402 header (nil when absent or not base64 JSON).
func decodeHeader(v string) json.RawMessage {
	if v == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || !json.Valid(b) {
		return nil
	}
	return b
}

func staticError(code int) map[string]string {
	return map[string]string{"kind": "error", "error": http.StatusText(code)}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// must stops on a tool schema that cannot be built from the embedded documents: a build defect.
func must(b json.RawMessage, err error) json.RawMessage {
	if err != nil {
		panic(err)
	}
	return b
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func ptr[T any](v T) *T { return &v }

// recorder keeps the route's answer in memory for translation.
type recorder struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// noArguments is the input schema of a tool that takes none.
const noArguments = `{"type":"object","properties":{},"additionalProperties":false}`

// MountTool is the name of a further criteria's tool op (criteria, precheck or audit): the last
// segment of its routes' prefix in snake case, then the op, e.g. forget_envelope_audit for
// /v1/forget-envelope.
func MountTool(prefix, op string) string {
	return strings.ReplaceAll(path.Base(prefix), "-", "_") + "_" + op
}

// addMount offers the three tools of a further criteria, each answered by its own route.
func (h *handler) addMount(srv *sdk.Server, m api.MCPMount) {
	in, _ := json.Marshal(map[string]any{"type": "object", "required": []string{"export"}, "additionalProperties": false,
		"properties": map[string]any{"export": map[string]any{"type": "object",
			"description": "One export exactly as POST " + m.Prefix + "/precheck and " + m.Prefix + "/audit take it as their body (GET /criteria/" + m.ID + " states its input contract)."}}})
	doc := "/criteria/" + m.ID
	name := MountTool(m.Prefix, ToolCriteria)
	srv.AddTool(&sdk.Tool{Name: name, Title: "Published criteria " + m.ID,
		Description: "The published criteria document of " + m.ID + " (GET " + doc + "): its revision and digest, the report-signing key and its price. Free.",
		InputSchema: json.RawMessage(noArguments), OutputSchema: must(toolOutputSchema(http.MethodGet, doc, false)),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}},
		h.tool(name, http.MethodGet, doc))
	name = MountTool(m.Prefix, ToolPrecheck)
	srv.AddTool(&sdk.Tool{Name: name, Title: "Free pre-check under " + m.ID,
		Description: "Validates one export under " + m.ID + " and states which of its factors are assessable (POST " + m.Prefix + "/precheck); signed. Free within its daily allowance.",
		InputSchema: json.RawMessage(in), OutputSchema: must(toolOutputSchema(http.MethodPost, m.Prefix+"/precheck", false)),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}},
		h.tool(name, http.MethodPost, m.Prefix+"/precheck"))
	name = MountTool(m.Prefix, ToolAudit)
	how := "Free under its daily allowance (the criteria are unpriced)."
	if m.Paid {
		how = "Paid per call with x402 v2: an unpaid call answers isError with the PaymentRequired; pay in _meta[\"x402/payment\"]."
	}
	srv.AddTool(&sdk.Tool{Name: name, Title: "Audit under " + m.ID,
		Description: "The signed report of one export under " + m.ID + " (POST " + m.Prefix + "/audit), each factor stated on its own; a factor the export cannot support is NOT ASSESSABLE with its reason. " + how,
		InputSchema: json.RawMessage(in), OutputSchema: must(toolOutputSchema(http.MethodPost, m.Prefix+"/audit", m.Paid)),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: false, OpenWorldHint: ptr(false)}},
		h.tool(name, http.MethodPost, m.Prefix+"/audit"))
}
