package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/apidoc"
)

// Every body the service sends validates against a published JSON Schema (schema/). The harness
// passes every response it sees through checkBody, so each API test checks the real bodies of the
// paths it exercises; a JSON body that no published schema covers fails the test.

var (
	schemaOnce sync.Once
	schemas    map[string]*jsonschema.Schema
	schemaErr  error
)

const schemaBase = "https://scope-hygiene.invalid/schema/"

func publishedSchemas(t testing.TB) map[string]*jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		names := []string{"report", "precheck", "refusal", "service-refusal", "payment-required", "error", "healthz", "criteria-document", "siwx-challenge", "payment-error", "payment-pending", "health", "service-limit",
			"criteria-index", "forget-envelope-report", "forget-envelope-precheck", "forget-envelope-refusal", "forget-envelope-criteria-document"}
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join("..", "..", "schema", n+".schema.json"))
			if err != nil {
				schemaErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				schemaErr = err
				return
			}
			if err := c.AddResource(schemaBase+n+".schema.json", doc); err != nil {
				schemaErr = err
				return
			}
		}
		schemas = map[string]*jsonschema.Schema{}
		for _, n := range names {
			s, err := c.Compile(schemaBase + n + ".schema.json")
			if err != nil {
				schemaErr = err
				return
			}
			schemas[n] = s
		}
	})
	if schemaErr != nil {
		t.Fatalf("published schemas: %v", schemaErr)
	}
	return schemas
}

// serviceRules are the refusals the service answers itself (service-refusal.schema.json).
var serviceRules = map[string]bool{api.RuleCallerInvalid: true, api.RuleFreeTierDaily: true,
	api.RuleFreeTierInterval: true, api.RuleHouseTokenInvalid: true, api.RuleCallerNoTokenAccount: true,
	api.RuleProofBudget: true}

// schemaFor names the published schema of one response, "" for the bodies that are not JSON.
func schemaFor(method, path string, r response) (string, string) {
	switch {
	case method == http.MethodHead:
		// net/http drops a HEAD answer's body on the wire; the recorder keeps what was written.
		return "", ""
	case r.Status == http.StatusNotModified || r.Status == http.StatusNoContent:
		if len(r.Body) != 0 {
			return "", "a body on a bodiless answer"
		}
		return "", ""
	case path == "/" || strings.HasPrefix(path, "/assets/"):
		// The web page and its files (web/): HTML, script, styles and WebAssembly, not API bodies.
		return "", ""
	case path == "/metrics" && r.Status == http.StatusOK:
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
			return "", "metrics are not the text exposition format"
		}
		return "", ""
	case r.Status == http.StatusNotFound && string(r.Body) == api.NotCovered:
		return "", ""
	case path == "/openapi.json" && r.Status == http.StatusOK:
		// The OpenAPI document itself: apidoc.Load validates it as OpenAPI 3.1.
		return "", ""
	case strings.HasPrefix(path, "/schema/") && r.Status == http.StatusOK:
		// A published JSON Schema: TestOpenAPIAndSchemasServed compiles each one served.
		if r.Header.Get("Content-Type") != "application/schema+json" {
			return "", "a schema not served as application/schema+json"
		}
		return "", ""
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return "", "a body that is neither JSON nor one of the published text answers"
	}
	var probe struct {
		Kind   string          `json:"kind"`
		Rule   string          `json:"rule"`
		Status string          `json:"status"`
		Detail json.RawMessage `json:"detail"`
	}
	_ = json.Unmarshal(r.Body, &probe)
	fe := strings.HasPrefix(path, "/v1/forget-envelope/")
	switch {
	case path == "/criteria" && r.Status == http.StatusOK:
		return "criteria-document", ""
	case path == "/criteria/index" && r.Status == http.StatusOK:
		return "criteria-index", ""
	case path == "/criteria/memory-scope-hygiene/v1" && r.Status == http.StatusOK:
		return "criteria-document", ""
	case path == "/criteria/memory-forget-envelope/v1" && r.Status == http.StatusOK:
		return "forget-envelope-criteria-document", ""
	case fe && probe.Kind == "audit_report":
		return "forget-envelope-report", ""
	case fe && probe.Kind == "precheck_result":
		return "forget-envelope-precheck", ""
	case fe && probe.Kind == "refusal" && !serviceRules[probe.Rule] && probe.Rule != api.RuleCallerUnproven:
		return "forget-envelope-refusal", ""
	case path == "/healthz" && r.Status == http.StatusOK:
		return "healthz", ""
	case path == "/livez" || path == "/readyz":
		return "health", ""
	case probe.Kind == "audit_report":
		return "report", ""
	case probe.Kind == "precheck_result":
		return "precheck", ""
	case probe.Kind == "refusal" && probe.Rule == api.RuleCallerUnproven:
		return "siwx-challenge", ""
	case r.Status == http.StatusAccepted && probe.Status == "pending":
		return "payment-pending", ""
	case probe.Kind == "refusal" && serviceRules[probe.Rule]:
		return "service-refusal", ""
	case probe.Kind == "refusal":
		return "refusal", ""
	case probe.Kind == "payment_required":
		return "payment-required", ""
	case probe.Kind == "error" && probe.Detail != nil:
		return "payment-error", ""
	case probe.Kind == "error":
		return "error", ""
	}
	return "", "a JSON body no published schema covers"
}

