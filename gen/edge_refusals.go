package gen

import "strings"

// okExport is a small valid export used as the base of refusal cases.
func okExport() obj {
	return mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-b", "user_id", "u2"))
}

// strictJSONSpecs are the bodies R-3 refuses or accepts by their bytes (export_required),
// written as body_base64.
func strictJSONSpecs() []edgeSpec {
	valid := `{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"note-a","user_id":"u1"}]}`
	deep := func(levels int) string {
		// top-level object (1) > records array (2) > record (3) > metadata objects (4..levels)
		inner := strings.Repeat(`{"m":`, levels-4) + `{}` + strings.Repeat(`}`, levels-4)
		return `{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"note-a","metadata":` + inner + `}]}`
	}
	return []edgeSpec{
		{name: "export_required-bom", rules: rules("export_required", "R-3"), raw: append([]byte{0xEF, 0xBB, 0xBF}, valid...)},
		{name: "export_required-duplicate-key-top", rules: rules("export_required", "R-3"),
			raw: []byte(`{"family":"mem0","form":"full_text","family":"mem0","records":[{"id":"r1","content_text":"note-a"}]}`)},
		{name: "export_required-duplicate-key-nested", rules: rules("export_required", "R-3"),
			raw: []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"note-a","metadata":{"a":{"shared":true,"shared":false}}}]}`)},
		{name: "export_required-duplicate-key-escaped", rules: rules("export_required", "R-3"),
			raw: []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","\u0069d":"r2","content_text":"note-a"}]}`)},
		{name: "export_required-lone-high-surrogate", rules: rules("export_required", "R-3"),
			raw: []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"note-\ud800"}]}`)},
		{name: "export_required-lone-low-surrogate", rules: rules("export_required", "R-3"),
			raw: []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"\udc00"}]}`)},
		{name: "export_required-high-surrogate-then-letter", rules: rules("export_required", "R-3"),
			raw: []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"\ud800\u0041"}]}`)},
		{name: "export_required-lone-surrogate-in-member-name", rules: rules("export_required", "R-3"),
			raw: []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"note-a","\udbff":1}]}`)},
		{name: "R-3-surrogate-pair-accepted", rules: rules("R-3", "duplicates"),
			raw: []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"\ud83d\ude00","user_id":"u1"}]}`)},
		{name: "export_required-depth-65", rules: rules("export_required", "R-3"), raw: []byte(deep(65))},
		{name: "R-3-depth-64-accepted", rules: rules("R-3"), raw: []byte(deep(64))},
		{name: "export_required-invalid-utf8", rules: rules("export_required", "R-3"),
			raw: []byte("{\"family\":\"mem0\",\"form\":\"full_text\",\"records\":[{\"id\":\"r1\",\"content_text\":\"note-\xff\"}]}")},
		{name: "export_required-overlong-utf8", rules: rules("export_required", "R-3"),
			raw: []byte("{\"family\":\"mem0\",\"form\":\"full_text\",\"records\":[{\"id\":\"r1\",\"content_text\":\"\xc0\xaf\"}]}")},
		{name: "export_required-non-object-array", rules: rules("export_required"), raw: []byte(`[` + valid + `]`)},
		{name: "export_required-non-object-string", rules: rules("export_required"), raw: []byte(`"export"`)},
		{name: "export_required-non-object-null", rules: rules("export_required"), raw: []byte(`null`)},
		{name: "export_required-non-object-number", rules: rules("export_required"), raw: []byte(`42`)},
		{name: "export_required-whitespace-only-body", rules: rules("export_required"), raw: []byte(" \n")},
		{name: "export_required-trailing-garbage", rules: rules("export_required", "R-3"), raw: []byte(valid + ` x`)},
		{name: "export_required-two-values", rules: rules("export_required", "R-3"), raw: []byte(valid + valid)},
		{name: "export_required-trailing-comma", rules: rules("export_required", "R-3"),
			raw: []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"note-a"},]}`)},
		{name: "export_required-raw-control-char", rules: rules("export_required", "R-3"),
			raw: []byte("{\"family\":\"mem0\",\"form\":\"full_text\",\"records\":[{\"id\":\"r1\",\"content_text\":\"a\tb\"}]}")},
		{name: "export_required-bad-escape", rules: rules("export_required", "R-3"),
			raw: []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"a\x"}]}`)},
		{name: "R-3-whitespace-around-accepted", rules: rules("R-3"), raw: []byte(" \n\t" + valid + "\r\n ")},
	}
}

// familyFormSpecs exercise family_required, family_unknown and form_invalid.
func familyFormSpecs() []edgeSpec {
	return []edgeSpec{
		{name: "family_required-missing", rules: rules("family_required"), body: okExport().without("family")},
		{name: "family_required-null", rules: rules("family_required", "R-4"), body: okExport().with("family", nil)},
		{name: "family_unknown-name", rules: rules("family_unknown"), body: okExport().with("family", "openai")},
		{name: "family_unknown-case", rules: rules("family_unknown"), body: okExport().with("family", "Mem0")},
		{name: "family_unknown-not-string", rules: rules("family_unknown"), body: okExport().with("family", 3)},
		{name: "family_unknown-empty", rules: rules("family_unknown"), body: okExport().with("family", "")},
		{name: "family_unknown-before-form_invalid", rules: rules("family_unknown", "form_invalid", "R-1"),
			body: okExport().with("family", "letta2", "form", "text")},

		// form
		{name: "form_invalid-missing", rules: rules("form_invalid"), body: okExport().without("form")},
		{name: "form_invalid-null", rules: rules("form_invalid", "R-4"), body: okExport().with("form", nil)},
		{name: "form_invalid-other", rules: rules("form_invalid"), body: okExport().with("form", "text")},
		{name: "form_invalid-not-string", rules: rules("form_invalid"), body: okExport().with("form", true)},
		{name: "form_invalid-before-records_required", rules: rules("form_invalid", "records_required", "R-1"),
			body: okExport().with("form", "hash").without("records")},
	}
}

// recordSpecs exercise the records array, each record's shape and id, and the R-1 scan
// order across records.
func recordSpecs() []edgeSpec {
	return []edgeSpec{
		{name: "records_required-missing", rules: rules("records_required"), body: okExport().without("records")},
		{name: "records_required-null", rules: rules("records_required", "R-4"), body: okExport().with("records", nil)},
		{name: "records_required-object", rules: rules("records_required"), body: okExport().with("records", obj{"id": "r1"})},
		{name: "records_required-string", rules: rules("records_required"), body: okExport().with("records", "r1")},
		{name: "records_empty", rules: rules("records_empty"), body: okExport().with("records", list())},
		{name: "records_empty-before-manifest_invalid", rules: rules("records_empty", "manifest_invalid", "R-1"),
			body: okExport().with("records", list(), "manifest", list())},

		// record_not_object and the R-1 scan order
		{name: "record_not_object-string", rules: rules("record_not_object"),
			body: okExport().with("records", list(txt("r1", "note-a"), "r2"))},
		{name: "record_not_object-null", rules: rules("record_not_object", "R-4"),
			body: okExport().with("records", list(txt("r1", "note-a"), nil))},
		{name: "record_not_object-array", rules: rules("record_not_object"),
			body: okExport().with("records", list(list(txt("r1", "note-a"))))},
		{name: "record_not_object-wins-over-earlier-id", rules: rules("record_not_object", "record_id_required", "R-1"),
			body: okExport().with("records", list(obj{"content_text": "note-a"}, txt("r2", "note-b"), 7))},

		// record_id_required
		{name: "record_id_required-missing", rules: rules("record_id_required"),
			body: mem0(txt("r1", "note-a"), obj{"content_text": "note-b"})},
		{name: "record_id_required-null", rules: rules("record_id_required", "R-4"),
			body: mem0(txt("r1", "note-a"), txt("r2", "note-b").with("id", nil))},
		{name: "record_id_required-number", rules: rules("record_id_required"),
			body: mem0(txt("r1", "note-a"), txt("r2", "note-b").with("id", 2))},
		{name: "record_id_required-wins-over-earlier-duplicate", rules: rules("record_id_required", "record_id_duplicate", "R-1"),
			body: mem0(txt("r1", "note-a"), txt("r1", "note-b"), txt("r3", "note-c").without("id"))},
		{name: "record_id_required-empty-id-accepted", rules: rules("record_id_required"),
			body: mem0(txt("", "note-a", "user_id", "u1"))},

		// record_id_duplicate: the index is the later occurrence
		{name: "record_id_duplicate-later-index", rules: rules("record_id_duplicate", "R-46"),
			body: mem0(txt("r1", "note-a"), txt("r2", "note-b"), txt("r3", "note-c"), txt("r2", "note-d"))},
		{name: "record_id_duplicate-wins-over-content", rules: rules("record_id_duplicate", "content_text_required", "R-1"),
			body: mem0(txt("r1", "note-a").without("content_text"), txt("r2", "note-b"), txt("r2", "note-c"))},
		{name: "record_id_duplicate-case-sensitive-accepted", rules: rules("record_id_duplicate"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("R1", "note-a", "user_id", "u1"))},
	}
}

// contentSpecs exercise content_text_required and content_hash_required.
func contentSpecs() []edgeSpec {
	return []edgeSpec{
		{name: "content_text_required-missing", rules: rules("content_text_required"),
			body: mem0(txt("r1", "note-a"), obj{"id": "r2", "content_hash": "h2"})},
		{name: "content_text_required-null", rules: rules("content_text_required", "R-4"),
			body: mem0(txt("r1", "note-a"), txt("r2", "").with("content_text", nil))},
		{name: "content_text_required-number", rules: rules("content_text_required"),
			body: mem0(txt("r1", "note-a").with("content_text", 5))},
		{name: "content_text_required-empty-accepted", rules: rules("content_text_required", "duplicates"),
			body: mem0(txt("r1", "", "user_id", "u1"), txt("r2", "", "user_id", "u1"))},
		{name: "content_text_required-before-manifest_invalid", rules: rules("content_text_required", "manifest_invalid", "R-1"),
			body: mem0(txt("r1", "note-a").with("content_text", false)).with("manifest", "m")},
		{name: "content_hash_required-missing", rules: rules("content_hash_required"),
			body: ex("mem0", "hash_only", hsh("r1", "h1"), txt("r2", "note-b"))},
		{name: "content_hash_required-empty", rules: rules("content_hash_required"),
			body: ex("mem0", "hash_only", hsh("r1", "h1"), hsh("r2", ""))},
		{name: "content_hash_required-number", rules: rules("content_hash_required"),
			body: ex("zep_graphiti", "hash_only", hsh("r1", "h1").with("content_hash", 12))},
		{name: "content_hash_required-null", rules: rules("content_hash_required", "R-4"),
			body: ex("letta", "hash_only", hsh("r1", "h1").with("content_hash", nil))},
		{name: "content_hash_required-full-text-ignores-hash", rules: rules("content_hash_required", "content_text_required"),
			body: mem0(txt("r1", "note-a", "content_hash", "", "user_id", "u1"))},
	}
}

// manifestSpecs exercise the manifest, its declared_scope_keys, the variant, and the members
// R-5 ignores.
func manifestSpecs() []edgeSpec {
	return []edgeSpec{
		{name: "manifest_invalid-array", rules: rules("manifest_invalid"), body: okExport().with("manifest", list())},
		{name: "manifest_invalid-string", rules: rules("manifest_invalid"), body: okExport().with("manifest", "global")},
		{name: "manifest_invalid-false", rules: rules("manifest_invalid"), body: okExport().with("manifest", false)},
		{name: "manifest_invalid-null-accepted", rules: rules("manifest_invalid", "R-4"), body: okExport().with("manifest", nil)},
		{name: "manifest_invalid-before-variant_unknown", rules: rules("manifest_invalid", "variant_unknown", "R-1"),
			body: okExport().with("manifest", 1, "variant", "graphiti")},

		// declared_scope_keys
		{name: "declared_scope_keys_invalid-string", rules: rules("declared_scope_keys_invalid"),
			body: okExport().manifest("declared_scope_keys", "user_id")},
		{name: "declared_scope_keys_invalid-number-entry", rules: rules("declared_scope_keys_invalid"),
			body: okExport().manifest("declared_scope_keys", list("user_id", 2))},
		{name: "declared_scope_keys_invalid-null-entry", rules: rules("declared_scope_keys_invalid"),
			body: okExport().manifest("declared_scope_keys", list(nil))},
		{name: "declared_scope_keys_invalid-object", rules: rules("declared_scope_keys_invalid"),
			body: okExport().manifest("declared_scope_keys", obj{"user_id": true})},
		{name: "declared_scope_keys_invalid-letta-still-validated", rules: rules("declared_scope_keys_invalid", "L-1"),
			body: letta(txt("r1", "note-a", "attached_to", list("a1"))).manifest("declared_scope_keys", 5)},
		{name: "declared_scope_keys_invalid-before-variant_unknown", rules: rules("declared_scope_keys_invalid", "variant_unknown", "R-1"),
			body: okExport().with("variant", 1).manifest("declared_scope_keys", list(true))},
		{name: "declared_scope_keys_invalid-null-accepted", rules: rules("declared_scope_keys_invalid", "R-4"),
			body: okExport().manifest("declared_scope_keys", nil)},

		// variant
		{name: "variant_unknown-other-family", rules: rules("variant_unknown"), body: okExport().with("variant", "graphiti")},
		{name: "variant_unknown-case", rules: rules("variant_unknown"), body: okExport().with("variant", "Platform")},
		{name: "variant_unknown-not-string", rules: rules("variant_unknown", "R-4"), body: okExport().with("variant", 1)},
		{name: "variant_unknown-empty", rules: rules("variant_unknown"), body: okExport().with("variant", "")},
		{name: "variant_unknown-generic", rules: rules("variant_unknown"),
			body: generic(txt("r1", "note-a")).with("variant", "claim_jsonl")},
		{name: "variant_unknown-letta-zep-name", rules: rules("variant_unknown"),
			body: letta(txt("r1", "note-a")).with("variant", "zep_cloud")},
		{name: "variant_unknown-null-is-default", rules: rules("variant_unknown", "R-4"), body: okExport().with("variant", nil)},

		// unknown members and caller are ignored
		{name: "R-5-unknown-members-ignored", rules: rules("R-5"),
			body: okExport().with("extra", list(1, 2), "records", list(
				txt("r1", "note-a", "user_id", "u1", "unknown_field", obj{"x": 1}), txt("r2", "note-a", "user_id", "u1")))},
	}
}

// capSpecs are the exports at and over the published caps.
func capSpecs() []edgeSpec {
	rec := func(i int) obj {
		return txt(id4(i), "note-"+string(rune('a'+i%5)), "user_id", "u"+string(rune('1'+i%3)))
	}
	recs1000 := manyRecords(1000, rec)
	recs1001 := manyRecords(1001, rec)

	// A body of exactly BodyBytesCap bytes: one record whose content is padded.
	sized := func(total int) []byte {
		head := `{"family":"generic","form":"full_text","records":[{"id":"r1","content_text":"`
		tail := `"}]}`
		pad := total - len(head) - len(tail)
		return []byte(head + strings.Repeat("p", pad) + tail)
	}
	return []edgeSpec{
		{name: "record_count_cap-1000-accepted", rules: rules("record_count_cap", "duplicates", "B2"), body: mem0(recs1000...)},
		{name: "record_count_cap-1001", rules: rules("record_count_cap", "R-2"), body: mem0(recs1001...)},
		{name: "record_count_cap-before-record_not_object", rules: rules("record_count_cap", "record_not_object", "R-1"),
			body: mem0(recs1001...).with("records", append(list(1), mem0(recs1000...)["records"].([]any)...))},
		{name: "body_bytes_cap-262144-accepted", rules: rules("body_bytes_cap", "R-2"), raw: sized(BodyBytesCap)},
		{name: "body_bytes_cap-262145", rules: rules("body_bytes_cap", "R-2", "R-46"), raw: sized(BodyBytesCap + 1)},
		{name: "body_bytes_cap-before-parsing", rules: rules("body_bytes_cap", "R-2", "export_required"),
			raw: append([]byte{0xEF, 0xBB, 0xBF}, sized(BodyBytesCap-2)...)},
	}
}
