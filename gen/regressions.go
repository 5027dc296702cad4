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
	}
}
