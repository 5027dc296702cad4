package mcp_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"
	"github.com/santhosh-tekuri/jsonschema/v6"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/apidoc"
	"github.com/scopehygiene/scope-hygiene/server/engine"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
)

const (
	houseToken = "house-token-for-mcp-tests"
	exportBody = `{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"prefers tea","user_id":"alice"},{"id":"r2","content_text":"prefers tea","user_id":"bob"}]}`
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var (
	psOnce sync.Once
	psVal  *rules.ProgramSet
	psErr  error
)

type rig struct {
	t    *testing.T
	url  string
	srv  *api.Server
	st   *sqlite.Store
	logs *syncBuffer
	ps   *rules.ProgramSet
	// seen collects every HTTP answer of the service (to look for canaries).
	seen *syncBuffer
}

// newRig serves the API with /mcp on a loopback test server; edit changes the config.
func newRig(t *testing.T, edit ...func(*api.Config)) *rig {
	t.Helper()
	psOnce.Do(func() { psVal, psErr = rules.Default() })
	if psErr != nil {
		t.Fatal(psErr)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	doc, err := engine.Document(psVal)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, st: st, logs: &syncBuffer{}, seen: &syncBuffer{}, ps: psVal}
	cfg := api.Config{Criteria: psVal, Document: doc, Engine: engine.Engine{PS: psVal}, Store: st,
		Signer: sign.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))), PriceStatus: psVal.Criteria().Price.Status,
		HouseToken: houseToken, Logger: slog.New(slog.NewJSONHandler(r.logs, nil)), Metrics: metrics.New(),
		ProofKey: bytes.Repeat([]byte{5}, 32), MCP: mcp.New}
	for _, f := range edit {
		f(&cfg)
	}
	r.srv, err = api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := httptest.NewRecorder()
		r.srv.Handler().ServeHTTP(rec, req)
		// Every answer of /mcp against the OpenAPI document, and kept for the canary checks.
		apidoc.CheckT(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
		r.seen.Write(rec.Body.Bytes())
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(ts.Close)
	r.url = ts.URL + "/mcp"
	return r
}

// session connects the SDK's client and lists the tools first, as every host does; hdr is set
// on every HTTP request it makes. Every later call's structuredContent is checked against the
// listed tool's output schema (call), as the TypeScript SDK's client does.
func (r *rig) session(hdr map[string]string) *sdk.ClientSession {
	r.t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "scope-hygiene-test", Version: "1"}, nil)
	hc := &http.Client{Transport: headerRT{hdr}}
	s, err := c.Connect(r.t.Context(), &sdk.StreamableClientTransport{Endpoint: r.url, HTTPClient: hc}, nil)
	if err != nil {
		r.t.Fatalf("connect: %v", err)
	}
	r.t.Cleanup(func() { s.Close() })
	res, err := s.ListTools(r.t.Context(), nil)
	if err != nil {
		r.t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*jsonschema.Schema{}
	for _, tool := range res.Tools {
		if tool.OutputSchema == nil {
			continue
		}
		out[tool.Name] = compileListed(r.t, tool.Name, tool.OutputSchema)
	}
	outputSchemas.Store(s, out)
	return s
}

// outputSchemas holds each session's listed output schemas by tool name.
var outputSchemas sync.Map

