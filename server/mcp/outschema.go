package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/scopehygiene/scope-hygiene/schema"
)

// A host validates every structuredContent against the tool's declared output schema, also on
// an isError result (the TypeScript SDK after tools/list), while x402's MCP transport puts the
// PaymentRequired in the structuredContent of an isError result. So a tool's output schema is
// the union (anyOf) of every body its route can answer, as the OpenAPI document lists them,
// plus the static error and, for an audit, the x402 PaymentRequired (with the settlement
// response a failed settlement adds). The union is one self-contained schema: each published
// schema it uses sits under $defs without its $id (hosts compile every tool's schema in one
// validator, where a $id seen twice is an error, and the published $id is no address a host
// can fetch), and every $ref points inside it.

// paymentRequiredDef is the $defs key of the x402 PaymentRequired as the MCP transport carries it.
const paymentRequiredDef = "x402-payment-required"

// toolOutputSchema is the output schema of the tool answered by method and path.
func toolOutputSchema(method, route string, paid bool) (json.RawMessage, error) {
	files, err := routeBodies(method, route)
	if err != nil {
		return nil, err
	}
	files = append(files, "error.schema.json")
	b := &bundle{defs: map[string]any{}}
	var anyOf []any
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f] {
			continue
		}
		seen[f] = true
		key, err := b.add(f)
		if err != nil {
			return nil, err
		}
		anyOf = append(anyOf, map[string]any{"$ref": "#/$defs/" + key})
	}
	if paid {
		def, err := b.mcpPaymentRequired()
		if err != nil {
			return nil, err
		}
		b.defs[paymentRequiredDef] = def
		anyOf = append(anyOf, map[string]any{"$ref": "#/$defs/" + paymentRequiredDef})
	}
	return json.Marshal(map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"type":        "object",
		"description": "The tool's answer: the route's success body, or (with isError) one of its refusals, static errors or the x402 PaymentRequired. Each is a published schema (GET /schema/{name}).",
		"anyOf":       anyOf,
		"$defs":       b.defs,
	})
}

// toolInputSchema is a published input schema without its $id.
func toolInputSchema(name string) (json.RawMessage, error) {
	b := &bundle{defs: map[string]any{}}
	key, err := b.add(name)
	if err != nil {
		return nil, err
	}
	return json.Marshal(b.defs[key])
}

// routeBodies lists the published schema files of every JSON answer the OpenAPI document gives
// for method and route, in status order.
func routeBodies(method, route string) ([]string, error) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(schema.OpenAPI(), &doc); err != nil {
		return nil, fmt.Errorf("mcp: openapi.json: %w", err)
	}
	raw, ok := doc.Paths[route][strings.ToLower(method)]
	if !ok {
		return nil, fmt.Errorf("mcp: openapi.json has no %s %s", method, route)
	}
	var op struct {
		Responses map[string]json.RawMessage `json:"responses"`
	}
	if err := json.Unmarshal(raw, &op); err != nil {
		return nil, fmt.Errorf("mcp: openapi.json %s %s: %w", method, route, err)
	}
	codes := make([]string, 0, len(op.Responses))
	for c := range op.Responses {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	var files []string
	for _, c := range codes {
		resp := op.Responses[c]
		var ref struct {
			Ref string `json:"$ref"`
		}
		if json.Unmarshal(resp, &ref) == nil && strings.HasPrefix(ref.Ref, "#/components/responses/") {
			resp = doc.Components.Responses[strings.TrimPrefix(ref.Ref, "#/components/responses/")]
		}
		var v any
		if err := json.Unmarshal(resp, &v); err != nil {
			return nil, fmt.Errorf("mcp: openapi.json %s %s %s: %w", method, route, c, err)
		}
		n := len(files)
		walkRefs(v, func(r string) {
			if f, _, _ := strings.Cut(r, "#"); strings.HasSuffix(f, schema.Suffix) {
				files = append(files, path.Base(f))
			}
		})
		// A body the union would leave out (an inline schema) fails the build, not a host.
		if m, _ := v.(map[string]any); m["content"] != nil && len(files) == n {
			return nil, fmt.Errorf("mcp: openapi.json %s %s %s: a body that is no published schema", method, route, c)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("mcp: openapi.json names no body of %s %s", method, route)
	}
	return files, nil
}

// walkRefs calls f with every $ref string in v.
func walkRefs(v any, f func(string)) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := t[k].(string); ok && k == "$ref" {
				f(s)
				continue
			}
			walkRefs(t[k], f)
		}
	case []any:
		for _, e := range t {
			walkRefs(e, f)
		}
	}
}

// bundle gathers published schemas under $defs, keyed by file name without its suffix.
type bundle struct{ defs map[string]any }

// add puts the schema file name (and the files it refers to) under $defs and returns its key.
func (b *bundle) add(name string) (string, error) {
	key := strings.TrimSuffix(name, schema.Suffix)
	if _, ok := b.defs[key]; ok {
		return key, nil
	}
	raw, ok := schema.Get(name)
	if !ok {
		return "", fmt.Errorf("mcp: no published schema %s", name)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("mcp: schema %s: %w", name, err)
	}
	delete(v, "$id")
	delete(v, "$schema")
	b.defs[key] = v // before rewriting: a schema that refers to itself is not added twice
	var err error
	b.defs[key], err = b.rewrite(v, key)
	return key, err
}

// rewrite points every $ref of the schema stored under key into the bundle.
func (b *bundle) rewrite(v any, key string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok && k == "$ref" {
				file, frag, _ := strings.Cut(s, "#")
				target := key
				if file != "" {
					var err error
					if target, err = b.add(path.Base(file)); err != nil {
						return nil, err
					}
				}
				t[k] = "#/$defs/" + target + frag
				continue
			}
			r, err := b.rewrite(e, key)
			if err != nil {
				return nil, err
			}
			t[k] = r
		}
	case []any:
		for i, e := range t {
			r, err := b.rewrite(e, key)
			if err != nil {
				return nil, err
			}
			t[i] = r
		}
	}
	return v, nil
}

// mcpPaymentRequired is the decoded PAYMENT-REQUIRED header (payment-required.schema.json's
// $defs.header) that may also carry the settlement response of a failed settlement.
func (b *bundle) mcpPaymentRequired() (map[string]any, error) {
	key, err := b.add("payment-required.schema.json")
	if err != nil {
		return nil, err
	}
	pr, _ := b.defs[key].(map[string]any)
	defs, _ := pr["$defs"].(map[string]any)
	header, _ := defs["header"].(map[string]any)
	props, _ := header["properties"].(map[string]any)
	if props == nil {
		return nil, errors.New("mcp: payment-required.schema.json has no $defs.header properties")
	}
	out := make(map[string]any, len(header))
	for k, v := range header {
		out[k] = v
	}
	p := make(map[string]any, len(props)+1)
	for k, v := range props {
		p[k] = v
	}
	p[MetaPaymentResponse] = map[string]any{"type": "object",
		"description": "the settlement response of a failed settlement: success false, errorReason, transaction, network"}
	out["properties"] = p
	out["description"] = "The x402 v2 PaymentRequired (the decoded PAYMENT-REQUIRED header) of an unpaid or failed paid call, as x402's MCP transport carries it."
	return out, nil
}