// checkBody validates one real response against its published schema.
func checkBody(t testing.TB, method, path string, r response) {
	t.Helper()
	name, problem := schemaFor(method, strings.SplitN(path, "?", 2)[0], r)
	if problem != "" {
		t.Errorf("%s %s answered %d with %s: %.200q", method, path, r.Status, problem, r.Body)
		return
	}
	if name == "" {
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
	if err == nil {
		err = publishedSchemas(t)[name].Validate(inst)
	}
	if err != nil {
		t.Errorf("%s %s answered %d with a body that does not validate against schema/%s.schema.json: %v\n%.400s", method, path, r.Status, name, err, r.Body)
	}
	if (name == "report" || name == "precheck" || name == "forget-envelope-report" || name == "forget-envelope-precheck") && !bytes.Contains(r.Body, []byte(`"signature":`)) {
		t.Errorf("%s %s answered an unsigned %s", method, path, name)
	}
}

// checkOpenAPI validates one real answer against schema/openapi.json: its status, protocol
// headers and body as the document describes them for the operation. Paths the document does not
// describe (NOT COVERED, static 404) are covered by checkBody alone.
func checkOpenAPI(t testing.TB, req *http.Request, r response) {
	t.Helper()
	apidoc.CheckT(t, req, r.Status, r.Header, r.Body)
}

// TestSchemasRejectWhatTheyMust: the response schemas are not rubber stamps.
func TestSchemasRejectWhatTheyMust(t *testing.T) {
	s := publishedSchemas(t)
	for _, tc := range []struct{ schema, body string }{
		{"service-refusal", `{"kind":"refusal","rule":"free_tier_daily"}`},
		{"service-refusal", `{"kind":"refusal","rule":"caller_invalid","caller":"IDCANARY"}`},
		{"payment-required", `{"kind":"payment_required","op":"audit","price":{"usdc_units":50000,"label":"$0.05"},"score":1}`},
		{"error", `{"kind":"error","error":"{\"records\":[\"IDCANARY\"]}"}`},
		{"healthz", `{"status":"ok"}`},
		{"report", `{"kind":"audit_report","signature":{"alg":"Ed25519","key_id":"ed25519:0123456789abcdef","value":"x"}}`},
		{"criteria-document", `{"criteria_id":"memory-scope-hygiene/v1"}`},
		{"forget-envelope-refusal", `{"kind":"refusal","rule":"event_key_invalid","index":3,"name":"IDCANARY"}`},
		{"forget-envelope-refusal", `{"kind":"refusal","rule":"event_key_invalid"}`},
		{"forget-envelope-precheck", `{"kind":"precheck_result","service":"scope-hygiene","criteria_id":"memory-forget-envelope/v1","criteria_revision":"1.0.0","criteria_digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","op":"precheck","forget_mode":"transitional","events":1,"factors":{"forget_envelopes":{"status":"ASSESSABLE","forgets":1}},"checked_at":"2026-12-01T00:00:00Z"}`},
		{"criteria-index", `{"kind":"criteria_index","criteria":[]}`},
		{"forget-envelope-criteria-document", `{"kind":"mutation-log","criteria_id":"memory-forget-envelope/v1"}`},
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if s[tc.schema].Validate(inst) == nil {
			t.Errorf("schema/%s.schema.json accepts %s", tc.schema, tc.body)
		}
	}
}
