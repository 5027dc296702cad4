package evaluator_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scopehygiene/scope-hygiene/evaluator"
)

// Every table-test output is validated where it is produced (audit, refuse, validateOutput in
// helpers_test.go). This file validates the committed corpus's outputs and expectations, and
// checks that the schemas reject what the contract forbids.

func subSchema(t *testing.T, name, pointer string) *jsonschema.Schema {
	t.Helper()
	loadSchemas(t)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	b, err := os.ReadFile(filepath.Join("..", "schema", name+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	url := "https://scope-hygiene.invalid/schema/" + name + ".schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url + "#" + pointer)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validAgainst(s *jsonschema.Schema, v any) error {
	b, _ := json.Marshal(v)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

type corpusCase struct {
	Name       string          `json:"name"`
	Body       json.RawMessage `json:"body"`
	BodyBase64 string          `json:"body_base64"`
	Expected   struct {
		Refusal  map[string]any `json:"refusal"`
		Precheck map[string]any `json:"precheck"`
		Audit    map[string]any `json:"audit"`
	} `json:"expected"`
}

func TestSchemaCorpus(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("..", "corpus", "cases", "*.json"))
	if len(files) == 0 {
		t.Skip("no committed corpus cases")
	}
	sort.Strings(files)
	ps := shipped(t)
	factors := subSchema(t, "report", "/properties/factors")
	coverage := subSchema(t, "report", "/$defs/coverage")
	preFactors := subSchema(t, "precheck", "/properties/factors")
	matrixRow := subSchema(t, "precheck", "/properties/matrix_row")
	counts := map[string]int{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs corpusCase
		if err := json.Unmarshal(raw, &cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var body []byte
		if cs.BodyBase64 != "" {
			if body, err = base64.StdEncoding.DecodeString(cs.BodyBase64); err != nil {
				t.Fatalf("%s: %v", cs.Name, err)
			}
		} else {
			var v any
			if err := json.Unmarshal(cs.Body, &v); err != nil {
				t.Fatalf("%s: %v", cs.Name, err)
			}
			body, _ = json.Marshal(v)
		}
		rep, ref, err := evaluator.Audit(ps, body, now)
		if err != nil {
			t.Errorf("%s: audit error %v", cs.Name, err)
			continue
		}
		pre, ref2, err := evaluator.Precheck(ps, body, now)
		if err != nil {
			t.Errorf("%s: precheck error %v", cs.Name, err)
			continue
		}
		check := func(kind string, v any) {
			if err := schemaCheck(t, kind, marshal(t, v)); err != nil {
				t.Errorf("%s: %s output does not validate: %v", cs.Name, kind, err)
			}
			counts[kind]++
		}
		if ref != nil {
			check("refusal", ref)
			check("refusal", ref2)
		} else {
			check("report", rep)
			check("precheck", pre)
		}
		// The corpus's own expectations have the contract's shapes too.
		if e := cs.Expected.Refusal; e != nil {
			if _, ok := e["kind"]; !ok {
				e["kind"] = "refusal"
			}
			if err := validAgainst(loadSchemas(t)["refusal"], e); err != nil {
				t.Errorf("%s: expected refusal does not validate: %v", cs.Name, err)
			}
		}
		if e := cs.Expected.Audit; e != nil {
			if err := validAgainst(factors, e["factors"]); err != nil {
				t.Errorf("%s: expected audit factors do not validate: %v", cs.Name, err)
			}
			if err := validAgainst(coverage, e["coverage"]); err != nil {
				t.Errorf("%s: expected coverage does not validate: %v", cs.Name, err)
			}
		}
		if e := cs.Expected.Precheck; e != nil {
			if err := validAgainst(preFactors, e["factors"]); err != nil {
				t.Errorf("%s: expected precheck factors do not validate: %v", cs.Name, err)
			}
			if err := validAgainst(matrixRow, e["matrix_row"]); err != nil {
				t.Errorf("%s: expected matrix row does not validate: %v", cs.Name, err)
			}
		}
	}
	t.Logf("validated %d corpus cases: %v", len(files), counts)
}

// mutate returns a deep copy of doc with f applied.
func mutate(t *testing.T, doc []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	return marshal(t, m)
}

func obj(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

func TestSchemaRejects(t *testing.T) {
	t.Parallel()
	// A report with every factor ASSESSABLE and clusters of each class.
	full := marshal(t, audit(t, X("mem0",
		R("a", "k1", "user_id", "alice", "shared", true), R("b", "k1", "user_id", "bob", "shared", true),
		R("c", "k2", "user_id", "alice"), R("d", "k2", "user_id", "bob"), R("e", "k2", "user_id", "bob"),
		R("f", "k3", "user_id", "alice", "shared", true, "source", "s1"), R("g", "k3", "user_id", "bob", "source", "s2"),
		R("h", "x", "attributed_scope", "zz"))))
	// A report with NOT ASSESSABLE factors, including the keep-counts case.
	na := marshal(t, audit(t, X("letta", L("t", "x", at("a1"), "is_template", true))))
	generic := marshal(t, audit(t, X("generic", R("a", "x"))))
	pre, _, _ := evaluator.Precheck(shipped(t), marshal(t, X("mem0", R("a", "x"))), now)
	preDoc := marshal(t, pre)
	refDoc := marshal(t, refuse(t, M{"family": "mem0", "form": "full_text", "records": []any{R("a", "x"), 5}}))
	capDoc := marshal(t, refuse(t, bytes.Repeat([]byte(" "), 262145)))

	for _, good := range []struct {
		kind string
		doc  []byte
	}{{"report", full}, {"report", na}, {"report", generic}, {"precheck", preDoc}, {"refusal", refDoc}, {"refusal", capDoc}} {
		if err := schemaCheck(t, good.kind, good.doc); err != nil {
			t.Fatalf("baseline %s does not validate: %v\n%s", good.kind, err, good.doc)
		}
	}
	type row struct {
		name string
		kind string
		doc  []byte
	}
	rows := []row{
		{"report/extra-top-level-member", "report", mutate(t, full, func(m map[string]any) { m["score"] = 7 })},
		{"report/missing-verdict", "report", mutate(t, full, func(m map[string]any) { delete(m, "verdict_line") })},
		{"report/composite-in-factors", "report", mutate(t, full, func(m map[string]any) { obj(m, "factors")["composite"] = 1 })},
		{"report/unknown-status", "report", mutate(t, full, func(m map[string]any) { obj(m, "factors", "duplicates")["status"] = "CONDITIONAL" })},
		{"report/rate-value-pattern", "report", mutate(t, full, func(m map[string]any) { obj(m, "factors", "unscoped_rate", "rate")["value"] = "12.50%" })},
		{"report/rate-value-no-decimal", "report", mutate(t, full, func(m map[string]any) { obj(m, "factors", "unscoped_rate", "rate")["value"] = "12%" })},
		{"report/zero-denominator-printed-as-zero", "report", mutate(t, full, func(m map[string]any) {
			obj(m, "factors", "duplicates")["rate"] = map[string]any{"numerator": 0, "denominator": 0, "value": "0.0%"}
		})},
		{"report/not-assessable-rate-without-reason", "report", mutate(t, full, func(m map[string]any) {
			obj(m, "factors", "duplicates")["rate"] = map[string]any{"numerator": 0, "denominator": 0, "value": "NOT ASSESSABLE"}
		})},
		{"report/not-assessable-factor-with-number", "report", mutate(t, generic, func(m map[string]any) { obj(m, "factors", "cross_scope_clusters")["undeclared"] = 0 })},
		{"report/not-assessable-factor-with-rate", "report", mutate(t, generic, func(m map[string]any) {
			obj(m, "factors", "unscoped_rate")["rate"] = map[string]any{"numerator": 0, "denominator": 1, "value": "0.0%"}
		})},
		{"report/keep-counts-with-rate", "report", mutate(t, na, func(m map[string]any) {
			obj(m, "factors", "scope_presence")["rate"] = map[string]any{"numerator": 0, "denominator": 0, "value": "NOT ASSESSABLE", "reason": "no eligible records"}
		})},
		{"report/keep-counts-only-for-zero-denominator", "report", mutate(t, generic, func(m map[string]any) {
			sp := obj(m, "factors", "scope_presence")
			sp["scoped"], sp["eligible"] = 0, 0
		})},
		{"report/unknown-reason", "report", mutate(t, generic, func(m map[string]any) { obj(m, "factors", "scope_conflicts")["reason"] = "no data" })},
		{"report/conflicts-without-subcheck", "report", mutate(t, full, func(m map[string]any) { delete(obj(m, "factors", "scope_conflicts", "by_subcheck"), "history_scope") })},
		{"report/cluster-wrong-statement", "report", mutate(t, full, func(m map[string]any) {
			cl := obj(m, "factors", "cross_scope_clusters")["clusters"].([]any)
			for _, c := range cl {
				if c.(map[string]any)["classification"] == "undeclared" {
					c.(map[string]any)["statement"] = "proof of a runtime leak"
				}
			}
		})},
		{"report/marked-shared-called-legitimate", "report", mutate(t, full, func(m map[string]any) {
			cl := obj(m, "factors", "cross_scope_clusters")["clusters"].([]any)
			for _, c := range cl {
				if c.(map[string]any)["classification"] == "marked_shared" {
					c.(map[string]any)["statement"] = "verified legitimate"
				}
			}
		})},
		{"report/ambiguous-reason-mismatch", "report", mutate(t, full, func(m map[string]any) {
			cl := obj(m, "factors", "cross_scope_clusters")["clusters"].([]any)
			for _, c := range cl {
				if c.(map[string]any)["classification"] == "ambiguous" {
					c.(map[string]any)["reason"] = "partial coverage"
				}
			}
		})},
		{"report/cluster-content-hash", "report", mutate(t, full, func(m map[string]any) {
			obj(m, "factors", "cross_scope_clusters")["clusters"].([]any)[0].(map[string]any)["content_hash"] = "abc"
		})},
		{"report/member-extra", "report", mutate(t, full, func(m map[string]any) {
			c := obj(m, "factors", "cross_scope_clusters")["clusters"].([]any)[0].(map[string]any)
			c["members"].([]any)[0].(map[string]any)["content"] = "x"
		})},
		{"report/verdict-composite", "report", mutate(t, full, func(m map[string]any) { m["verdict_line"] = m["verdict_line"].(string) + " · score: 7" })},
		{"report/verdict-zero-for-not-assessable", "report", mutate(t, generic, func(m map[string]any) {
			m["verdict_line"] = strings.Replace(m["verdict_line"].(string), "unscoped: NOT ASSESSABLE", "unscoped: 0", 1)
		})},
		{"report/check-end-offset", "report", mutate(t, full, func(m map[string]any) { m["check_end"] = "2026-11-30T12:00:00+01:00" })},
		{"report/coverage-extra", "report", mutate(t, full, func(m map[string]any) { obj(m, "coverage")["content_hashes"] = []any{} })},
		{"report/duplicates-partition", "report", mutate(t, full, func(m map[string]any) {
			obj(m, "factors", "duplicates")["clusters"].([]any)[0].(map[string]any)["partition"] = "shared"
		})},
		{"precheck/factor-value", "precheck", mutate(t, preDoc, func(m map[string]any) { obj(m, "factors", "unscoped_rate")["rate"] = "0.0%" })},
		{"precheck/finding", "precheck", mutate(t, preDoc, func(m map[string]any) { m["clusters"] = []any{} })},
		{"precheck/matrix-row-missing-factor", "precheck", mutate(t, preDoc, func(m map[string]any) { delete(obj(m, "matrix_row"), "duplicates") })},
		{"precheck/matrix-status", "precheck", mutate(t, preDoc, func(m map[string]any) { obj(m, "matrix_row", "duplicates")["status"] = "MAYBE" })},
		{"precheck/duplicates-not-assessable", "precheck", mutate(t, preDoc, func(m map[string]any) {
			obj(m, "factors")["duplicates"] = map[string]any{"status": "NOT ASSESSABLE", "reason": "no eligible records"}
		})},
		{"refusal/extra-member", "refusal", mutate(t, refDoc, func(m map[string]any) { m["message"] = "record 1 is 5" })},
		{"refusal/record-rule-without-index", "refusal", mutate(t, refDoc, func(m map[string]any) { delete(m, "record_index") })},
		{"refusal/unknown-rule", "refusal", mutate(t, refDoc, func(m map[string]any) { m["rule"] = "bad_export" })},
		{"refusal/index-on-top-level-rule", "refusal", mutate(t, refDoc, func(m map[string]any) { m["rule"] = "family_required" })},
		{"refusal/cap-without-observed", "refusal", mutate(t, capDoc, func(m map[string]any) { delete(m, "observed") })},
		{"refusal/cap-value", "refusal", mutate(t, capDoc, func(m map[string]any) { m["cap"] = 100 })},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			if err := schemaCheck(t, r.kind, r.doc); err == nil {
				t.Fatalf("schema accepted %s", r.doc)
			}
		})
	}
}
