package evaluator_test

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/evaluator"
)

// Input and refusals: R-1..R-4, R-46, malformed_rule.

// ok is a minimal accepted record.
func ok(id string) M { return R(id, "c") }

func recs(rs ...any) []any { return rs }

func TestRefusals(t *testing.T) {
	t.Parallel()
	type row struct {
		name  string
		body  any // M, []byte or any JSON value
		rule  string
		index int // -1: no record_index
	}
	full := func(records any, kv ...any) M {
		return with(M{"family": "mem0", "form": "full_text", "records": records}, kv...)
	}
	hash := func(records any, kv ...any) M {
		return with(M{"family": "mem0", "form": "hash_only", "records": records}, kv...)
	}
	rows := []row{
		{"export_required/array", []any{}, "export_required", -1},
		{"export_required/string", "mem0", "export_required", -1},
		{"export_required/number", 5, "export_required", -1},
		{"R-4/export_required/null", []byte("null"), "export_required", -1},
		{"export_required/empty-body", []byte(""), "export_required", -1},
		{"family_required/missing", M{"form": "full_text", "records": recs(ok("a"))}, "family_required", -1},
		{"R-4/family_required/null", M{"family": nil, "form": "full_text", "records": recs(ok("a"))}, "family_required", -1},
		{"family_unknown/openai", M{"family": "openai", "form": "full_text", "records": recs(ok("a"))}, "family_unknown", -1},
		{"family_unknown/case", M{"family": "Mem0", "form": "full_text", "records": recs(ok("a"))}, "family_unknown", -1},
		{"family_unknown/number", M{"family": 5, "form": "full_text", "records": recs(ok("a"))}, "family_unknown", -1},
		{"R-1/family_unknown-before-form_invalid", M{"family": "x", "form": "x"}, "family_unknown", -1},
		{"form_invalid/missing", M{"family": "mem0", "records": recs(ok("a"))}, "form_invalid", -1},
		{"R-4/form_invalid/null", M{"family": "mem0", "form": nil, "records": recs(ok("a"))}, "form_invalid", -1},
		{"form_invalid/text", M{"family": "mem0", "form": "text", "records": recs(ok("a"))}, "form_invalid", -1},
		{"form_invalid/case", M{"family": "mem0", "form": "FULL_TEXT", "records": recs(ok("a"))}, "form_invalid", -1},
		{"R-1/form_invalid-before-records_required", M{"family": "mem0"}, "form_invalid", -1},
		{"records_required/missing", M{"family": "mem0", "form": "full_text"}, "records_required", -1},
		{"R-4/records_required/null", full(nil), "records_required", -1},
		{"records_required/object", full(M{"a": ok("a")}), "records_required", -1},
		{"records_required/string", full("a"), "records_required", -1},
		{"records_empty", full([]any{}), "records_empty", -1},
		{"R-1/records_empty-before-manifest_invalid", full([]any{}, "manifest", 5), "records_empty", -1},
		{"record_not_object/number", full(recs(ok("a"), 5)), "record_not_object", 1},
		{"record_not_object/array", full(recs([]any{}, ok("a"))), "record_not_object", 0},
		{"record_not_object/null", full(recs(ok("a"), ok("b"), nil)), "record_not_object", 2},
		{"R-1/record_not_object-anywhere-beats-record_id_required-at-0", full(recs(M{"content_text": "x"}, ok("b"), "x")), "record_not_object", 2},
		{"record_id_required/missing", full(recs(ok("a"), ok("b"), M{"content_text": "x"})), "record_id_required", 2},
		{"R-4/record_id_required/null", full(recs(M{"id": nil, "content_text": "x"})), "record_id_required", 0},
		{"record_id_required/number", full(recs(ok("a"), M{"id": 7, "content_text": "x"})), "record_id_required", 1},
		{"R-1/record_id_required-beats-earlier-duplicate", full(recs(ok("a"), ok("a"), M{"content_text": "x"})), "record_id_required", 2},
		{"record_id_duplicate/later-occurrence", full(recs(ok("a"), ok("b"), ok("a"))), "record_id_duplicate", 2},
		{"record_id_duplicate/first-pair", full(recs(ok("a"), ok("b"), ok("b"), ok("a"))), "record_id_duplicate", 2},
		{"R-1/record_id_duplicate-beats-content-at-0", full(recs(M{"id": "a"}, ok("b"), ok("b"))), "record_id_duplicate", 2},
		{"content_text_required/missing", full(recs(ok("a"), M{"id": "b"})), "content_text_required", 1},
		{"R-4/content_text_required/null", full(recs(M{"id": "a", "content_text": nil})), "content_text_required", 0},
		{"content_text_required/number", full(recs(M{"id": "a", "content_text": 1})), "content_text_required", 0},
		{"content_text_required/hash-given-in-full-text", full(recs(M{"id": "a", "content_hash": "h"})), "content_text_required", 0},
		{"content_hash_required/missing", hash(recs(M{"id": "a", "content_hash": "h"}, M{"id": "b", "content_text": "x"})), "content_hash_required", 1},
		{"content_hash_required/empty", hash(recs(M{"id": "a", "content_hash": ""})), "content_hash_required", 0},
		{"content_hash_required/number", hash(recs(M{"id": "a", "content_hash": 12})), "content_hash_required", 0},
		{"R-4/content_hash_required/null", hash(recs(M{"id": "a", "content_hash": nil})), "content_hash_required", 0},
		{"R-1/content_hash_required-before-manifest_invalid", hash(recs(M{"id": "a"}), "manifest", "x"), "content_hash_required", 0},
		{"manifest_invalid/array", full(recs(ok("a")), "manifest", []any{}), "manifest_invalid", -1},
		{"manifest_invalid/string", full(recs(ok("a")), "manifest", "m"), "manifest_invalid", -1},
		{"manifest_invalid/false", full(recs(ok("a")), "manifest", false), "manifest_invalid", -1},
		{"R-1/manifest_invalid-before-variant_unknown", full(recs(ok("a")), "manifest", 1, "variant", "x"), "manifest_invalid", -1},
		{"declared_scope_keys_invalid/string", full(recs(ok("a")), "manifest", M{"declared_scope_keys": "user_id"}), "declared_scope_keys_invalid", -1},
		{"declared_scope_keys_invalid/non-string-entry", full(recs(ok("a")), "manifest", M{"declared_scope_keys": []any{"user_id", 5}}), "declared_scope_keys_invalid", -1},
		{"declared_scope_keys_invalid/null-entry", full(recs(ok("a")), "manifest", M{"declared_scope_keys": []any{nil}}), "declared_scope_keys_invalid", -1},
		{"declared_scope_keys_invalid/object", full(recs(ok("a")), "manifest", M{"declared_scope_keys": M{}}), "declared_scope_keys_invalid", -1},
		{"R-1/declared_scope_keys_invalid-before-variant_unknown", full(recs(ok("a")), "manifest", M{"declared_scope_keys": 1}, "variant", "x"), "declared_scope_keys_invalid", -1},
		{"variant_unknown/other-family", full(recs(ok("a")), "variant", "graphiti"), "variant_unknown", -1},
		{"variant_unknown/case", full(recs(ok("a")), "variant", "Platform"), "variant_unknown", -1},
		{"R-4/variant_unknown/number", full(recs(ok("a")), "variant", 1), "variant_unknown", -1},
		{"variant_unknown/generic", M{"family": "generic", "form": "full_text", "records": recs(ok("a")), "variant": "jsonl"}, "variant_unknown", -1},
		{"variant_unknown/letta", M{"family": "letta", "form": "full_text", "records": recs(ok("a")), "variant": "platform"}, "variant_unknown", -1},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			ref := refuse(t, r.body)
			if ref.Rule != r.rule || iv(ref.RecordIndex) != r.index {
				t.Fatalf("got rule %s index %v, want %s index %d", ref.Rule, deref(ref.RecordIndex), r.rule, r.index)
			}
			if ref.Cap != nil || ref.Observed != nil {
				t.Errorf("cap/observed on %s", ref.Rule)
			}
			if ref.HTTPStatus() != http.StatusBadRequest {
				t.Errorf("status %d, want 400", ref.HTTPStatus())
			}
		})
	}
}

