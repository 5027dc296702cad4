package evaluator_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scopehygiene/scope-hygiene/evaluator"
)

// Canaries. Content canaries (CNTCANARY...) are planted in every content and free-text member and
// must never appear in any output. Identity canaries (IDCANARY...: record ids, scope values,
// declared key names) may appear in audit reports by design, but never in pre-check results or
// refusals.
const (
	contentMark  = "CNTCANARY"
	identityMark = "IDCANARY"
)

type canaries struct{ n atomic.Int64 }

func (c *canaries) content() string { return fmt.Sprintf("%s%04dQZ", contentMark, c.n.Add(1)) }
func (c *canaries) ident() string   { return fmt.Sprintf("%s%04dQZ", identityMark, c.n.Add(1)) }

// canaryExport builds an export of a family and form whose every free-text member is a canary.
func canaryExport(family, variant, form string) M {
	var c canaries
	id := func(n int) string { return fmt.Sprintf("%s-REC%d", identityMark, n) }
	s1, s2 := c.ident(), c.ident()
	key := c.ident()
	shared := c.content() // the clustered content
	scope := func(s string) []any {
		switch family {
		case "mem0":
			return []any{"user_id", s}
		case "zep_graphiti":
			return []any{"group_id", s}
		case "letta":
			return []any{"attached_to", []any{s}}
		}
		return []any{key, s}
	}
	free := func() []any {
		kv := []any{
			"metadata", M{"note": c.content(), "nested": M{"deep": []any{c.content(), M{"k": c.content()}}}, c.content(): c.content()},
			"source", c.content(), "attributed_scope", c.content(), "history_scope", c.content(), "storage_scope", c.content(),
			"episode_group_ids", []any{c.content(), c.content()}, "endpoint_group_ids", c.content(),
			"record_class", c.content(), "template_id", c.content(), "base_template_id", c.content(),
			"sharing", c.content(), "notes", c.content(), c.content(), c.content(),
		}
		if family == "mem0" {
			kv = append(kv, "session_id", c.ident()) // a scope value under the default keys
		} else {
			kv = append(kv, "session_id", c.content())
		}
		if family != "zep_graphiti" {
			kv = append(kv, "group_id", c.content())
		}
		return kv
	}
	rec := func(n int, content string, kv ...any) M { return R(id(n), content, kv...) }
	cat := func(parts ...[]any) []any {
		var out []any
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	records := []M{
		rec(1, shared, cat(scope(s1), free(), []any{"shared", true})...),
		rec(2, shared, cat(scope(s2), free(), []any{"origin_claim_id", id(1), "origin_scope", c.content()})...),
		rec(3, shared, cat(scope(s1), free())...),
		rec(4, c.content(), cat(scope(s2), free(), []any{"replaced_by", c.content(), "superseded_by", c.content(), "lifecycle_state", c.content(),
			"state", c.content(), "invalid_at", c.content()})...),
		rec(5, c.content(), cat(free(), []any{"supersedes", []any{c.content(), id(4)}, "origin_claim_id", c.ident(), "file_id", c.content(),
			"expired_at", c.content(), "is_deleted", c.content()})...),
		rec(6, shared, cat(scope("global"), free(), []any{"shared", c.content(), "is_template", c.content(), "source_passage", c.content()})...),
		rec(7, shared, cat(scope(c.ident()), free(), []any{"origin_claim_id", c.ident()})...),
		rec(8, c.content(), cat(scope(s2), free(), []any{"state", "pending"})...),
		rec(9, shared, cat(scope(s2), free(), []any{"source", shared})...),
	}
	m := M{
		"global_scopes": []any{s1, c.ident()}, "global_content_keys": []any{shared, c.content()}, "global_claim_ids": []any{id(3), c.ident()},
		"private_scopes": []any{c.ident()}, c.content(): c.content(), "note": c.content(),
	}
	if family == "generic" {
		m["declared_scope_keys"] = []any{key, c.ident()}
	}
	x := with(X(family, records...), "manifest", m, "variant", variant, "caller", c.content(), c.content(), c.content())
	if form == "hash_only" {
		x = hashOnly(x)
	}
	return x
}

func assertNoMark(t *testing.T, what string, b []byte, marks ...string) {
	t.Helper()
	for _, m := range marks {
		if i := strings.Index(string(b), m); i >= 0 {
			lo := max(0, i-80)
			t.Fatalf("%s carries a %s canary: ...%s...", what, m, string(b[lo:min(len(b), i+40)]))
		}
	}
}

func TestCanaries(t *testing.T) {
	t.Parallel()
	ps := shipped(t)
	variants := map[string][]string{"mem0": {"platform", "oss"}, "zep_graphiti": {"graphiti", "zep_cloud"}, "letta": {"mixed", "blocks", "passages"}, "generic": {"claim-jsonl"}}
	for family, vs := range variants {
		for _, variant := range vs {
			for _, form := range []string{"full_text", "hash_only"} {
				t.Run(fmt.Sprintf("canary/%s/%s/%s", family, variant, form), func(t *testing.T) {
					t.Parallel()
					x := canaryExport(family, variant, form)
					body := marshal(t, x)
					if !strings.Contains(string(body), contentMark) || !strings.Contains(string(body), identityMark) {
						t.Fatal("no canary planted")
					}
					rep, ref, err := evaluator.Audit(ps, body, now)
					if err != nil || ref != nil {
						t.Fatalf("audit: %v %v", ref, err)
					}
					validateOutput(t, "report", rep)
					assertNoMark(t, "audit report", marshal(t, rep), contentMark)
					// The report does name ids and scopes: the canary export exercised clusters.
					if !strings.Contains(string(marshal(t, rep)), identityMark) {
						t.Fatalf("report names no record id: the canary export did not exercise clusters")
					}
					pre, ref, err := evaluator.Precheck(ps, body, now)
					if err != nil || ref != nil {
						t.Fatalf("precheck: %v %v", ref, err)
					}
					assertNoMark(t, "pre-check", marshal(t, pre), contentMark, identityMark)
					ex, ref, err := evaluator.Explain(ps, body, now)
					if err != nil || ref != nil {
						t.Fatalf("explain: %v %v", ref, err)
					}
					assertNoMark(t, "explanation", marshal(t, ex), contentMark)

					// Refusal paths: a malformed member after the canaries.
					bad := func(mut func(x M)) []byte {
						var cp M
						_ = json.Unmarshal(body, &cp)
						mut(cp)
						return marshal(t, cp)
					}
					appendRec := func(r any) func(x M) {
						return func(x M) { x["records"] = append(x["records"].([]any), r) }
					}
					cases := map[string][]byte{
						"record_not_object":           bad(appendRec(contentMark + "-not-object")),
						"record_id_required":          bad(appendRec(M{"content_text": contentMark + "x", "content_hash": contentMark + "y", "id": 5})),
						"record_id_duplicate":         bad(appendRec(M{"id": identityMark + "-REC1", "content_text": contentMark + "z"})),
						"content":                     bad(appendRec(M{"id": identityMark + "-NEW", "content_text": 5, "content_hash": ""})),
						"manifest_invalid":            bad(func(x M) { x["manifest"] = contentMark + "-manifest" }),
						"declared_scope_keys_invalid": bad(func(x M) { x["manifest"] = M{"declared_scope_keys": []any{identityMark + "k", 5}} }),
						"variant_unknown":             bad(func(x M) { x["variant"] = contentMark + "-variant" }),
						"family_unknown":              bad(func(x M) { x["family"] = contentMark + "-family" }),
						"form_invalid":                bad(func(x M) { x["form"] = contentMark + "-form" }),
						"export_required/trailing":    append(append([]byte{}, body...), []byte(" "+contentMark)...),
						"export_required/duplicate":   []byte(strings.Replace(string(body), "{", `{"family":"`+contentMark+`",`, 1)),
						"body_bytes_cap":              []byte(string(body) + strings.Repeat(" ", 262145-len(body))),
					}
					for name, b := range cases {
						for _, run := range []func() (any, *evaluator.Refusal, error){
							func() (any, *evaluator.Refusal, error) { return evaluator.Audit(ps, b, now) },
							func() (any, *evaluator.Refusal, error) { return evaluator.Precheck(ps, b, now) },
						} {
							_, ref, err := run()
							if err != nil || ref == nil {
								t.Fatalf("%s: want a refusal, got %v %v", name, ref, err)
							}
							validateOutput(t, "refusal", ref)
							assertNoMark(t, "refusal "+name, marshal(t, ref), contentMark, identityMark)
							assertNoMark(t, "refusal error "+name, []byte(ref.Error()), contentMark, identityMark)
						}
					}
				})
			}
		}
	}
}
