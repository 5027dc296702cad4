package gen

// lettaSpecs: Letta rules L-1..L-4, template lineage and source passages.
func lettaSpecs() []edgeSpec {
	b := func(id string, set []any, kv ...any) obj {
		return txt(id, "note-a", append([]any{"attached_to", set}, kv...)...)
	}
	return []edgeSpec{
		{name: "L-1-block-shared-by-agents-one-record", rules: rules("L-1", "letta_rules"),
			body: letta(b("r1", list("a1", "a2", "a3")), txt("r2", "note-b", "attached_to", list("a1")))},
		{name: "L-2-overlapping-sets-no-cluster", rules: rules("L-2", "duplicates"),
			body: letta(b("r1", list("a1", "a2")), b("r2", list("a2", "a3")))},
		{name: "L-2-disjoint-sets-cluster", rules: rules("L-2", "B2"),
			body: letta(b("r1", list("a1", "a2")), b("r2", list("a3")), b("r3", list("a2", "a3")))},
		{name: "L-2-same-set-duplicates", rules: rules("L-2", "R-12", "duplicates"),
			body: letta(b("r1", list("a1", "a2")), b("r2", list("a2", "a1", "a2")), b("r3", list("a2", "a1", "")))},
		{name: "L-2-marked-shared", rules: rules("L-2", "M1", "B1"),
			body: letta(b("r1", list("a1"), "shared", true), b("r2", list("a2"), "metadata", obj{"sharing": "global"}))},
		{name: "L-2-n5-never-for-letta", rules: rules("L-2", "N5", "B2"),
			body: letta(b("r1", list("a1", "a2")), b("r2", list("a3")))},
		{name: "L-3-archive-resolved-passages", rules: rules("L-3", "B2"),
			body: ex("letta", "hash_only", hsh("r1", "h1", "attached_to", list("a1"), "record_class", "passage", "file_id", "f1"), hsh("r2", "h1", "attached_to", list("a2"), "record_class", "passage")).with("variant", "passages")},
		{name: "L-4-template-excluded", rules: rules("L-4", "scope_presence", "duplicates"),
			body: letta(b("r1", list("a1"), "is_template", true), b("r2", list("a2")), b("r3", list("a1"), "is_template", true), txt("r4", "note-b", "is_template", true))},
		{name: "L-4-template-flag-exact-true", rules: rules("L-4", "R-12", "B2"),
			body: letta(b("r1", list("a1"), "is_template", "true"), b("r2", list("a2"), "is_template", 1), txt("r3", "note-b", "record_class", "template"))},
		{name: "L-4-template-lineage-template-id", rules: rules("L-4", "R-24"),
			body: letta(b("r1", list("a1"), "template_id", "t1"), b("r2", list("a2"), "template_id", "t1"), b("r3", list("a3"), "template_id", "t1"))},
		{name: "L-4-template-lineage-base-template-id", rules: rules("L-4", "R-24"),
			body: letta(b("r1", list("a1"), "base_template_id", "t9", "template_id", "t1"), b("r2", list("a2"), "base_template_id", "t9", "template_id", "t2"))},
		{name: "L-4-template-lineage-broken-by-one-copy", rules: rules("L-4", "R-24", "B2"),
			body: letta(b("r1", list("a1"), "template_id", "t1"), b("r2", list("a2"), "template_id", "t1"), b("r3", list("a3")))},
		{name: "L-4-template-lineage-different-ids", rules: rules("L-4", "R-24", "B2"),
			body: letta(b("r1", list("a1"), "template_id", "t1"), b("r2", list("a2"), "template_id", "t2"))},
		{name: "L-4-template-lineage-ignores-global", rules: rules("L-4", "R-24", "M2"),
			body: letta(b("r1", list("a1"), "template_id", "t1"), b("r2", list("a2"), "template_id", "t1"), b("r3", list("global")))},
		{name: "L-4-source-passage-file-id", rules: rules("L-4", "R-12", "unscoped_rate"),
			body: letta(txt("r1", "note-a", "file_id", "f1"), txt("r2", "note-b", "file_id", "f1", "attached_to", list()), b("r3", list("a1"), "file_id", "f2"), txt("r4", "note-c", "file_id", ""), txt("r5", "note-d"))},
		{name: "L-4-source-passage-flag", rules: rules("L-4", "R-12", "R-33", "B2"),
			body: letta(b("r1", list("a1"), "source_passage", true), b("r2", list("a2")), txt("r3", "note-b", "source_passage", "true"))},
		{name: "L-4-template-and-source-passage", rules: rules("L-4", "R-12"),
			body: letta(txt("r1", "note-a", "is_template", true, "source_passage", true), b("r2", list("a2")))},
		{name: "L-4-templates-in-duplicates-and-size", rules: rules("L-4", "R-27", "R-33", "M4", "duplicates"),
			body: letta(b("r1", list("a1"), "is_template", true), b("r2", list("a1")), b("r3", list("a2"), "origin_claim_id", "r4"),
				b("r4", list("a3"), "origin_claim_id", "r5", "is_deleted", true), b("r5", list("a4"), "origin_claim_id", "r6", "is_deleted", true),
				b("r6", list("a5"), "is_deleted", true))},
		{name: "R-12-attached-to-not-array", rules: rules("R-12", "R-7"),
			body: letta(txt("r1", "note-a", "attached_to", "a1"), txt("r2", "note-a", "attached_to", obj{"a1": true}), b("r3", list("a1", 5, nil, "")))},
		{name: "R-12-letta-global-set", rules: rules("R-12", "M2", "R-10"),
			body: letta(b("r1", list("global")), b("r2", list("global", "global")), b("r3", list("global", "a1")), b("r4", list("a2")))},
		{name: "R-12-letta-declared-keys-ignored", rules: rules("R-12", "R-8"),
			body: letta(b("r1", list("a1"), "user_id", "u1"), b("r2", list("a2"), "user_id", "u1")).manifest("declared_scope_keys", list("user_id"))},
		{name: "R-12-letta-m3-a-sorted-scope-string", rules: rules("R-12", "M3-a", "B1"),
			body: letta(b("r1", list("a2", "a1")), b("r2", list("a3"))).manifest("global_scopes", list("a1/a2", "a3"))},
		{name: "L-1-letta-blocks-variant", rules: rules("L-1", "assessability_matrix"),
			body: ex("letta", "hash_only", hsh("r1", "h1", "attached_to", list("a1"), "record_class", "block"), hsh("r2", "h2")).with("variant", "blocks")},
	}
}

