package mcp_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/engine"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
)

// withForgetEnvelope serves memory-forget-envelope/v1 beside v1, as `serve` does.
func withForgetEnvelope(t *testing.T) func(*api.Config) {
	src, err := os.ReadFile("../../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := rules.LoadMutationLog("forget-envelope.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ms.Document()
	if err != nil {
		t.Fatal(err)
	}
	return func(c *api.Config) {
		c.Mounts = append(c.Mounts, api.Mount{Prefix: "/v1/forget-envelope", Criteria: ms, Document: doc,
			Engine: engine.MutLog{MS: ms}, PriceStatus: ms.Criteria().Price.Status})
	}
}

// mutationLog is a small valid memory-forget-envelope/v1 export.
const mutationLog = `{"format":"mutation-log","forget_mode":"transitional","scope_dimensions":["tenant","session"],` +
	`"principals":[{"id":"p-owner","grants":[{"tenant":"t1"}]},{"id":"p-other","grants":[{"tenant":"t1"}]}],` +
	`"events":[{"seq":1,"op":"write","key":{"scope":{"tenant":"t1","session":"s1"},"name":"k1"},"principal":"p-owner","version":1,"value":"v"},` +
	`{"seq":2,"op":"forget","key":{"scope":{"tenant":"t1","session":"s1"},"name":"k1"},"principal":"p-owner","envelope":["p-owner"]}],` +
	`"snapshot":[]}`

// TestForgetEnvelopeTools: the second rule set has its three tools, each answering its own
// route; a malformed log is refused by rule id, and every structuredContent (success and
// isError alike) meets the tool's listed output schema (call checks it).
func TestForgetEnvelopeTools(t *testing.T) {
	r := newRig(t, withForgetEnvelope(t))
	s := r.session(nil)
	res, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range res.Tools {
		names[tool.Name] = true
	}
	crit, pre, aud := mcp.MountTool("/v1/forget-envelope", mcp.ToolCriteria), mcp.MountTool("/v1/forget-envelope", mcp.ToolPrecheck), mcp.MountTool("/v1/forget-envelope", mcp.ToolAudit)
	for _, n := range []string{mcp.ToolCriteria, mcp.ToolPrecheck, mcp.ToolAudit, crit, pre, aud} {
		if !names[n] {
			t.Errorf("no tool %s (have %v)", n, names)
		}
	}
	if len(res.Tools) != 6 {
		t.Errorf("%d tools, want 6", len(res.Tools))
	}

	doc := call(t, s, crit, map[string]any{}, nil)
	var d map[string]any
	if doc.IsError || json.Unmarshal(structured(t, doc), &d) != nil || d["criteria_id"] != "memory-forget-envelope/v1" {
		t.Fatalf("%s: isError %v, %s", crit, doc.IsError, structured(t, doc))
	}
	validate(t, "forget-envelope-criteria-document.schema.json", structured(t, doc))

	p := call(t, s, pre, exportArgs(mutationLog), nil)
	if p.IsError {
		t.Fatalf("%s: %s", pre, structured(t, p))
	}
	validate(t, "forget-envelope-precheck.schema.json", structured(t, p))

	bad := call(t, s, pre, exportArgs(`{"format":"mutation-log","events":[]}`), nil)
	var ref struct {
		Kind string `json:"kind"`
		Rule string `json:"rule"`
	}
	if !bad.IsError || json.Unmarshal(structured(t, bad), &ref) != nil || ref.Rule == "" {
		t.Fatalf("%s of a malformed log: isError %v, %s", pre, bad.IsError, structured(t, bad))
	}
	validate(t, "forget-envelope-refusal.schema.json", structured(t, bad))

	// A second free call within the allowance's interval is a refusal by rule id too.
	again := call(t, s, aud, exportArgs(mutationLog), nil)
	if !again.IsError || json.Unmarshal(structured(t, again), &ref) != nil || ref.Rule != "free_tier_interval" {
		t.Fatalf("%s within the interval: isError %v, %s", aud, again.IsError, structured(t, again))
	}

	a := call(t, newRig(t, withForgetEnvelope(t)).session(nil), aud, exportArgs(mutationLog), nil)
	if a.IsError {
		t.Fatalf("%s: %s", aud, structured(t, a))
	}
	validate(t, "forget-envelope-report.schema.json", structured(t, a))
}

// TestForgetEnvelopeCanariesNeverLeave: key names, scope values, principals and values of a log
// given to the second rule set's tools appear in no result, HTTP answer or log line, whether the
// log is answered or refused.
func TestForgetEnvelopeCanariesNeverLeave(t *testing.T) {
	r := newRig(t, withForgetEnvelope(t))
	s := r.session(nil)
	const canary = "FECANARY51b0"
	good := strings.NewReplacer(`"k1"`, `"`+canary+`"`, `"t1"`, `"`+canary+`t"`, `"p-owner"`, `"`+canary+`p"`, `"v"`, `"`+canary+`v"`).Replace(mutationLog)
	broken := strings.Replace(good, `"snapshot":[]`, `"snapshot":[{"key":"`+canary+`"}]`, 1)
	for i, export := range []string{good, broken, `{"format":"` + canary + `","events":[]}`} {
		for _, tool := range []string{mcp.MountTool("/v1/forget-envelope", mcp.ToolPrecheck), mcp.MountTool("/v1/forget-envelope", mcp.ToolAudit)} {
			res := call(t, s, tool, exportArgs(export), nil)
			if b, _ := json.Marshal(res); strings.Contains(string(b), canary) {
				t.Errorf("log %d, %s: the result carries the canary: %.300s", i, tool, b)
			}
		}
	}
	time.Sleep(10 * time.Millisecond)
	if strings.Contains(r.seen.String(), canary) || strings.Contains(r.logs.String(), canary) {
		t.Error("an HTTP answer or a log line carried the canary")
	}
}

// TestConformanceTool: the conformance suite's error tool is listed only by Handler(true), and
// always answers a tool error with a text (what tools-call-error checks); New never lists it.
func TestConformanceTool(t *testing.T) {
	r := newRig(t, func(c *api.Config) { c.MCP = mcp.Handler(true) })
	res := call(t, r.session(nil), mcp.ToolConformanceError, map[string]any{}, nil)
	if !res.IsError || len(res.Content) == 0 || res.StructuredContent != nil {
		t.Errorf("%s: %+v", mcp.ToolConformanceError, res)
	}
	list, err := newRig(t).session(nil).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == mcp.ToolConformanceError {
			t.Errorf("New lists %s", tool.Name)
		}
	}
}