func TestRefusalCaps(t *testing.T) {
	t.Parallel()
	many := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = R("r"+strconv.Itoa(i), "")
		}
		return out
	}
	t.Run("record_count_cap/1001", func(t *testing.T) {
		t.Parallel()
		ref := refuse(t, M{"family": "generic", "form": "full_text", "records": many(1001)})
		if ref.Rule != "record_count_cap" || iv(ref.Cap) != 1000 || iv(ref.Observed) != 1001 || ref.RecordIndex != nil {
			t.Fatalf("got %s", marshal(t, ref))
		}
	})
	t.Run("R-1/record_count_cap-before-record_not_object", func(t *testing.T) {
		t.Parallel()
		recs := many(1001)
		recs[0] = 5
		ref := refuse(t, M{"family": "generic", "form": "full_text", "records": recs})
		if ref.Rule != "record_count_cap" {
			t.Fatalf("got %s", ref.Rule)
		}
	})
	t.Run("record_count_cap/1000-accepted", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, M{"family": "generic", "form": "full_text", "records": many(1000)})
		if rep.Records != 1000 || rep.Live != 1000 {
			t.Fatalf("records %d live %d", rep.Records, rep.Live)
		}
		// 1000 records of identical (empty) content in the one unnamed partition: excess 999.
		if iv(rep.Factors.Duplicates.Excess) != 999 || rep.Factors.Duplicates.Rate.Value != "99.9%" {
			t.Fatalf("duplicates %s", marshal(t, rep.Factors.Duplicates))
		}
	})

	// exactly 262,144 bytes is accepted; one more is refused (413) before parsing.
	sized := func(t *testing.T, n int) []byte {
		base := marshal(t, X("mem0", R("a", "")))
		pad := n - len(base)
		b := marshal(t, X("mem0", R("a", strings.Repeat("a", pad))))
		if len(b) != n {
			t.Fatalf("built %d bytes, want %d", len(b), n)
		}
		return b
	}
	t.Run("R-2/body_bytes_cap/262144-accepted", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, sized(t, 262144))
		if rep.Records != 1 {
			t.Fatal(rep.Records)
		}
		if evaluator.CheckBodySize(shipped(t), 262144) != nil {
			t.Fatal("CheckBodySize refused 262144")
		}
	})
	t.Run("R-2/body_bytes_cap/262145-refused", func(t *testing.T) {
		t.Parallel()
		ref := refuse(t, sized(t, 262145))
		if ref.Rule != "body_bytes_cap" || iv(ref.Cap) != 262144 || iv(ref.Observed) != 262145 || ref.RecordIndex != nil {
			t.Fatalf("got %s", marshal(t, ref))
		}
		if ref.HTTPStatus() != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d", ref.HTTPStatus())
		}
	})
	t.Run("R-2/body_bytes_cap/before-parsing", func(t *testing.T) {
		t.Parallel()
		// Not JSON at all, and one byte over: the cap decides, not export_required.
		ref := refuse(t, bytes.Repeat([]byte{0xff}, 262145))
		if ref.Rule != "body_bytes_cap" || iv(ref.Observed) != 262145 {
			t.Fatalf("got %s", marshal(t, ref))
		}
		if r := evaluator.CheckBodySize(shipped(t), 262145); r == nil || r.Rule != "body_bytes_cap" {
			t.Fatalf("CheckBodySize: %v", r)
		}
	})
}

