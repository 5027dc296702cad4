package gen

import "strings"

// regressionSpecs are the cases that settled a disagreement between the engine and this oracle
// (provenance "regression"). Each names the reading it pins down.
func regressionSpecs() []edgeSpec {
	reg := func(s edgeSpec) edgeSpec { s.provenance = ProvenanceRegression; return s }
	// 64 nested arrays whose innermost holds scalars: depth counts containers only.
	scalarsAt64 := `{"family":"generic","form":"full_text","records":[{"id":"a","content_text":"t"}],"x":` +
		strings.Repeat("[", 63) + `1,"s",true,null` + strings.Repeat("]", 63) + `}`
	return []edgeSpec{
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
		// The marked share is in the coverage block even when cross_scope_clusters is NOT
		// ASSESSABLE.
		reg(edgeSpec{name: "R-34-marked-share-in-coverage-when-clusters-not-assessable", rules: rules("R-34", "R-19", "R-43"), body: generic(
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
	}
}
