package evaluator_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// closedRefusals is the closed set of refusal rule ids: the published codes plus the body cap.
var closedRefusals = func() map[string]bool {
	m := map[string]bool{evaluator.BodyBytesCap: true}
	for _, c := range rules.RefusalCodes {
		m[c] = true
	}
	return m
}()

// chooser reads decisions from fuzz bytes.
type chooser struct {
	b []byte
	i int
}

func (c *chooser) n(k int) int {
	if len(c.b) == 0 || k <= 1 {
		return 0
	}
	v := int(c.b[c.i%len(c.b)]) + c.i/len(c.b)
	c.i++
	return v % k
}

func (c *chooser) pick(vals ...any) any { return vals[c.n(len(vals))] }

// structured builds a mostly well-formed export from fuzz bytes, so that the fuzzer reaches the
// factor mechanics (clusters, pointers, liveness) and not only the decoder.
func structured(data []byte) []byte {
	c := &chooser{b: data}
	family := c.pick("mem0", "zep_graphiti", "letta", "generic").(string)
	form := c.pick("full_text", "hash_only", "full_text").(string)
	ids := []any{"a", "b", "c", "d", "e", "f", "g"}
	scopes := []any{"s1", "s2", "global", "", 5, nil, "GLOBAL", "s1/s2"}
	contents := []any{"x", "y", "x", "", 3}
	n := 1 + c.n(8)
	var recs []any
	for i := 0; i < n; i++ {
		r := M{"id": ids[(i+c.n(2))%len(ids)]}
		if c.n(10) == 0 {
			r["id"] = c.pick(nil, 5, "a")
		}
		field := "content_text"
		if form == "hash_only" {
			field = "content_hash"
		}
		if c.n(12) != 0 {
			r[field] = c.pick(contents...)
		}
		switch family {
		case "letta":
			r["attached_to"] = c.pick([]any{c.pick(scopes...)}, []any{c.pick(scopes...), c.pick(scopes...)}, nil, "s1", []any{})
			r["is_template"] = c.pick(nil, true, false, "true")
			r["template_id"] = c.pick(nil, "t1", "t2", "")
			r["base_template_id"] = c.pick(nil, "b1")
			r["file_id"] = c.pick(nil, "f1")
			r["source_passage"] = c.pick(nil, true)
		default:
			for _, k := range []string{"user_id", "agent_id", "run_id", "session_id", "group_id", "graph_id", "user"} {
				if c.n(3) == 0 {
					r[k] = c.pick(scopes...)
				}
			}
		}
		r["shared"] = c.pick(nil, true, false, "true", 1)
		r["metadata"] = c.pick(nil, M{"shared": c.pick(true, false, "x", nil)}, M{"sharing": "global"}, "m")
		r["sharing"] = c.pick(nil, "global", "GLOBAL")
		r["origin_claim_id"] = c.pick(nil, nil, c.pick(ids...), "gone", 5)
		r["origin_scope"] = c.pick(nil, nil, c.pick(scopes...))
		r["supersedes"] = c.pick(nil, nil, c.pick(ids...), []any{c.pick(ids...), "gone"}, 5)
		r["state"] = c.pick(nil, "pending", "expired", "superseded", "Expired")
		r["lifecycle_state"] = c.pick(nil, "deleted")
		r["is_deleted"] = c.pick(nil, true, "true")
		r["invalid_at"] = c.pick(nil, nil, "t")
		r["expired_at"] = c.pick(nil, nil, "t")
		r["replaced_by"] = c.pick(nil, nil, "a", "")
		r["source"] = c.pick(nil, "s", "t", "", 5)
		r["attributed_scope"] = c.pick(nil, "s1", 5, "")
		r["history_scope"] = c.pick(nil, "s2")
		r["storage_scope"] = c.pick(nil, "s1", 5)
		r["episode_group_ids"] = c.pick(nil, "s1", []any{"s1", "s2"}, []any{5})
		r["endpoint_group_ids"] = c.pick(nil, []any{"s1"})
		recs = append(recs, c.pick(r, r, r, r, r, r, r, 5))
	}
	x := M{"family": family, "form": form, "records": recs}
	if c.n(3) == 0 {
		x["variant"] = c.pick("platform", "oss", "graphiti", "zep_cloud", "mixed", "blocks", "passages", "claim-jsonl", 5)
	}
	if c.n(2) == 0 {
		x["manifest"] = M{
			"declared_scope_keys": c.pick(nil, []any{"user"}, []any{"user", "user_id"}, []any{}, "user", []any{5}),
			"global_scopes":       c.pick(nil, []any{"s1", "zz"}, "s1"),
			"global_content_keys": c.pick(nil, []any{"x"}, []any{5}),
			"global_claim_ids":    c.pick(nil, []any{"a", "gone"}),
			"private_scopes":      c.pick(nil, []any{"s1"}),
			"scope_filtered":      c.pick(nil, true, "true"),
			"multi_scope":         c.pick(nil, true, false),
		}
	}
	b, _ := json.Marshal(x)
	return b
}