// nest returns n nested empty arrays.
func nest(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestStrictJSON(t *testing.T) {
	t.Parallel()
	valid := `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":{"k":"v"}}]}`
	type row struct {
		name   string
		body   string
		refuse bool
	}
	rows := []row{
		{"R-3/valid", valid, false},
		{"R-3/bom", "\xef\xbb\xbf" + valid, true},
		{"R-3/duplicate-key-top", `{"family":"mem0","family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x"}]}`, true},
		{"R-3/duplicate-key-nested-record", `{"family":"mem0","form":"full_text","records":[{"id":"a","id":"b","content_text":"x"}]}`, true},
		{"R-3/duplicate-key-nested-metadata", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":{"k":1,"k":2}}]}`, true},
		{"R-3/duplicate-key-unknown-member", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x"}],"extra":{"z":1,"z":1}}`, true},
		{"R-3/lone-high-surrogate", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x\ud800"}]}`, true},
		{"R-3/lone-low-surrogate", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"\udc00x"}]}`, true},
		{"R-3/lone-surrogate-in-key", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","\ud800":1}]}`, true},
		{"R-3/surrogate-pair-ok", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"\ud83d\ude00"}]}`, false},
		{"R-3/invalid-utf8", "{\"family\":\"mem0\",\"form\":\"full_text\",\"records\":[{\"id\":\"a\",\"content_text\":\"\xff\"}]}", true},
		{"R-3/invalid-utf8-overlong", "{\"family\":\"mem0\",\"form\":\"full_text\",\"records\":[{\"id\":\"a\",\"content_text\":\"\xc0\xaf\"}]}", true},
		{"R-3/non-object-array", `[` + valid + `]`, true},
		{"R-3/trailing-garbage", valid + ` x`, true},
		{"R-3/trailing-second-value", valid + `{}`, true},
		{"R-3/trailing-comma", strings.TrimSuffix(valid, "}") + `,}`, true},
		{"R-3/trailing-whitespace-ok", valid + " \n\t\r\n", false},
		{"R-3/truncated", valid[:len(valid)-1], true},
		{"R-3/single-quotes", `{'family':'mem0'}`, true},
		{"R-3/nan", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","n":NaN}]}`, true},
		// Depth: the top-level object is level 1, records 2, a record 3, its metadata 4.
		{"R-3/depth-64-ok", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":` + nest(61) + `}]}`, false},
		{"R-3/depth-64-scalar-ok", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":` + strings.Repeat("[", 60) + "1" + strings.Repeat("]", 60) + `}]}`, false},
		{"R-3/depth-65-refused", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":` + nest(62) + `}]}`, true},
		// a scalar adds no level; 64 containers around a scalar are accepted, 65 refused.
		{"R-51/scalar-inside-64-containers-ok", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":` + strings.Repeat("[", 61) + "1" + strings.Repeat("]", 61) + `}]}`, false},
		{"R-51/scalar-inside-65-containers-refused", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":` + strings.Repeat("[", 62) + `"s"` + strings.Repeat("]", 62) + `}]}`, true},
		{"R-3/depth-65-objects-refused", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":` + strings.Repeat(`{"a":`, 62) + "{}" + strings.Repeat("}", 62) + `}]}`, true},
		{"R-3/depth-64-objects-ok", `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x","metadata":` + strings.Repeat(`{"a":`, 60) + "{}" + strings.Repeat("}", 60) + `}]}`, false},
		{"R-5/unknown-members-ignored", `{"family":"mem0","form":"full_text","caller":"x","zzz":[1,{"q":null}],"records":[{"id":"a","content_text":"x","unknown":{"deep":[true]}}]}`, false},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			if r.refuse {
				ref := refuse(t, []byte(r.body))
				if ref.Rule != "export_required" || ref.RecordIndex != nil {
					t.Fatalf("got %s", marshal(t, ref))
				}
				return
			}
			rep := audit(t, []byte(r.body))
			if rep.Records != 1 || rep.Live != 1 {
				t.Fatalf("records %d live %d", rep.Records, rep.Live)
			}
		})
	}
}

// null means absent for every optional member.
func TestNullMeansAbsent(t *testing.T) {
	t.Parallel()
	t.Run("R-4/variant-null-defaults", func(t *testing.T) {
		t.Parallel()
		for fam, def := range map[string]string{"mem0": "platform", "zep_graphiti": "graphiti", "letta": "mixed", "generic": "claim-jsonl"} {
			rep := audit(t, with(X(fam, R("a", "x")), "variant", nil))
			if rep.Variant != def {
				t.Errorf("%s: variant %q, want %q", fam, rep.Variant, def)
			}
			rep = audit(t, X(fam, R("a", "x")))
			if rep.Variant != def {
				t.Errorf("%s: absent variant %q, want %q", fam, rep.Variant, def)
			}
		}
	})
	t.Run("R-4/manifest-null", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, with(X("mem0", R("a", "x", "user_id", "u")), "manifest", nil))
		if rep.Coverage.ScopeKeysSource != "family_default" || rep.Coverage.ManifestIgnored != 0 {
			t.Fatalf("coverage %s", marshal(t, rep.Coverage))
		}
	})
	t.Run("R-4/declared_scope_keys-null", func(t *testing.T) {
		t.Parallel()
		rep := audit(t, with(X("mem0", R("a", "x", "user_id", "u")), "manifest", M{"declared_scope_keys": nil}))
		if rep.Coverage.ScopeKeysSource != "family_default" || strings.Join(rep.Coverage.ScopeKeys, ",") != "user_id,agent_id,app_id,run_id" {
			t.Fatalf("coverage %s", marshal(t, rep.Coverage))
		}
	})
	t.Run("R-4/record-members-null", func(t *testing.T) {
		t.Parallel()
		// Every optional member null: the record is live, unscoped, carries no marker, no
		// pointer, no checked field.
		r := R("a", "x")
		for _, k := range []string{"user_id", "agent_id", "app_id", "run_id", "session_id", "supersedes", "replaced_by",
			"superseded_by", "is_deleted", "invalid_at", "expired_at", "lifecycle_state", "state", "shared", "sharing",
			"metadata", "origin_claim_id", "origin_scope", "attributed_scope", "history_scope", "storage_scope",
			"episode_group_ids", "endpoint_group_ids", "source"} {
			r[k] = nil
		}
		rep := audit(t, X("mem0", r, R("b", "x", "user_id", "u")))
		if rep.Live != 2 || rep.Coverage.SplitState != 0 || rep.Coverage.NonStringScopeValues != 0 {
			t.Fatalf("live %d coverage %s", rep.Live, marshal(t, rep.Coverage))
		}
		if iv(rep.Factors.ScopePresence.Scoped) != 1 {
			t.Fatalf("scoped %d", iv(rep.Factors.ScopePresence.Scoped))
		}
		if rep.Factors.ScopeConflicts.Status != "NOT ASSESSABLE" {
			t.Fatalf("conflicts %s", marshal(t, rep.Factors.ScopeConflicts))
		}
	})
}
