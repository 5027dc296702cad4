// Package roundtrip_test packs every source's synthetic fixtures (and the two real Letta agent
// files) and runs the result through the engine: the free pre-check must accept it, and the
// audit must give the counts worked out by hand for each fixture.
package roundtrip_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/rules"
)

const td = "../testdata/"

// realLetta is ../shared/fixtures/letta relative to the repository root.
const realLetta = "../../../shared/fixtures/letta/"

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func load(t *testing.T, paths ...string) []pack.File {
	t.Helper()
	var out []pack.File
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pack.File{Name: filepath.Base(p), Data: b})
	}
	return out
}

func programSet(t *testing.T) *rules.ProgramSet {
	t.Helper()
	ps, err := rules.Default()
	if err != nil {
		t.Fatalf("rules.Default: %v", err)
	}
	return ps
}

// audit packs, pre-checks and audits; it returns the report as parsed contract JSON.
func audit(t *testing.T, ps *rules.ProgramSet, in pack.Inputs, opt pack.Options) map[string]any {
	t.Helper()
	res, err := pack.Pack(in, opt)
	if err != nil {
		t.Fatalf("pack: %v", err)
	}
	body, err := res.Submission.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return auditBody(t, ps, body)
}

func auditBody(t *testing.T, ps *rules.ProgramSet, body []byte) map[string]any {
	t.Helper()
	pre, ref, err := evaluator.Precheck(ps, body, now)
	if err != nil || ref != nil {
		t.Fatalf("precheck: refusal %+v err %v", ref, err)
	}
	if pre.Kind != "precheck_result" {
		t.Fatalf("precheck kind %q", pre.Kind)
	}
	rep, ref, err := evaluator.Audit(ps, body, now)
	if err != nil || ref != nil {
		t.Fatalf("audit: refusal %+v err %v", ref, err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// get walks a path of object members.
func get(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

type want struct {
	verdict    string // verdict line up to " — <check_end>"
	scoped     float64
	eligible   float64
	marked     float64
	lineage    float64
	conflicts  map[string]float64 // by sub-check, when assessable
	extraCover map[string]float64 // coverage members
}

func check(t *testing.T, rep map[string]any, w want) {
	t.Helper()
	vl, _ := rep["verdict_line"].(string)
	if i := strings.LastIndex(vl, " — "); i < 0 || vl[:i] != w.verdict {
		t.Errorf("verdict\n got %q\nwant %q", vl, w.verdict)
	}
	if w.eligible > 0 {
		if get(rep, "factors", "scope_presence", "scoped") != w.scoped || get(rep, "factors", "scope_presence", "eligible") != w.eligible {
			t.Errorf("scope_presence %v", get(rep, "factors", "scope_presence"))
		}
	}
	if get(rep, "factors", "cross_scope_clusters", "status") == "ASSESSABLE" {
		if get(rep, "factors", "cross_scope_clusters", "marked_shared") != w.marked || get(rep, "factors", "cross_scope_clusters", "template_lineage") != w.lineage {
			t.Errorf("clusters %v", get(rep, "factors", "cross_scope_clusters"))
		}
	}
	for k, n := range w.conflicts {
		if get(rep, "factors", "scope_conflicts", "by_subcheck", k) != n {
			t.Errorf("conflicts %s: %v", k, get(rep, "factors", "scope_conflicts"))
		}
	}
	for k, n := range w.extraCover {
		if get(rep, "coverage", k) != n {
			t.Errorf("coverage %s: %v", k, get(rep, "coverage", k))
		}
	}
}

func TestRoundTrip(t *testing.T) {
	ps := programSet(t)
	mem0 := pack.Inputs{Records: load(t, td+"mem0-platform/page1.json", td+"mem0-platform/page2.json"), History: load(t, td+"mem0-platform/history.json")}
	lettaIn := pack.Inputs{Records: load(t, td+"letta-af/team.af", td+"letta-af/solo.af"), Passages: load(t, td+"letta-af/passages.json"), Archives: load(t, td+"letta-af/archives.json")}
	var arch []map[string]any
	if err := json.Unmarshal(lettaIn.Archives[0].Data, &arch); err != nil {
		t.Fatal(err)
	}
	agentA := arch[0]["agent_id"].(string)
	const na = "NOT ASSESSABLE"
	cases := []struct {
		name string
		in   pack.Inputs
		opt  pack.Options
		w    want
	}{
		// 9 records; m4 replaced_by, m8 deleted by history: live 7. m8 has no scope: 1/9 unscoped.
		// "aisle" in two user scopes: B2; "policy" marked shared: true in two scopes: B1.
		// "shellfish" twice in one scope: excess 1. session_id stands in run_id on m1, m9.
		{"mem0-platform", mem0, pack.Options{Source: pack.Mem0Platform}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 9 · live: 7 · unscoped: 11.1% · undeclared cross-scope clusters: 1 · conflicts: NOT ASSESSABLE · live duplicates: 1",
			scoped:  8, eligible: 9, marked: 1, extraCover: map[string]float64{"session_id_as_run_id": 2, "b5_not_run": 2}}},
		// Hash-only with the aisle text declared global (hashed locally like the records): both
		// clusters marked shared.
		{"mem0-platform-hash-only", mem0, pack.Options{Source: pack.Mem0Platform, HashOnly: true, Manifest: pack.ManifestOptions{GlobalContentKeys: []string{"Prefers aisle seats"}}}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 9 · live: 7 · unscoped: 11.1% · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 1",
			scoped:  8, eligible: 9, marked: 2}},
		// 5 records, o4 deleted by history.db: live 4; "hiking" in alice/sess-42 and bob/sess-77: B2.
		{"mem0-oss", pack.Inputs{Records: load(t, td+"mem0-oss/get_all.json"), History: load(t, td+"mem0-oss/history.jsonl")}, pack.Options{Source: pack.Mem0OSS}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 5 · live: 4 · unscoped: 0.0% · undeclared cross-scope clusters: 1 · conflicts: NOT ASSESSABLE · live duplicates: 0",
			scoped:  5, eligible: 5}},
		// 6 edges, g3 invalid+expired, g6 invalid only (split state): live 4. Two groups.
		// "works at" in team_alpha and team_beta: B2. g5 cites a team_beta episode, g4 ends on a
		// team_beta node: one conflict each.
		{"graphiti", pack.Inputs{Records: load(t, td+"graphiti/edges.json"), Episodes: load(t, td+"graphiti/episodes.json"), Nodes: load(t, td+"graphiti/nodes.json")}, pack.Options{Source: pack.Graphiti}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 6 · live: 4 · unscoped: 0.0% · undeclared cross-scope clusters: 1 · conflicts: 2 · live duplicates: 0",
			scoped:  6, eligible: 6,
			conflicts: map[string]float64{"episode_group_ids": 1, "endpoint_group_ids": 1, "attributed_scope": 0, "history_scope": 0}, extraCover: map[string]float64{"split_state": 1}}},
		// Two listings (graph acme-kb, user u-4821): 4 records, z4 invalid+expired: live 3.
		// "support hours" in both: B2.
		{"zep-cloud", pack.Inputs{Records: load(t, td+"zep-cloud/edges.graph=acme-kb.json", td+"zep-cloud/edges.user=u-4821.json")}, pack.Options{Source: pack.ZepCloud}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 4 · live: 3 · unscoped: 0.0% · undeclared cross-scope clusters: 1 · conflicts: NOT ASSESSABLE · live duplicates: 0",
			scoped:  4, eligible: 4}},
		// One listing only: single scope, NOT ASSESSABLE by construction.
		{"zep-cloud-single", pack.Inputs{Records: load(t, td+"zep-cloud/edges.graph=acme-kb.json")}, pack.Options{Source: pack.ZepCloud}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 2 · live: 2 · unscoped: NOT ASSESSABLE · undeclared cross-scope clusters: NOT ASSESSABLE · conflicts: NOT ASSESSABLE · live duplicates: 0",
			scoped:  2, eligible: 2}},
		// 8 blocks + 4 passages = 12, all live. Template block-5 and the source passage are not
		// eligible: 10. Unscoped: orphan block-4 and the unresolved-archive passage: 2/10.
		// Clusters: "Name: Priya" {A, af1:agent-1} vs {af2:agent-0}; "holidays" {A} vs
		// {af1:agent-1} (template excluded): 2 B2. "manager" twice in {A}: excess 1.
		{"letta-af", lettaIn, pack.Options{Source: pack.LettaAF, AgentAliases: map[string]string{"af1:agent-0": agentA}}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 12 · live: 12 · unscoped: 20.0% · undeclared cross-scope clusters: 2 · conflicts: NOT ASSESSABLE · live duplicates: 1",
			scoped:  8, eligible: 10, extraCover: map[string]float64{"excluded_templates": 1, "excluded_source_passages": 1}}},
		// 7 blocks + 2 passages = 9, all live; template and source passage not eligible: 7; the
		// orphan unscoped: 1/7. "metric units" {a1} vs {a2}: B2. "escalate" copies share
		// template_id template-42: one template-lineage cluster, not a candidate.
		{"letta-api", pack.Inputs{Records: load(t, td+"letta-api/bundle.json")}, pack.Options{Source: pack.LettaAPI}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 9 · live: 9 · unscoped: 14.3% · undeclared cross-scope clusters: 1 · conflicts: NOT ASSESSABLE · live duplicates: 0",
			scoped:  6, eligible: 7, lineage: 1}},
		// tenant declared: c5 superseded by c4: live 4. "Q3" in acme (x2) and globex: B2 (c3
		// has no source: B5 not run); acme holds "Q3" twice: excess 1.
		{"claims", pack.Inputs{Records: load(t, td+"claims/claims.jsonl")}, pack.Options{Source: pack.ClaimsJSONL, Manifest: pack.ManifestOptions{DeclaredSet: true, DeclaredScopeKeys: []string{"tenant"}}}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 5 · live: 4 · unscoped: 0.0% · undeclared cross-scope clusters: 1 · conflicts: NOT ASSESSABLE · live duplicates: 1",
			scoped:  5, eligible: 5, extraCover: map[string]float64{"b5_not_run": 1}}},
		// No declared keys: the scope factors are NOT ASSESSABLE; one unnamed partition, "Q3"
		// three times: excess 2.
		{"claims-undeclared", pack.Inputs{Records: load(t, td+"claims/claims.jsonl")}, pack.Options{Source: pack.ClaimsJSONL}, want{
			verdict: "MEMORY SCOPE-HYGIENE — records: 5 · live: 4 · unscoped: " + na + " · undeclared cross-scope clusters: " + na + " · conflicts: NOT ASSESSABLE · live duplicates: 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check(t, audit(t, ps, c.in, c.opt), c.w)
		})
	}
}