// checkOutcome requires a report or a refusal from the closed set, never an error or a panic,
// with Audit and Precheck agreeing, and every output valid against its schema.
func checkOutcome(t *testing.T, body []byte) {
	ps := shipped(t)
	rep, ref, err := evaluator.Audit(ps, body, now)
	if err != nil {
		t.Fatalf("Audit error for the shipped criteria: %v", err)
	}
	pre, ref2, err := evaluator.Precheck(ps, body, now)
	if err != nil {
		t.Fatalf("Precheck error for the shipped criteria: %v", err)
	}
	if (rep == nil) == (ref == nil) || (pre == nil) == (ref2 == nil) {
		t.Fatalf("want exactly one of report/refusal: %v %v / %v %v", rep != nil, ref != nil, pre != nil, ref2 != nil)
	}
	if ref != nil {
		if !closedRefusals[ref.Rule] || ref2 == nil || ref2.Rule != ref.Rule || iv(ref.RecordIndex) != iv(ref2.RecordIndex) {
			t.Fatalf("refusal %+v / %+v", ref, ref2)
		}
		validateOutput(t, "refusal", ref)
		return
	}
	if pre.Records != rep.Records || pre.Live != rep.Live {
		t.Fatalf("precheck %d/%d audit %d/%d", pre.Records, pre.Live, rep.Records, rep.Live)
	}
	for f, st := range auditStatuses(rep) {
		if pre.Factors[f] != st {
			t.Fatalf("%s: precheck %+v audit %+v", f, pre.Factors[f], st)
		}
	}
	if !strings.HasPrefix(rep.VerdictLine, "MEMORY SCOPE-HYGIENE — records: ") {
		t.Fatalf("verdict %q", rep.VerdictLine)
	}
	validateOutput(t, "report", rep)
	validateOutput(t, "precheck", pre)
}

func FuzzAudit(f *testing.F) {
	seeds := []any{
		X("mem0", ca("shared", true), cb("origin_claim_id", "a"), cc("source", "s"), gl("g")),
		hashOnly(X("mem0", ca(), cb(), R("u", "same"))),
		with(X("zep_graphiti", R("a", "x", "group_id", "g1", "episode_group_ids", []any{"g2"}), R("b", "x", "group_id", "g2")), "variant", "zep_cloud"),
		X("letta", L("a", "x", at("a1", "a2")), L("b", "x", at("a3"), "template_id", "t"), L("t", "x", at("a4"), "is_template", true), R("p", "y", "file_id", "f")),
		manifest(X("generic", R("a", "x", "user", "u1", "state", "pending"), R("b", "x", "user", "u2")), M{"declared_scope_keys": at("user"), "global_claim_ids": at("a")}),
		X("generic", R("a", "x"), R("b", "x")),
		canaryExport("mem0", "platform", "full_text"),
		canaryExport("letta", "mixed", "hash_only"),
		canaryExport("zep_graphiti", "graphiti", "full_text"),
		canaryExport("generic", "claim-jsonl", "hash_only"),
	}
	for _, s := range seeds {
		f.Add(marshal(f, s))
	}
	for _, raw := range []string{
		``, `{}`, `[]`, `null`, `{"family":"mem0"}`, `{"family":"mem0","form":"full_text","records":[]}`,
		`{"family":"mem0","form":"full_text","records":[5,{"id":1}]}`,
		"\xef\xbb\xbf{}", `{"a":1,"a":2}`, `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"\ud800"}]}`,
		`{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":` + nest(62) + `}]}`,
		`{"family":"letta","form":"hash_only","records":[{"id":"a","content_hash":"h","attached_to":"x"}]} x`,
	} {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkOutcome(t, body)
		checkOutcome(t, structured(body))
	})
}
