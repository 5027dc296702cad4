package gen

import "strings"

// regressionSpecs are the cases that settled a disagreement between the engine and this oracle
// (provenance "regression"). Each names the reading it pins down.
func regressionSpecs() []edgeSpec {
	reg := func(s edgeSpec) edgeSpec { s.provenance = ProvenanceRegression; return s }
	// 64 nested arrays whose innermost holds scalars: depth counts containers only.
	scalarsAt64 := `{"family":"generic","form":"full_text","records":[{"id":"a","content_text":"t"}],"x":` +
		strings.Repeat("[", 63) + `1,"s",true,null` + strings.Repeat("]", 63) + `}`
	return append([]edgeSpec{
		reg(edgeSpec{name: "R-51-scalars-inside-64-containers-accepted", rules: rules("R-51", "R-3"), raw: []byte(scalarsAt64)}),
		// A cycle whose only M1 record is unscoped does not resolve: covered needs a scope (R-21, P0).
		reg(edgeSpec{name: "M4-cycle-anchor-unscoped-does-not-resolve", rules: rules("M4", "R-21", "R-35", "N2"), body: mem0(
			txt("a", "same", "user_id", "u1", "origin_claim_id", "b"),
			txt("b", "same", "origin_claim_id", "a", "shared", true),
			txt("c", "same", "user_id", "u2", "shared", true),
		)}),
		// The same cycle anchored by a scoped M1 record resolves.
		reg(edgeSpec{name: "M4-cycle-anchor-scoped-resolves", rules: rules("M4", "R-21", "R-35", "B1"), body: mem0(
			txt("a", "same", "user_id", "u1", "origin_claim_id", "b"),
			txt("b", "same", "user_id", "u3", "origin_claim_id", "a", "shared", true),
			txt("c", "same", "user_id", "u2", "shared", true),
		)}),
		// Template lineage compares JSON values: 1 and 1.0 are one lineage, 1 and 2 are not.
		reg(edgeSpec{name: "L-4-template-lineage-numeric-ids-equal", rules: rules("L-4", "R-24"), body: letta(
			txt("b1", "persona", "attached_to", list("ag1"), "template_id", 1),
			txt("b2", "persona", "attached_to", list("ag2"), "template_id", 1.0),
		)}),
		reg(edgeSpec{name: "L-4-template-lineage-numeric-ids-differ", rules: rules("L-4", "R-24", "B2"), body: letta(
			txt("b1", "persona", "attached_to", list("ag1"), "template_id", 1),
			txt("b2", "persona", "attached_to", list("ag2"), "template_id", 2),
		)}),
		// A Zep Cloud single-scope export computes no clusters: nothing in coverage either.
		reg(edgeSpec{name: "R-13-zep_cloud-single-scope-computes-no-clusters", rules: rules("R-13", "B5", "L-4"), body: zep(
			txt("e1", "fact", "graph_id", "g1", "source", "s1"),
			txt("e2", "fact", "graph_id", "g1", "source", "s2", "shared", true),
		).with("variant", "zep_cloud")}),
		// A history_scope that is not a string conflicts.
		reg(edgeSpec{name: "R-26-history_scope-non-string-conflicts", rules: rules("R-26", "R-32"), body: mem0(
			txt("a", "x", "user_id", "u1", "history_scope", 7),
			txt("b", "y", "user_id", "u1", "history_scope", obj{"k": "u1"}),
			txt("c", "z", "user_id", "u1", "history_scope", "u1"),
		)}),
		// Revision 1.0.1 (issue 11). Content fields are never scope keys: a manifest declaring one
		// is malformed, for every family, Letta included.
		reg(edgeSpec{name: "R-52-declared-content_text-refused-mem0", rules: rules("R-52", "declared_scope_keys_invalid"),
			body: mem0(txt("a", "x", "user_id", "u1")).manifest("declared_scope_keys", list("user_id", "content_text"))}),
		reg(edgeSpec{name: "R-52-declared-content_hash-refused-zep", rules: rules("R-52", "declared_scope_keys_invalid"),
			body: ex("zep_graphiti", "hash_only", hsh("a", "h1", "group_id", "g1")).manifest("declared_scope_keys", list("content_hash"))}),
		reg(edgeSpec{name: "R-52-declared-content-field-refused-letta", rules: rules("R-52", "declared_scope_keys_invalid", "L-1"),
			body: letta(txt("a", "x", "attached_to", list("ag1"))).manifest("declared_scope_keys", list("content_text"))}),
		reg(edgeSpec{name: "R-52-declared-other-form-content-field-refused-generic", rules: rules("R-52", "declared_scope_keys_invalid"),
			body: ex("generic", "hash_only", hsh("a", "h1", "content_text", "t1")).manifest("declared_scope_keys", list("tenant", "content_text"))}),
		// Zep Cloud with one live non-global graph: no cluster can form, so cross_scope_clusters is
		// NOT ASSESSABLE whatever else R-47 counts as a scope: a global record ...
		reg(edgeSpec{name: "R-53-zep_cloud-one-live-graph-plus-global", rules: rules("R-53", "R-13", "R-47", "M2"), body: zep(
			txt("e1", "fact", "graph_id", "g1"),
			txt("e2", "fact", "graph_id", "g1"),
			txt("e3", "other", "graph_id", "global"),
		).with("variant", "zep_cloud")}),
		// ... or a deleted record in another graph.
		reg(edgeSpec{name: "R-53-zep_cloud-one-live-graph-plus-deleted", rules: rules("R-53", "R-13", "R-15"), body: zep(
			txt("e1", "fact", "graph_id", "g1"),
			txt("e2", "fact", "graph_id", "g2", "is_deleted", true),
		).with("variant", "zep_cloud")}),
		// With multi_scope true the published text makes the factor assessable: an assessed zero.
		reg(edgeSpec{name: "R-53-zep_cloud-one-live-graph-multi_scope-assessed-zero", rules: rules("R-53", "R-13", "R-6"), body: zep(
			txt("e1", "fact", "graph_id", "g1"),
			txt("e2", "fact", "graph_id", "g2", "is_deleted", true),
		).with("variant", "zep_cloud").manifest("multi_scope", true)}),
		// A non-string group_id conflicts with every value of the group id lists; an absent one
		// compares as "".
		reg(edgeSpec{name: "R-32-group_id-non-string-conflicts", rules: rules("R-32", "R-26"), body: zep(
			txt("a", "x", "graph_id", "k1", "group_id", true, "episode_group_ids", list("")),
			txt("b", "y", "graph_id", "k1", "group_id", 3, "endpoint_group_ids", ""),
			txt("c", "z", "graph_id", "k1", "episode_group_ids", list("")),
			txt("d", "w", "graph_id", "k1", "group_id", nil, "endpoint_group_ids", list("")),
		)}),
		// Revision 1.0.1 printed the marked share in the coverage block even when
		// cross_scope_clusters is NOT ASSESSABLE; revision 1.0.2 leaves it out, with
		// the other facts of the marker convention. The case keeps its 1.0.1 name.
		reg(edgeSpec{name: "R-34-marked-share-in-coverage-when-clusters-not-assessable", rules: rules("R-34", "R-54", "R-19", "R-43"), body: generic(
			txt("a", "x", "shared", true),
			txt("b", "y"),
		)}),
		// The M4 depth limit is the size of the cluster L-4 defines: Letta templates do not count
		// so a three-hop chain through templates fails beside a two-copy cluster.
		reg(edgeSpec{name: "R-33-letta-m4-depth-excludes-templates", rules: rules("R-33", "R-21", "R-35", "L-4", "M4", "N2"), body: letta(
			txt("x1", "persona", "attached_to", list("ag1"), "origin_claim_id", "t1"),
			txt("x2", "persona", "attached_to", list("ag2"), "shared", true),
			txt("t1", "persona", "attached_to", list("ag3"), "is_template", true, "origin_claim_id", "t2"),
			txt("t2", "persona", "attached_to", list("ag4"), "is_template", true, "origin_claim_id", "t3"),
			txt("t3", "persona", "attached_to", list("ag5"), "is_template", true),
		)}),
	}, revision102Specs(reg)...)
}

