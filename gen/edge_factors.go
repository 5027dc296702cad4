package gen

// matrixSpecs: every family, form and variant (and the default variant), with a
// body that touches every factor.
func matrixSpecs() []edgeSpec {
	var out []edgeSpec
	for _, family := range familyOrder {
		for _, form := range formOrder {
			variants := append([]string{""}, familyVariants[family]...)
			for _, variant := range variants {
				body := matrixBody(family, form)
				name := "assessability_matrix-" + family + "-" + form + "-"
				if variant == "" {
					name += "default"
				} else {
					body = body.with("variant", variant)
					name += variant
				}
				out = append(out, edgeSpec{name: name, rules: rules("assessability_matrix", "free_precheck", "verdict_grammar"), body: body})
			}
		}
	}
	return out
}

// matrixGateSpecs: for every family, form and variant, a body on which the
// family's own gates hold (scope-filtered Mem0, single-scope Zep/Graphiti, Letta
// with no eligible record, generic with no declared keys).
func matrixGateSpecs() []edgeSpec {
	var out []edgeSpec
	for _, family := range familyOrder {
		for _, form := range formOrder {
			for _, variant := range familyVariants[family] {
				rec := func(id, content string, kv ...any) obj {
					if form == "full_text" {
						return txt(id, content, kv...)
					}
					return hsh(id, "h-"+content, kv...)
				}
				var body obj
				switch family {
				case "mem0":
					body = ex(family, form, rec("r1", "a", "user_id", "u1"), rec("r2", "a", "user_id", "u2"), rec("r3", "b")).manifest("scope_filtered", true)
				case "zep_graphiti":
					body = ex(family, form, rec("r1", "a", "group_id", "g1"), rec("r2", "a", "group_id", "g1"), rec("r3", "b"))
				case "letta":
					body = ex(family, form, rec("r1", "a", "is_template", true, "attached_to", list("a1")), rec("r2", "a", "is_template", true, "attached_to", list("a2")), rec("r3", "b", "file_id", "f1"))
				default:
					body = ex(family, form, rec("r1", "a", "tenant", "t1"), rec("r2", "a", "tenant", "t2"), rec("r3", "b", "state", "pending"))
				}
				body = body.with("variant", variant)
				out = append(out, edgeSpec{
					name:  "assessability_matrix-gates-" + family + "-" + form + "-" + variant,
					rules: rules("assessability_matrix", "free_precheck", "extension_rule", "R-28"),
					body:  body,
				})
			}
		}
	}
	return out
}

// matrixBody is a small export of the family and form with two scopes, a
// cross-scope spread, an intra-scope duplicate and a conflict field.
func matrixBody(family, form string) obj {
	rec := func(id, content string, kv ...any) obj {
		if form == "full_text" {
			return txt(id, content, kv...)
		}
		return hsh(id, "h-"+content, kv...)
	}
	switch family {
	case "mem0":
		return ex(family, form,
			rec("r1", "a", "user_id", "u1", "attributed_scope", "u2"),
			rec("r2", "a", "user_id", "u2"),
			rec("r3", "b", "user_id", "u2"),
			rec("r4", "b", "user_id", "u2"),
			rec("r5", "c"))
	case "zep_graphiti":
		return ex(family, form,
			rec("r1", "a", "group_id", "g1", "episode_group_ids", list("g1")),
			rec("r2", "a", "group_id", "g2", "episode_group_ids", "g3"),
			rec("r3", "b", "group_id", "g2"),
			rec("r4", "b", "group_id", "g2", "invalid_at", "2026-01-01T00:00:00Z"),
			rec("r5", "b", "group_id", "g2"))
	case "letta":
		return ex(family, form,
			rec("r1", "a", "attached_to", list("a1")),
			rec("r2", "a", "attached_to", list("a2")),
			rec("r3", "b", "attached_to", list("a1", "a2")),
			rec("r4", "b", "attached_to", list("a2", "a1")),
			rec("r5", "c", "is_template", true, "attached_to", list("a1")),
			rec("r6", "d", "file_id", "f1"))
	default:
		return ex(family, form,
			rec("r1", "a", "tenant", "t1"),
			rec("r2", "a", "tenant", "t2"),
			rec("r3", "b", "tenant", "t2"),
			rec("r4", "b", "tenant", "t2")).manifest("declared_scope_keys", list("tenant"))
	}
}