// compileListed compiles a schema as tools/list gave it: self-contained, no $id.
func compileListed(t *testing.T, name string, v any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"$id"`)) || bytes.Contains(b, []byte(".invalid")) {
		t.Errorf("tool %s: a listed schema carries a $id or a .invalid address", name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "urn:tool:" + name
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("tool %s: listed schema does not compile: %v", name, err)
	}
	return sch
}

type headerRT struct{ hdr map[string]string }

func (h headerRT) RoundTrip(req *http.Request) (*http.Response, error) {
	for k, v := range h.hdr {
		req.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(req)
}

func call(t *testing.T, s *sdk.ClientSession, tool string, args any, meta sdk.Meta) *sdk.CallToolResult {
	t.Helper()
	res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	if schemas, ok := outputSchemas.Load(s); ok && res.StructuredContent != nil {
		if sch := schemas.(map[string]*jsonschema.Schema)[tool]; sch != nil {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured(t, res)))
			if err == nil {
				err = sch.Validate(inst)
			}
			if err != nil {
				t.Errorf("tools/call %s (isError %v): structuredContent does not meet the listed output schema: %v", tool, res.IsError, err)
			}
		}
	}
	return res
}

func exportArgs(export string) map[string]any {
	return map[string]any{"export": json.RawMessage(export)}
}

// structured is a result's structuredContent as JSON.
func structured(t *testing.T, res *sdk.CallToolResult) []byte {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validate checks b against schema/<name> (every published schema available for $ref).
func validate(t *testing.T, name string, b []byte) {
	t.Helper()
	c := jsonschema.NewCompiler()
	files, _ := filepath.Glob(filepath.Join("..", "..", "schema", "*.schema.json"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("https://scope-hygiene.invalid/schema/"+filepath.Base(f), doc); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile("https://scope-hygiene.invalid/schema/" + name)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err == nil {
		err = sch.Validate(inst)
	}
	if err != nil {
		t.Errorf("does not validate against schema/%s: %v\n%.400s", name, err, b)
	}
}

// TestToolsList: three tools; each input schema is the published one without its $id; each
// output schema is self-contained (no $id, every $ref inside it) and admits the route's success
// body, its refusals and static errors, and for the audit the x402 PaymentRequired.
func TestToolsList(t *testing.T) {
	s := newRig(t).session(nil)
	res, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{mcp.ToolCriteria: {"criteria-document", "error"},
		mcp.ToolPrecheck: {"precheck", "refusal", "service-refusal", "service-limit", "siwx-challenge", "error"},
		mcp.ToolAudit:    {"report", "payment-pending", "refusal", "payment-error", "payment-required", "x402-payment-required", "error"}}
	if len(res.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(res.Tools), len(want))
	}
	input, err := os.ReadFile(filepath.Join("..", "..", "schema", api.MCPInputSchema))
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	json.Unmarshal(input, &in)
	delete(in, "$id")
	delete(in, "$schema")
	input, _ = json.Marshal(in)
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		if tool.Name != mcp.ToolCriteria && !sameJSON(t, input, tool.InputSchema) {
			t.Errorf("tool %s input schema is not schema/%s without $id and $schema", tool.Name, api.MCPInputSchema)
		}
		var out struct {
			AnyOf []struct {
				Ref string `json:"$ref"`
			} `json:"anyOf"`
		}
		b, _ := json.Marshal(tool.OutputSchema)
		json.Unmarshal(b, &out)
		refs := map[string]bool{}
		for _, a := range out.AnyOf {
			refs[strings.TrimPrefix(a.Ref, "#/$defs/")] = true
		}
		for _, name := range w {
			if !refs[name] {
				t.Errorf("tool %s output schema admits no %s (anyOf %v)", tool.Name, name, refs)
			}
		}
	}
}

func sameJSON(t *testing.T, a []byte, b any) bool {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	bb, _ := json.Marshal(b)
	if err := json.Unmarshal(bb, &y); err != nil {
		t.Fatal(err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// TestCriteriaTool answers exactly the GET /criteria document.
func TestCriteriaTool(t *testing.T) {
	r := newRig(t)
	res := call(t, r.session(nil), mcp.ToolCriteria, map[string]any{}, nil)
	if res.IsError {
		t.Fatalf("isError: %v", res.Content)
	}
	if got := structured(t, res); !sameJSON(t, r.srv.CriteriaDocument(), json.RawMessage(got)) {
		t.Errorf("criteria tool differs from GET /criteria")
	}
	validate(t, "criteria-document.schema.json", structured(t, res))
}

// TestPrecheckTool: a signed pre-check result; a malformed export is the same free refusal by
// rule id as on HTTP.
func TestPrecheckTool(t *testing.T) {
	r := newRig(t)
	s := r.session(nil)
	res := call(t, s, mcp.ToolPrecheck, exportArgs(exportBody), nil)
	if res.IsError {
		t.Fatalf("isError: %s", structured(t, res))
	}
	validate(t, "precheck.schema.json", structured(t, res))
	if txt := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(txt, `"signature":`) {
		t.Errorf("content[0] is not the signed result: %.200s", txt)
	}
	bad := call(t, s, mcp.ToolPrecheck, exportArgs(`{"family":"mem0","form":"full_text","records":[]}`), nil)
	if !bad.IsError {
		t.Fatal("an empty export pre-checked")
	}
	validate(t, "refusal.schema.json", structured(t, bad))
	if !strings.Contains(string(structured(t, bad)), `"records_empty"`) || bad.Meta[mcp.MetaHTTPStatus] != float64(400) {
		t.Errorf("refusal %s meta %v, want records_empty and status 400", structured(t, bad), bad.Meta)
	}
}

// TestAuditUnpaidAndHouse: without payments configured an unpaid audit is an isError result
// stating the price; the house token on the HTTP request runs a house audit.
func TestAuditUnpaidAndHouse(t *testing.T) {
	r := newRig(t)
	res := call(t, r.session(nil), mcp.ToolAudit, exportArgs(exportBody), nil)
	if !res.IsError || res.Meta[mcp.MetaHTTPStatus] != float64(402) {
		t.Fatalf("unpaid audit: isError %v meta %v", res.IsError, res.Meta)
	}
	validate(t, "payment-required.schema.json", structured(t, res))
	house := call(t, r.session(map[string]string{"Authorization": "Bearer " + houseToken}), mcp.ToolAudit, exportArgs(exportBody), nil)
	if house.IsError {
		t.Fatalf("house audit: %s", structured(t, house))
	}
	validate(t, "report.schema.json", stripSignature(t, structured(t, house)))
	wrong := call(t, r.session(map[string]string{"Authorization": "Bearer not-the-token"}), mcp.ToolAudit, exportArgs(exportBody), nil)
	if !wrong.IsError || !strings.Contains(string(structured(t, wrong)), api.RuleHouseTokenInvalid) {
		t.Errorf("a wrong bearer: %s", structured(t, wrong))
	}
}

// stripSignature drops the signing envelope's block (report.schema.json describes the report).
func stripSignature(t *testing.T, b []byte) []byte {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["signature"]; !ok {
		t.Error("the report is unsigned")
	}
	return b
}

// TestCapsInsideToolArguments: the body cap and the record cap apply to the export inside the
// arguments (free refusals naming the cap); the envelope has its own bound, answered before
// anything is parsed.
func TestCapsInsideToolArguments(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]string{"Authorization": "Bearer " + houseToken})
	capBytes := r.ps.BodyCap()
	big := `{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"` + strings.Repeat("x", capBytes) + `","user_id":"a"}]}`
	res := call(t, s, mcp.ToolAudit, exportArgs(big), nil)
	if !res.IsError || res.Meta[mcp.MetaHTTPStatus] != float64(413) || !strings.Contains(string(structured(t, res)), `"body_bytes_cap"`) {
		t.Errorf("over-cap export: isError %v meta %v %s", res.IsError, res.Meta, structured(t, res))
	}
	var recs []string
	for i := range 1001 {
		recs = append(recs, fmt.Sprintf(`{"id":"r%d","content_text":"","user_id":"a"}`, i))
	}
	many := `{"family":"mem0","form":"full_text","records":[` + strings.Join(recs, ",") + `]}`
	res = call(t, s, mcp.ToolAudit, exportArgs(many), nil)
	if !res.IsError || !strings.Contains(string(structured(t, res)), `"record_count_cap"`) {
		t.Errorf("1,001 records: %s", structured(t, res))
	}
	// The envelope: over body cap + overhead, refused with a static 413 before parsing.
	env := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"audit","arguments":{"export":"` + strings.Repeat("y", capBytes+mcp.EnvelopeOverhead) + `"}}}`
	resp := post(t, r.url, env)
	if resp.status != http.StatusRequestEntityTooLarge || string(resp.body) != `{"error":"Request Entity Too Large","kind":"error"}` {
		t.Errorf("over-bound envelope: %d %.200s", resp.status, resp.body)
	}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func post(t *testing.T, url, body string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, res.Header, b}
}