// conflictSpecs: each scope_conflicts sub-check.
func conflictSpecs() []edgeSpec {
	return []edgeSpec{
		{name: "scope_conflicts-attributed-vs-scope-string", rules: rules("scope_conflicts", "R-32"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "attributed_scope", "u1"), txt("r2", "note-b", "user_id", "u1", "agent_id", "g1", "attributed_scope", "u1"), txt("r3", "note-c", "user_id", "u1", "agent_id", "g1", "attributed_scope", "u1/g1"))},
		{name: "scope_conflicts-attributed-vs-storage-scope", rules: rules("scope_conflicts", "R-32"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "storage_scope", "vault", "attributed_scope", "vault"), txt("r2", "note-b", "user_id", "u1", "storage_scope", "vault", "attributed_scope", "u1"), txt("r3", "note-c", "user_id", "u1", "storage_scope", nil, "attributed_scope", "u1"))},
		{name: "scope_conflicts-storage-scope-not-string", rules: rules("scope_conflicts", "R-32"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "storage_scope", 1, "attributed_scope", "u1"), txt("r2", "note-b", "storage_scope", "", "history_scope", "x"))},
		{name: "scope_conflicts-attributed-not-string", rules: rules("scope_conflicts", "R-26"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "attributed_scope", 5), txt("r2", "note-b", "user_id", "u1", "attributed_scope", list("u1")), txt("r3", "note-c", "attributed_scope", true))},
		{name: "scope_conflicts-unscoped-reference-empty", rules: rules("scope_conflicts", "R-32"),
			body: mem0(txt("r1", "note-a", "attributed_scope", "u1"), txt("r2", "note-b", "history_scope", "u1", "user_id", "u1"))},
		{name: "scope_conflicts-history-scope", rules: rules("scope_conflicts", "R-26"),
			body: zep(txt("r1", "note-a", "group_id", "g1", "history_scope", "g1"), txt("r2", "note-b", "group_id", "g1", "graph_id", "k1", "history_scope", "g1"), txt("r3", "note-c", "group_id", "g2", "history_scope", "g2", "attributed_scope", "g1"))},
		{name: "scope_conflicts-episode-group-ids", rules: rules("scope_conflicts", "R-26"),
			body: zep(txt("r1", "note-a", "group_id", "g1", "episode_group_ids", list("g1", "g1")), txt("r2", "note-b", "group_id", "g1", "episode_group_ids", list("g1", "g2")), txt("r3", "note-c", "group_id", "g2", "episode_group_ids", list()))},
		{name: "scope_conflicts-lone-value-is-list-of-one", rules: rules("scope_conflicts", "R-26"),
			body: zep(txt("r1", "note-a", "group_id", "g1", "episode_group_ids", "g1"), txt("r2", "note-b", "group_id", "g1", "endpoint_group_ids", "g2"), txt("r3", "note-c", "group_id", "g2", "endpoint_group_ids", 3))},
		{name: "scope_conflicts-non-string-list-values", rules: rules("scope_conflicts", "R-26"),
			body: zep(txt("r1", "note-a", "group_id", "g1", "endpoint_group_ids", list("g1", nil)), txt("r2", "note-b", "group_id", "g1", "episode_group_ids", list(1)), txt("r3", "note-c", "group_id", "g1", "endpoint_group_ids", obj{"g": "g1"}))},
		{name: "scope_conflicts-group-id-not-string", rules: rules("scope_conflicts", "R-32"),
			body: mem0(txt("r1", "note-a", "group_id", 7, "episode_group_ids", list("7")), txt("r2", "note-b", "episode_group_ids", list("")), txt("r3", "note-c", "group_id", "", "endpoint_group_ids", ""))},
		{name: "scope_conflicts-all-subchecks-and-dead-records", rules: rules("scope_conflicts", "R-26"),
			body: zep(txt("r1", "note-a", "group_id", "g1", "attributed_scope", "g2", "history_scope", "g3", "episode_group_ids", "g4", "endpoint_group_ids", list("g5"), "is_deleted", true), txt("r2", "note-b", "group_id", "g2"))},
		{name: "scope_conflicts-hash-only-structural", rules: rules("scope_conflicts", "assessability_matrix"),
			body: ex("zep_graphiti", "hash_only", hsh("r1", "h1", "group_id", "g1", "endpoint_group_ids", list("g1")), hsh("r2", "h2", "group_id", "g2", "endpoint_group_ids", list("g1")))},
		{name: "scope_conflicts-session-stand-in-scope-string", rules: rules("scope_conflicts", "R-32", "R-44"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "session_id", "s1", "attributed_scope", "u1/s1"), txt("r2", "note-b", "user_id", "u1", "session_id", "s1", "attributed_scope", "u1"))},
	}
}

