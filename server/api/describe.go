package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/schema"
)

// Machine-readable descriptions of the service: the OpenAPI document, the published JSON
// Schemas it refers to, and the x402 bazaar discovery extension of the paid audit.

// openAPI serves schema/openapi.json with its $refs relative to its served URL.
func (s *Server) openAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, schema.ServedOpenAPI())
}

// schemaFile serves one published JSON Schema with its $id (and so the base of its relative
// $refs) moved to this service's own /schema/ URL.
func (s *Server) schemaFile(c echo.Context) error {
	b, ok := schema.Get(c.Param("name"))
	if !ok {
		return c.JSON(http.StatusNotFound, staticError(http.StatusNotFound))
	}
	b = bytes.ReplaceAll(b, []byte(`"`+schema.IDBase), []byte(`"`+s.absURL(c, "/schema/")))
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, "application/schema+json", b)
}

// MCPOptions is what the /mcp endpoint needs to know of the service.
type MCPOptions struct {
	// BodyCap is the criteria's body cap (the export inside tool arguments meets it).
	BodyCap int
	// BehindProxy is set when the service runs behind a proxy (a public base URL or a trusted
	// proxy is configured): requests then arrive on loopback with the public Host.
	BehindProxy bool
	// Mounts are the further criteria served beside the primary one (Config.Mounts).
	Mounts []MCPMount
}

// MCPMount is what the /mcp endpoint offers tools for of one further criteria: its document at
// GET /criteria/<ID>, its POST <Prefix>/precheck and <Prefix>/audit.
type MCPMount struct {
	ID, Prefix string
	// Paid is set when its audit asks for an x402 payment (a priced criteria with payments on).
	Paid bool
}

// mcpMounts is the MCP view of the configured mounts.
func mcpMounts(ms []Mount) []MCPMount {
	out := make([]MCPMount, 0, len(ms))
	for _, m := range ms {
		if m.Criteria == nil {
			continue
		}
		_, free := m.Payments.(NoPayments)
		out = append(out, MCPMount{ID: m.Criteria.ID(), Prefix: m.Prefix, Paid: m.Payments != nil && !free && m.Criteria.PriceUnits() > 0})
	}
	return out
}

type mcpToolKey struct{}

// WithMCPTool marks a request the MCP endpoint makes on a caller's behalf for tool name: a 402
// then names the resource mcp://tool/<name> and describes the tool for discovery.
func WithMCPTool(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, mcpToolKey{}, name)
}

// MCPTool is the tool name WithMCPTool set ("" for a plain HTTP request).
func MCPTool(ctx context.Context) string {
	name, _ := ctx.Value(mcpToolKey{}).(string)
	return name
}

// BazaarExtension is the PaymentRequired.extensions key of the x402 v2 discovery extension.
const BazaarExtension = "bazaar"

// MCPInputSchema is the published input schema of the MCP tools that take an export.
const MCPInputSchema = "mcp-export-input.schema.json"

// discoveryExample is the body example of the audit's discovery entry: invented records, the
// smallest export that audits.
var discoveryExample = map[string]any{"family": "mem0", "form": "full_text", "records": []any{
	map[string]any{"id": "r1", "content_text": "prefers tea", "user_id": "alice"},
	map[string]any{"id": "r2", "content_text": "prefers tea", "user_id": "bob"}}}

// auditDiscovery is the x402 v2 bazaar extension ({info, schema}) of the paid audit: how to
// call it (a JSON POST, or the MCP tool), and what it returns. The output schema is the
// report's top level with a pointer to the full published schema: the payer's client echoes
// the extension in PAYMENT-SIGNATURE, which is capped at 8 KiB.
func (s *Server) auditDiscovery(c echo.Context) map[string]any {
	reportURL := s.absURL(c, "/schema/report.schema.json")
	output := map[string]any{"type": "json", "format": "signed audit report, " + reportURL}
	outputSchema := map[string]any{"type": "object",
		"properties": map[string]any{"type": map[string]any{"type": "string"},
			"format":  map[string]any{"type": "string"},
			"example": reportSummarySchema(reportURL)},
		"required": []any{"type"}}
	var input, inputSchema map[string]any
	if tool := MCPTool(c.Request().Context()); tool != "" {
		input = map[string]any{"type": "mcp", "toolName": tool, "description": "one scope-hygiene audit of one memory-store export: a signed report of five factors, no composite score",
			"transport": "streamable-http", "inputSchema": mcpInputSchema(), "example": map[string]any{"export": discoveryExample}}
		inputSchema = map[string]any{"type": "object", "properties": map[string]any{
			"type": map[string]any{"type": "string", "const": "mcp"}, "toolName": map[string]any{"type": "string"},
			"description": map[string]any{"type": "string"}, "transport": map[string]any{"type": "string", "enum": []any{"streamable-http", "sse"}},
			"inputSchema": map[string]any{"type": "object"}, "example": map[string]any{"type": "object"}},
			"required": []any{"type", "toolName", "inputSchema"}, "additionalProperties": false}
	} else {
		input = map[string]any{"type": "http", "method": http.MethodPost, "bodyType": "json", "body": discoveryExample}
		inputSchema = map[string]any{"type": "object", "properties": map[string]any{
			"type": map[string]any{"type": "string", "const": "http"}, "method": map[string]any{"type": "string", "enum": []any{"POST", "PUT", "PATCH"}},
			"bodyType": map[string]any{"type": "string", "enum": []any{"json", "form-data", "text"}},
			"body": map[string]any{"type": "object", "description": "one memory-store export { family, form, variant?, manifest?, records }, at most the criteria's body and record caps",
				"required": []any{"family", "form", "records"}},
			"queryParams": map[string]any{"type": "object"}, "headers": map[string]any{"type": "object"}},
			"required": []any{"type", "method", "bodyType", "body"}, "additionalProperties": false}
	}
	return map[string]any{
		"info": map[string]any{"input": input, "output": output},
		"schema": map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
			"properties": map[string]any{"input": inputSchema, "output": outputSchema}, "required": []any{"input"}},
	}
}

// mcpInputSchema is the published input schema of the tools that take an export, as the tool
// lists it: without the $id, which names no address a caller can fetch.
func mcpInputSchema() map[string]any {
	b, ok := schema.Get(MCPInputSchema)
	var v map[string]any
	if !ok || json.Unmarshal(b, &v) != nil {
		panic("api: embedded " + MCPInputSchema + " unreadable") // a build defect
	}
	delete(v, "$id")
	return v
}

// reportSummarySchema is the top level of schema/report.schema.json, pointing at the full one.
func reportSummarySchema(fullURL string) map[string]any {
	return map[string]any{"type": "object", "description": "the signed audit report; full schema: " + fullURL,
		"properties": map[string]any{"kind": map[string]any{"const": "audit_report"}, "verdict_line": map[string]any{"type": "string"},
			"factors": map[string]any{"type": "object"}, "coverage": map[string]any{"type": "object"}, "signature": map[string]any{"type": "object"}},
		"required": []any{"kind", "criteria_id", "criteria_revision", "criteria_digest", "verdict_line", "factors", "coverage", "signature"}}
}

// isSchemaPath reports whether path names a published schema's URL.
func isSchemaPath(path string) bool {
	_, ok := schema.Get(strings.TrimPrefix(path, "/schema/"))
	return ok && strings.HasPrefix(path, "/schema/")
}