// TestCanariesNeverLeave: export content planted in malformed, refused, unpaid and audited calls
// (and in a body that is not JSON) appears in no answer of the service and in no log line.
func TestCanariesNeverLeave(t *testing.T) {
	r := newRig(t)
	s := r.session(map[string]string{"Authorization": "Bearer " + houseToken})
	const canary = "IDCANARY7f3a"
	for _, export := range []string{
		`{"family":"mem0","form":"full_text","records":[{"id":"` + canary + `","content_text":"` + canary + `","user_id":"` + canary + `"}]}`,
		`{"family":"` + canary + `","form":"full_text","records":[{"id":"a","content_text":"b"}]}`,
		`{"family":"mem0","form":"full_text","records":[{"id":"` + canary + `"},{"id":"` + canary + `","content_text":1}]}`,
		`{"family":"mem0","form":"full_text","manifest":{"declared_scope_keys":"` + canary + `"},"records":[{"id":"a","content_text":"b"}]}`,
	} {
		for _, tool := range []string{mcp.ToolPrecheck, mcp.ToolAudit} {
			res := call(t, s, tool, exportArgs(export), nil)
			b, _ := json.Marshal(res)
			if strings.Contains(string(b), canary) {
				t.Errorf("%s result carries the canary: %.300s", tool, b)
			}
		}
	}
	res := call(t, s, mcp.ToolAudit, map[string]any{"export": canary}, nil)
	if b, _ := json.Marshal(res); !res.IsError || strings.Contains(string(b), canary) {
		t.Errorf("a string export: %s", b)
	}
	for _, raw := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"audit","arguments":{"export":{"x":Q` + canary + `}}}}`, canary} {
		a := post(t, r.url, raw)
		if a.status != http.StatusBadRequest || strings.Contains(string(a.body), canary) || strings.Contains(string(a.body), "Q") {
			t.Errorf("invalid JSON: %d %s", a.status, a.body)
		}
	}
	time.Sleep(10 * time.Millisecond)
	if strings.Contains(r.seen.String(), canary) {
		t.Error("an HTTP answer carried the canary")
	}
	if strings.Contains(r.logs.String(), canary) {
		t.Error("a log line carried the canary")
	}
}

// TestMethodsAndMedia: /mcp is a POST route; other methods are 405 with Allow; a body that is
// not JSON is refused by media type.
func TestMethodsAndMedia(t *testing.T) {
	r := newRig(t)
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		req, _ := http.NewRequest(m, r.url, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "POST, OPTIONS" {
			t.Errorf("%s /mcp: %d Allow %q", m, res.StatusCode, res.Header.Get("Allow"))
		}
	}
	req, _ := http.NewRequest(http.MethodPost, r.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain body: %d, want 415", res.StatusCode)
	}
}

// TestDNSRebinding: on a loopback listener a Host that is not a loopback name is refused
// (403, static) unless the service runs behind a proxy (a public base URL is configured).
func TestDNSRebinding(t *testing.T) {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name   string
		edit   func(*api.Config)
		host   string
		status int
	}{
		{"evil host on loopback", nil, "evil.example.com", http.StatusForbidden},
		{"localhost name", nil, "localhost", http.StatusOK},
		{"behind a proxy", func(c *api.Config) { c.PublicBaseURL = "https://audit.example.com" }, "audit.example.com", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *rig
			if tc.edit != nil {
				r = newRig(t, tc.edit)
			} else {
				r = newRig(t)
			}
			req, _ := http.NewRequest(http.MethodPost, r.url, strings.NewReader(initialize))
			req.Host = tc.host
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Errorf("Host %s: %d, want %d", tc.host, res.StatusCode, tc.status)
			}
		})
	}
}

// TestPrecheckCallerProof: a pre-check naming a caller wallet is answered with the same
// sign-in-with-x challenge as on HTTP (isError, status 401); the proof over it in
// _meta["x402/sign-in-with-x"] makes the call count against that wallet's allowance.
func TestPrecheckCallerProof(t *testing.T) {
	r := newRig(t)
	s := r.session(nil)
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32))
	wallet := solana.PrivateKey(key).PublicKey().String()
	export := `{"caller":"` + wallet + `","family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"x","user_id":"a"}]}`
	first := call(t, s, mcp.ToolPrecheck, exportArgs(export), nil)
	if !first.IsError || first.Meta[mcp.MetaHTTPStatus] != float64(401) {
		t.Fatalf("an unproven caller: isError %v meta %v", first.IsError, first.Meta)
	}
	validate(t, "siwx-challenge.schema.json", structured(t, first))
	var ch api.ProofChallenge
	if err := json.Unmarshal(structured(t, first), &ch); err != nil {
		t.Fatal(err)
	}
	proof, err := siwx.Sign(ch.Extensions[siwx.Extension], key)
	if err != nil {
		t.Fatal(err)
	}
	ok := call(t, s, mcp.ToolPrecheck, exportArgs(export), sdk.Meta{mcp.MetaSignInWithX: proof})
	if ok.IsError {
		t.Fatalf("a proven caller: %s", structured(t, ok))
	}
	validate(t, "precheck.schema.json", structured(t, ok))
	// The nonce is spent: the same proof again is refused with a fresh challenge.
	again := call(t, s, mcp.ToolPrecheck, exportArgs(export), sdk.Meta{mcp.MetaSignInWithX: proof})
	if !again.IsError || !strings.Contains(string(structured(t, again)), siwx.ErrReplayed.Error()) {
		t.Errorf("a replayed proof: %s", structured(t, again))
	}
}

// TestCORSPreflight: a browser MCP client on an allowed origin may send the protocol header.
func TestCORSPreflight(t *testing.T) {
	const origin = "https://agent.example.test"
	r := newRig(t, func(c *api.Config) { c.CORSOrigins = []string{origin} })
	req, _ := http.NewRequest(http.MethodOptions, r.url, nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-protocol-version")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != origin ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Mcp-Protocol-Version") {
		t.Errorf("preflight: %d %v", res.StatusCode, res.Header)
	}
}