func TestRoundTripRealAgentFiles(t *testing.T) {
	if _, err := os.Stat(realLetta); err != nil {
		t.Skip("real Letta fixtures absent")
	}
	ps := programSet(t)
	for _, c := range []struct {
		files   []string
		verdict string
	}{
		{[]string{"customer_service.af"}, "MEMORY SCOPE-HYGIENE — records: 2 · live: 2 · unscoped: 0.0% · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 0"},
		{[]string{"loop.af"}, "MEMORY SCOPE-HYGIENE — records: 9 · live: 9 · unscoped: 0.0% · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 0"},
		{[]string{"customer_service.af", "loop.af"}, "MEMORY SCOPE-HYGIENE — records: 11 · live: 11 · unscoped: 0.0% · undeclared cross-scope clusters: 0 · conflicts: NOT ASSESSABLE · live duplicates: 0"},
	} {
		var paths []string
		for _, f := range c.files {
			paths = append(paths, realLetta+f)
		}
		for _, hashOnly := range []bool{false, true} {
			rep := audit(t, ps, pack.Inputs{Records: load(t, paths...)}, pack.Options{Source: pack.LettaAF, HashOnly: hashOnly})
			check(t, rep, want{verdict: c.verdict})
		}
	}
}

// Every part of a split pack passes the pre-check on its own.
func TestRoundTripSplitParts(t *testing.T) {
	ps := programSet(t)
	var sb strings.Builder
	for i := 0; i < 1500; i++ {
		sb.WriteString(`{"id":"c` + itoa(i) + `","content_text":"text ` + itoa(i%700) + `","tenant":"t` + itoa(i%2) + `"}` + "\n")
	}
	res, err := pack.Pack(pack.Inputs{Records: []pack.File{{Name: "c.jsonl", Data: []byte(sb.String())}}},
		pack.Options{Source: pack.ClaimsJSONL, Manifest: pack.ManifestOptions{DeclaredSet: true, DeclaredScopeKeys: []string{"tenant"}}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := res.Submission.Marshal()
	if _, ref, _ := evaluator.Precheck(ps, body, now); ref == nil || ref.Rule != "record_count_cap" {
		t.Fatalf("the unsplit pack must be refused by the engine too: %+v", ref)
	}
	parts, _, err := pack.Split(res.Submission)
	if err != nil {
		t.Fatal(err)
	}
	records := 0
	for _, p := range parts {
		b, _ := p.Marshal()
		rep := auditBody(t, ps, b)
		records += int(rep["records"].(float64))
	}
	if records != 1500 {
		t.Fatalf("records %d", records)
	}
}

func itoa(i int) string {
	b := []byte{}
	if i == 0 {
		return "0"
	}
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