// gateSpecs: every gate of the contract's status table.
func gateSpecs() []edgeSpec {
	zg := func(variant string, recs ...obj) obj { return zep(recs...).with("variant", variant) }
	return []edgeSpec{
		{name: "unscoped_rate-mem0-scope-filtered", rules: rules("unscoped_rate", "assessability_matrix"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-b")).manifest("scope_filtered", true)},
		{name: "unscoped_rate-mem0-scope-filtered-hash-only", rules: rules("unscoped_rate", "assessability_matrix"),
			body: ex("mem0", "hash_only", hsh("r1", "h1", "user_id", "u1")).with("variant", "oss").manifest("scope_filtered", true)},
		{name: "unscoped_rate-mem0-scope-filtered-string-ignored", rules: rules("unscoped_rate", "R-6", "R-45"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-b")).manifest("scope_filtered", "true")},
		{name: "unscoped_rate-mem0-scope-filtered-false", rules: rules("unscoped_rate", "R-6"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-b")).manifest("scope_filtered", false)},
		{name: "unscoped_rate-scope-filtered-not-a-zep-gate", rules: rules("unscoped_rate", "assessability_matrix"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-b", "group_id", "g2")).manifest("scope_filtered", true)},
		{name: "unscoped_rate-graphiti-single-scope", rules: rules("unscoped_rate", "R-13", "R-47"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-b", "group_id", "g1"), txt("r3", "note-c"))},
		{name: "unscoped_rate-graphiti-no-scope", rules: rules("unscoped_rate", "R-47"),
			body: zep(txt("r1", "note-a"), txt("r2", "note-b"))},
		{name: "unscoped_rate-graphiti-two-scopes", rules: rules("unscoped_rate", "R-47"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-b", "group_id", "g2"), txt("r3", "note-c"))},
		{name: "unscoped_rate-graphiti-multi-scope-manifest", rules: rules("unscoped_rate", "R-6"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-b")).manifest("multi_scope", true)},
		{name: "unscoped_rate-graphiti-multi-scope-string-ignored", rules: rules("unscoped_rate", "R-6", "R-45"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-b")).manifest("multi_scope", "true")},
		{name: "unscoped_rate-graphiti-second-scope-not-live", rules: rules("unscoped_rate", "R-13"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-b", "group_id", "g2", "expired_at", "2026-02-01T00:00:00Z", "invalid_at", "2026-02-01T00:00:00Z"))},
		{name: "unscoped_rate-graphiti-global-counts-as-scope", rules: rules("unscoped_rate", "R-47", "M2"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-a", "group_id", "global"))},
		{name: "unscoped_rate-graphiti-graph-id-tuple", rules: rules("unscoped_rate", "R-9", "R-47"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-a", "group_id", "g1", "graph_id", "k1"))},
		{name: "unscoped_rate-zep-cloud-single-scope", rules: rules("unscoped_rate", "cross_scope_clusters", "R-13"),
			body: zg("zep_cloud", txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-a", "group_id", "g1"))},
		{name: "unscoped_rate-zep-cloud-single-scope-hash-only", rules: rules("unscoped_rate", "cross_scope_clusters", "R-13"),
			body: ex("zep_graphiti", "hash_only", hsh("r1", "h1", "graph_id", "k1"), hsh("r2", "h2")).with("variant", "zep_cloud")},
		{name: "unscoped_rate-zep-cloud-multi-graph", rules: rules("unscoped_rate", "cross_scope_clusters", "B2"),
			body: zg("zep_cloud", txt("r1", "note-a", "graph_id", "k1"), txt("r2", "note-a", "graph_id", "k2"))},
		{name: "unscoped_rate-zep-cloud-multi-scope-manifest", rules: rules("unscoped_rate", "cross_scope_clusters"),
			body: zg("zep_cloud", txt("r1", "note-a", "graph_id", "k1")).manifest("multi_scope", true)},
		{name: "scope_presence-generic-no-manifest", rules: rules("scope_presence", "extension_rule", "R-43"),
			body: generic(txt("r1", "note-a", "tenant", "t1"), txt("r2", "note-a", "tenant", "t1"))},
		{name: "scope_presence-generic-manifest-without-keys", rules: rules("scope_presence", "extension_rule", "R-43"),
			body: generic(txt("r1", "note-a", "tenant", "t1")).manifest("global_scopes", list("t1"))},
		{name: "scope_presence-generic-empty-key-list", rules: rules("scope_presence", "extension_rule", "R-8", "R-43"),
			body: generic(txt("r1", "note-a", "tenant", "t1"), txt("r2", "note-a")).manifest("declared_scope_keys", list())},
		{name: "scope_presence-generic-declared-keys", rules: rules("scope_presence", "extension_rule"),
			body: genericKeys(list("tenant"), txt("r1", "note-a", "tenant", "t1"), txt("r2", "note-b"), txt("r3", "note-c", "project", "p1"))},
		{name: "scope_presence-generic-hash-only-no-keys", rules: rules("scope_presence", "extension_rule"),
			body: ex("generic", "hash_only", hsh("r1", "h1"), hsh("r2", "h1"))},
		{name: "scope_presence-letta-no-eligible-records", rules: rules("scope_presence", "unscoped_rate", "L-4", "R-28"),
			body: letta(txt("r1", "note-a", "is_template", true, "attached_to", list("a1")), txt("r2", "note-b", "source_passage", true))},
		{name: "scope_presence-mem0-empty-key-list", rules: rules("scope_presence", "R-8"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-a", "user_id", "u2")).manifest("declared_scope_keys", list())},
		{name: "scope_presence-zep-empty-key-list", rules: rules("scope_presence", "R-8"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-a", "group_id", "g2")).manifest("declared_scope_keys", list())},
		{name: "scope_conflicts-mem0-no-checked-field", rules: rules("scope_conflicts"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "storage_scope", "u2"))},
		{name: "scope_conflicts-mem0-checked-fields-not-set", rules: rules("scope_conflicts"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "attributed_scope", "", "history_scope", nil, "episode_group_ids", list(), "endpoint_group_ids", false))},
		{name: "scope_conflicts-letta-not-assessable", rules: rules("scope_conflicts", "L-1"),
			body: letta(txt("r1", "note-a", "attached_to", list("a1"), "attributed_scope", "a2"))},
		{name: "scope_conflicts-generic-not-assessable", rules: rules("scope_conflicts", "extension_rule"),
			body: genericKeys(list("tenant"), txt("r1", "note-a", "tenant", "t1", "attributed_scope", "t2", "episode_group_ids", "x"))},
		{name: "scope_conflicts-zep-checked-field-on-dead-record", rules: rules("scope_conflicts", "R-26"),
			body: zep(txt("r1", "note-a", "group_id", "g1"), txt("r2", "note-b", "group_id", "g2", "is_deleted", true, "history_scope", "g1"))},
	}
}

// scopeSpecs: scope keys, tuples, strings, M2 and non-string values.
func scopeSpecs() []edgeSpec {
	return []edgeSpec{
		{name: "R-8-session-id-stands-in", rules: rules("R-8", "R-44", "extension_rule", "B2"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "session_id", "s1"), txt("r2", "note-a", "user_id", "u1", "run_id", "s1"), txt("r3", "note-a", "user_id", "u1", "session_id", "s2"))},
		{name: "R-8-session-id-not-when-run-id-counts", rules: rules("R-8", "R-44"),
			body: mem0(txt("r1", "note-a", "run_id", "x1", "session_id", "s1"), txt("r2", "note-a", "run_id", "", "session_id", "s1"))},
		{name: "R-8-session-id-under-declared-keys", rules: rules("R-8", "R-44", "extension_rule"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "session_id", "s1"), txt("r2", "note-a", "user_id", "u1", "session_id", "s2")).manifest("declared_scope_keys", list("user_id", "run_id"))},
		{name: "R-8-declared-key-repeated", rules: rules("R-8", "extension_rule"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "agent_id", "g1"), txt("r2", "note-a", "agent_id", "g1", "user_id", "u1")).manifest("declared_scope_keys", list("agent_id", "user_id", "agent_id"))},
		{name: "R-8-declared-keys-replace-defaults", rules: rules("R-8", "extension_rule", "B2"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "tenant", "t1"), txt("r2", "note-a", "user_id", "u2", "tenant", "t1"), txt("r3", "note-b", "tenant", "t2")).manifest("declared_scope_keys", list("tenant"))},
		{name: "R-7-non-string-scope-values", rules: rules("R-7", "scope_presence"),
			body: mem0(txt("r1", "note-a", "user_id", 5), txt("r2", "note-a", "user_id", true, "agent_id", "g1"), txt("r3", "note-b", "user_id", "", "app_id", nil), txt("r4", "note-c", "run_id", list("x")))},
		{name: "R-9-tuple-identity-not-string", rules: rules("R-9", "R-36", "N5"),
			body: mem0(txt("r1", "note-a", "user_id", "u1/g1"), txt("r2", "note-a", "user_id", "u1", "agent_id", "g1"))},
		{name: "R-9-declared-order-string", rules: rules("R-9", "B2"),
			body: mem0(txt("r1", "note-a", "user_id", "u1", "agent_id", "g1"), txt("r2", "note-a", "user_id", "u2", "agent_id", "g1")).manifest("declared_scope_keys", list("agent_id", "user_id"))},
		{name: "R-9-same-values-different-keys", rules: rules("R-9", "N5"),
			body: mem0(txt("r1", "note-a", "user_id", "x1"), txt("r2", "note-a", "agent_id", "x1"))},
		{name: "M2-global-any-key", rules: rules("M2", "R-10", "duplicates"),
			body: mem0(txt("r1", "note-a", "user_id", "global"), txt("r2", "note-a", "agent_id", "global"), txt("r3", "note-a", "user_id", "u1"))},
		{name: "M2-global-plus-two-scopes", rules: rules("M2", "R-22", "B2"),
			body: mem0(txt("r1", "note-a", "user_id", "global"), txt("r2", "note-a", "user_id", "u1"), txt("r3", "note-a", "user_id", "u2"))},
		{name: "M2-global-with-second-key-not-global", rules: rules("M2", "R-10", "B2"),
			body: mem0(txt("r1", "note-a", "user_id", "global", "agent_id", "g1"), txt("r2", "note-a", "user_id", "global", "agent_id", "g2"))},
		{name: "M2-non-reserved-values", rules: rules("M2", "B2"),
			body: mem0(txt("r1", "note-a", "user_id", "GLOBAL"), txt("r2", "note-a", "user_id", " global"), txt("r3", "note-a", "user_id", "shared"), txt("r4", "note-a", "user_id", "*"), txt("r5", "note-a", "user_id", "all"))},
		{name: "M2-generic-global-partition", rules: rules("M2", "duplicates"),
			body: genericKeys(list("tenant", "project"), txt("r1", "note-a", "tenant", "global"), txt("r2", "note-a", "project", "global"), txt("r3", "note-a", "tenant", "t1", "project", "global"))},
		{name: "P0-unscoped-never-clusters", rules: rules("P0", "R-11", "duplicates"),
			body: mem0(txt("r1", "note-a"), txt("r2", "note-a"), txt("r3", "note-a", "user_id", "u1"), txt("r4", "note-a", "shared", true))},
		{name: "extension_rule-undeclared-key-ignored", rules: rules("extension_rule", "R-8"),
			body: mem0(txt("r1", "note-a", "tenant", "t1", "source", "user u1"), txt("r2", "note-a", "tenant", "t2"))},
		{name: "extension_rule-zep-default-keys", rules: rules("extension_rule", "R-47", "B2"),
			body: zep(txt("r1", "note-a", "group_id", "g1", "user_id", "u1"), txt("r2", "note-a", "group_id", "g2", "user_id", "u1"))},
	}
}

// livenessSpecs: every liveness condition of factor_rules (R-14..R-17).
func livenessSpecs() []edgeSpec {
	u := func(id string, kv ...any) obj { return txt(id, "note-a", append([]any{"user_id", "u1"}, kv...)...) }
	return []edgeSpec{
		{name: "liveness-supersedes-string", rules: rules("liveness", "R-14", "duplicates"),
			body: mem0(u("r1"), u("r2", "supersedes", "r1"), u("r3"))},
		{name: "liveness-supersedes-array", rules: rules("liveness", "R-14"),
			body: mem0(u("r1"), u("r2"), u("r3", "supersedes", list("r1", "r2", 7, "gone-1")), u("r4"))},
		{name: "liveness-supersedes-self-reference", rules: rules("liveness", "R-14"),
			body: mem0(u("r1", "supersedes", "r1"), u("r2"))},
		{name: "liveness-supersedes-dangling-distinct", rules: rules("liveness", "R-14"),
			body: mem0(u("r1", "supersedes", "gone-1"), u("r2", "supersedes", list("gone-1", "gone-2")), u("r3"))},
		{name: "liveness-supersedes-from-dead-record", rules: rules("liveness", "R-14"),
			body: mem0(u("r1"), u("r2", "supersedes", "r1", "is_deleted", true), u("r3"))},
		{name: "liveness-supersedes-number-ignored", rules: rules("liveness", "R-14"),
			body: mem0(u("r1"), u("r2", "supersedes", 1))},
		{name: "liveness-replaced-by", rules: rules("liveness", "R-15"),
			body: mem0(u("r1", "replaced_by", "r9"), u("r2", "replaced_by", ""), u("r3", "replaced_by", nil), u("r4", "replaced_by", false), u("r5", "replaced_by", 0))},
		{name: "liveness-superseded-by", rules: rules("liveness", "R-15"),
			body: mem0(u("r1", "superseded_by", "r2"), u("r2"), u("r3", "superseded_by", list()), u("r4", "superseded_by", obj{}), u("r5", "superseded_by", list("r2")))},
		{name: "liveness-is-deleted", rules: rules("liveness", "R-15"),
			body: mem0(u("r1", "is_deleted", true), u("r2", "is_deleted", "true"), u("r3", "is_deleted", false), u("r4", "is_deleted", 1), u("r5"))},
		{name: "liveness-invalid-at-split", rules: rules("liveness", "R-16"),
			body: zep(txt("r1", "note-a", "group_id", "g1", "invalid_at", "2026-01-01T00:00:00Z"), txt("r2", "note-a", "group_id", "g1"), txt("r3", "note-b", "group_id", "g2"))},
		{name: "liveness-expired-at-split", rules: rules("liveness", "R-16"),
			body: mem0(u("r1", "expired_at", "2026-01-01T00:00:00Z"), u("r2"))},
		{name: "liveness-both-timestamps-not-split", rules: rules("liveness", "R-16"),
			body: zep(txt("r1", "note-a", "group_id", "g1", "invalid_at", "2026-01-01T00:00:00Z", "expired_at", "2026-01-02T00:00:00Z"), txt("r2", "note-a", "group_id", "g2"))},
		{name: "liveness-timestamps-unset-values", rules: rules("liveness", "R-15", "R-16"),
			body: zep(txt("r1", "note-a", "group_id", "g1", "invalid_at", nil, "expired_at", ""), txt("r2", "note-a", "group_id", "g2", "invalid_at", false), txt("r3", "note-a", "group_id", "g3", "expired_at", 0))},
		{name: "liveness-lifecycle-states", rules: rules("liveness", "R-15"),
			body: mem0(u("r1", "lifecycle_state", "superseded"), u("r2", "lifecycle_state", "deleted"), u("r3", "lifecycle_state", "expired"), u("r4", "lifecycle_state", "active"), u("r5"))},
		{name: "liveness-state-values", rules: rules("liveness", "R-15"),
			body: generic(u("r1", "state", "superseded"), u("r2", "state", "deleted"), u("r3", "state", "expired"), u("r4", "state", "live"))},
		{name: "liveness-states-case-sensitive", rules: rules("liveness", "R-15"),
			body: mem0(u("r1", "lifecycle_state", "Deleted"), u("r2", "state", "EXPIRED"), u("r3", "state", " superseded"), u("r4"))},
		{name: "liveness-dead-records-never-cluster", rules: rules("liveness", "marker_convention", "duplicates"),
			body: mem0(txt("r1", "note-a", "user_id", "u1"), txt("r2", "note-a", "user_id", "u2", "is_deleted", true), txt("r3", "note-a", "user_id", "u3", "superseded_by", "r1"))},
		{name: "liveness-no-live-records", rules: rules("liveness", "R-28"),
			body: mem0(u("r1", "is_deleted", true), u("r2", "state", "deleted"))},
		{name: "R-17-contested-generic-pending", rules: rules("R-17", "R-48", "duplicates"),
			body: genericKeys(list("tenant"), txt("r1", "note-a", "tenant", "t1", "state", "pending"), txt("r2", "note-a", "tenant", "t1"), txt("r3", "note-a", "tenant", "t1"), txt("r4", "note-a", "tenant", "t2", "state", "pending"))},
		{name: "R-17-contested-stays-in-clusters", rules: rules("R-17", "B2"),
			body: genericKeys(list("tenant"), txt("r1", "note-a", "tenant", "t1", "state", "pending"), txt("r2", "note-a", "tenant", "t2", "state", "pending"))},
		{name: "R-17-pending-not-contested-outside-generic", rules: rules("R-17", "duplicates"),
			body: mem0(u("r1", "state", "pending"), u("r2", "state", "pending"))},
		{name: "R-17-pending-dead-not-contested", rules: rules("R-17", "liveness"),
			body: generic(txt("r1", "note-a", "state", "pending", "is_deleted", true), txt("r2", "note-a", "state", "Pending"), txt("r3", "note-a", "lifecycle_state", "pending"))},
		{name: "R-17-contested-scopeless-generic", rules: rules("R-17", "R-48", "duplicates"),
			body: ex("generic", "hash_only", hsh("r1", "h1", "state", "pending"), hsh("r2", "h1"), hsh("r3", "h1"))},
	}
}