// revision102Specs are the regression cases of revision 1.0.2 (issue 25).
func revision102Specs(reg func(edgeSpec) edgeSpec) []edgeSpec {
	// A value of exactly n bytes, with or without a space (R-55's thresholds).
	spaced := func(n int) string { return "the user " + strings.Repeat("x", n-9) }
	solid := func(n int) string { return strings.Repeat("k", n) }
	return []edgeSpec{
		// Item 6 (R-54): a generic export with no scope keys printed "marked share 0.0%
		// (0/2)" and "B5 not run 0 · template lineage 0" for a NOT ASSESSABLE factor.
		reg(edgeSpec{name: "R-54-generic-no-keys-coverage-has-no-marker-facts", rules: rules("R-54", "R-34", "R-43"), body: generic(
			txt("a", "x"),
			txt("b", "x"),
		)}),
		reg(edgeSpec{name: "R-54-generic-empty-declared-list-m3-not-printed", rules: rules("R-54", "R-43", "R-25", "M3"), body: generic(
			txt("a", "x", "shared", true, "source", "s1"),
			txt("b", "x", "source", "s2"),
		).manifest("declared_scope_keys", list(), "global_content_keys", list("x", "absent"), "global_claim_ids", list("zz"))}),
		reg(edgeSpec{name: "R-54-zep_cloud-single-scope-coverage-has-no-marker-facts", rules: rules("R-54", "R-13"), body: zep(
			txt("e1", "fact", "group_id", "g1"),
			txt("e2", "fact", "group_id", "g1", "shared", true),
		).with("variant", "zep_cloud")}),
		reg(edgeSpec{name: "R-54-zep_cloud-one-live-graph-coverage-has-no-marker-facts", rules: rules("R-54", "R-53"), body: zep(
			txt("e1", "fact", "graph_id", "g1", "source", "a"),
			txt("e2", "fact", "graph_id", "g2", "is_deleted", true),
		).with("variant", "zep_cloud").manifest("global_scopes", list("g9"))}),
		// The same facts stay when the factor is ASSESSABLE, zeros included (assessed).
		reg(edgeSpec{name: "R-54-assessable-clusters-keep-marker-facts", rules: rules("R-54", "R-34", "B2", "R-39"), body: mem0(
			txt("a", "x", "user_id", "u1"),
			txt("b", "x", "user_id", "u2"),
		)}),
		reg(edgeSpec{name: "R-54-generic-declared-keys-no-cluster-assessed-zeros", rules: rules("R-54", "R-34"), body: genericKeys(list("tenant"),
			txt("a", "x", "tenant", "t1"),
			txt("b", "y", "tenant", "t2"),
		)}),
		// Item 7: a declared key holding content printed that content as a scope.
		reg(edgeSpec{name: "R-55-declared-memory-refused-mem0", rules: rules("R-55", "declared_scope_keys_invalid"),
			body: mem0(txt("a", "x", "user_id", "u", "memory", "likes pizza")).manifest("declared_scope_keys", list("user_id", "memory"))}),
		reg(edgeSpec{name: "R-55-declared-fact-refused-zep", rules: rules("R-55", "declared_scope_keys_invalid"),
			body: zep(txt("e1", "x", "group_id", "g1")).manifest("declared_scope_keys", list("group_id", "fact"))}),
		reg(edgeSpec{name: "R-55-declared-value-refused-letta", rules: rules("R-55", "declared_scope_keys_invalid", "L-1"),
			body: letta(txt("b1", "x", "attached_to", list("ag1"))).manifest("declared_scope_keys", list("value"))}),
		reg(edgeSpec{name: "R-55-declared-text-refused-generic-hash_only", rules: rules("R-55", "declared_scope_keys_invalid"),
			body: ex("generic", "hash_only", hsh("a", "h1", "tenant", "t1")).manifest("declared_scope_keys", list("tenant", "text"))}),
		reg(edgeSpec{name: "R-55-declared-data-and-content-refused", rules: rules("R-55", "declared_scope_keys_invalid"),
			body: genericKeys(list("content"), txt("a", "x", "content", "c"))}),
		reg(edgeSpec{name: "R-55-declared-name-exact-case-accepted", rules: rules("R-55", "R-9"),
			body: genericKeys(list("Memory", "DATA", " text"), txt("a", "x", "Memory", "m1"), txt("b", "x", "Memory", "m2"))}),
		reg(edgeSpec{name: "R-55-names-before-free-text", rules: rules("R-55", "R-1", "declared_scope_keys_invalid"),
			body: genericKeys(list("topic", "data"), txt("a", "x", "topic", solid(300)))}),
		reg(edgeSpec{name: "R-55-free-text-value-refused-generic", rules: rules("R-55", "declared_scope_keys_invalid"), body: genericKeys(list("topic"),
			txt("a", "x", "topic", "alice"),
			txt("b", "y", "topic", "The user said that they prefer dark mode in every app they use it."),
		)}),
		reg(edgeSpec{name: "R-55-free-text-first-record-in-array-order", rules: rules("R-55", "R-1", "declared_scope_keys_invalid"), body: mem0(
			txt("a", "x", "user_id", "u1", "team", "t1"),
			txt("b", "x", "user_id", solid(257), "team", "t1", "is_deleted", true),
			txt("c", "x", "user_id", "u3", "team", spaced(65)),
		).manifest("declared_scope_keys", list("team", "user_id"))}),
		reg(edgeSpec{name: "R-55-free-text-64-bytes-with-space-accepted", rules: rules("R-55", "R-9"), body: genericKeys(list("topic"),
			txt("a", "x", "topic", spaced(64)),
			txt("b", "x", "topic", "a b"),
		)}),
		reg(edgeSpec{name: "R-55-free-text-65-bytes-with-space-refused", rules: rules("R-55", "declared_scope_keys_invalid"), body: genericKeys(list("topic"),
			txt("a", "x", "topic", "a b"),
			txt("b", "x", "topic", spaced(65)),
		)}),
		reg(edgeSpec{name: "R-55-free-text-whitespace-kinds-refused", rules: rules("R-55", "declared_scope_keys_invalid"), body: genericKeys(list("topic"),
			txt("a", "x", "topic", solid(70)+"\u00a0"),
			txt("b", "x", "topic", solid(64)+"\t"),
		)}),
		reg(edgeSpec{name: "R-55-free-text-256-bytes-solid-accepted", rules: rules("R-55", "R-9"), body: zep(
			txt("e1", "x", "group_id", solid(256)),
			txt("e2", "x", "group_id", "g2"),
		).manifest("declared_scope_keys", list("group_id"))}),
		reg(edgeSpec{name: "R-55-free-text-257-bytes-solid-refused", rules: rules("R-55", "declared_scope_keys_invalid"), body: zep(
			txt("e1", "x", "group_id", "g1"),
			txt("e2", "x", "group_id", solid(257)),
		).manifest("declared_scope_keys", list("group_id"))}),
		reg(edgeSpec{name: "R-55-free-text-bytes-not-characters", rules: rules("R-55", "declared_scope_keys_invalid"), body: genericKeys(list("topic"),
			txt("a", "x", "topic", strings.Repeat("é", 129)),
		)}),
		// What the service cannot know: these are audited and printed as submitted.
		reg(edgeSpec{name: "R-55-letta-declared-keys-not-scanned", rules: rules("R-55", "R-8", "L-1"), body: letta(
			txt("b1", "x", "attached_to", list("ag1"), "topic", spaced(300)),
			txt("b2", "x", "attached_to", list("ag2")),
		).manifest("declared_scope_keys", list("topic"))}),
		reg(edgeSpec{name: "R-55-default-keys-not-scanned", rules: rules("R-55", "R-8"), body: mem0(
			txt("a", "x", "user_id", spaced(300)),
			txt("b", "x", "user_id", "u2"),
		)}),
		reg(edgeSpec{name: "R-55-undeclared-metadata-and-non-string-not-read", rules: rules("R-55", "R-7"), body: genericKeys(list("topic"),
			txt("a", "x", "topic", "t1", "notes", spaced(300), "metadata", obj{"topic": spaced(300)}),
			txt("b", "x", "topic", list(spaced(300))),
		)}),
		reg(edgeSpec{name: "R-55-short-content-under-declared-key-printed", rules: rules("R-55", "B2"), body: genericKeys(list("topic"),
			txt("a", "likes pizza", "topic", "likes pizza"),
			txt("b", "likes pizza", "topic", "likes sushi"),
		)}),
	}
}