// duplicateSpecs: partitions, excess and the no-double-counting rule.
func duplicateSpecs() []edgeSpec {
	return []edgeSpec{
		{name: "duplicates-intra-scope-excess", rules: rules("duplicates", "R-27"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-a", "user_id", "u1"), txt("r3", "note-a", "user_id", "u1"), txt("r4", "note-b", "user_id", "u1"), txt("r5", "note-b", "user_id", "u1"))},
		{name: "duplicates-cross-scope-counted-once", rules: rules("duplicates", "B2", "marker_convention"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-a", "user_id", "u2"), txt("r3", "note-a", "user_id", "u2"))},
		{name: "duplicates-partitions", rules: rules("duplicates", "R-11", "M2"),
			body: mem0(txt("r1", "note-a"), txt("r2", "note-a"), txt("r3", "note-a", "user_id", "global"), txt("r4", "note-a", "agent_id", "global"), txt("r5", "note-a", "user_id", "u1"), txt("r6", "note-a", "user_id", "u1", "agent_id", "g1"), txt("r7", "note-a", "user_id", "u1", "agent_id", "g1"))},
		{name: "duplicates-generic-scopeless-single-partition", rules: rules("duplicates", "extension_rule"),
			body: generic(txt("r1", "note-a", "tenant", "t1"), txt("r2", "note-a", "tenant", "t2"), txt("r3", "note-b"), txt("r4", "note-b"), txt("r5", "note-b"))},
		{name: "duplicates-dead-records-excluded", rules: rules("duplicates", "liveness"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-a", "user_id", "u1", "replaced_by", "r1"), txt("r3", "note-a", "user_id", "u1", "state", "expired"))},
		{name: "duplicates-hash-only-exact", rules: rules("duplicates", "assessability_matrix"),
			body: ex("mem0", "hash_only", hsh("r1", "h1", "user_id", "u1"), hsh("r2", "h1", "user_id", "u1"), hsh("r3", "H1", "user_id", "u1"), hsh("r4", "h1 ", "user_id", "u1"))},
		{name: "duplicates-near-duplicates-not-clustered", rules: rules("duplicates", "marker_convention"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-a.", "user_id", "u1"), txt("r3", "note-a", "user_id", "u2"), txt("r4", "note-a\n", "user_id", "u2"))},
		{name: "duplicates-empty-content-key", rules: rules("duplicates", "B2"),
			body: mem0(txt("r1", "", "user_id", "u1"), txt("r2", "", "user_id", "u1"), txt("r3", "", "user_id", "u2"))},
		{name: "duplicates-letta-partition-by-set", rules: rules("duplicates", "R-12", "L-4"),
			body: letta(txt("r1", "note-a", "attached_to", list("a1", "a2")), txt("r2", "note-a", "attached_to", list("a2", "a1")), txt("r3", "note-a", "attached_to", list("a1")), txt("r4", "note-a"), txt("r5", "note-a", "file_id", "f1"), txt("r6", "note-a", "attached_to", list("global")), txt("r7", "note-a", "attached_to", list("global"), "is_template", true))},
	}
}

// percentSpecs: rounding and zero denominators.
func percentSpecs() []edgeSpec {
	scopedOf := func(scoped, total int) obj {
		return mem0(manyRecords(total, func(i int) obj {
			r := txt(id4(i), "note-"+id4(i))
			if i < scoped {
				r = r.with("user_id", "u"+id4(i%2))
			}
			return r
		})...)
	}
	return []edgeSpec{
		{name: "R-28-one-in-sixteen", rules: rules("R-28", "R-42"), body: scopedOf(1, 16)},
		{name: "R-28-three-in-sixteen", rules: rules("R-28", "R-42"), body: scopedOf(3, 16)},
		{name: "R-28-five-in-sixteen", rules: rules("R-28", "R-42"), body: scopedOf(5, 16)},
		{name: "R-28-one-in-eighty", rules: rules("R-28", "R-42"), body: scopedOf(1, 80)},
		{name: "R-28-one-in-four-hundred", rules: rules("R-28", "R-42"), body: scopedOf(1, 400)},
		{name: "R-28-one-in-a-thousand", rules: rules("R-28", "R-42"), body: scopedOf(1, 1000)},
		{name: "R-28-two-in-three", rules: rules("R-28", "R-42"), body: scopedOf(2, 3)},
		{name: "R-28-one-in-six", rules: rules("R-28", "R-42"), body: scopedOf(1, 6)},
		{name: "R-28-seven-in-eight", rules: rules("R-28", "R-42"), body: scopedOf(7, 8)},
		{name: "R-28-zero-percent", rules: rules("R-28", "R-42"), body: scopedOf(0, 5)},
		{name: "R-28-hundred-percent", rules: rules("R-28", "R-42"), body: scopedOf(5, 5)},
		{name: "R-28-999-in-1000", rules: rules("R-28", "R-42"), body: scopedOf(999, 1000)},
		{name: "R-28-zero-live-denominators", rules: rules("R-28", "liveness", "duplicates"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "is_deleted", true), txt("r2", "note-a", "user_id", "u2", "lifecycle_state", "expired"))},
	}
}
