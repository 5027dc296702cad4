package pack

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Hand-worked expectations for every fixture are written next to each test; the round-trip
// tests (pack/roundtrip) check the same numbers through the engine.

func TestMem0Platform(t *testing.T) {
	in := Inputs{
		Records: files(t, td("mem0-platform/page1.json"), td("mem0-platform/page2.json")),
		History: files(t, td("mem0-platform/history.json")),
	}
	sub, recs, inv, _ := packed(t, in, Options{Source: Mem0Platform})
	if sub["family"] != "mem0" || sub["variant"] != "platform" || sub["form"] != "full_text" {
		t.Fatalf("header %v %v %v", sub["family"], sub["variant"], sub["form"])
	}
	// 10 items over two pages, one page overlap (same record) dropped: 9 records.
	if len(recs) != 9 {
		t.Fatalf("records %d", len(recs))
	}
	if inv.Counts["duplicate_items_dropped (same id, same record, e.g. overlapping pages)"] != 1 {
		t.Fatalf("counts %v", inv.Counts)
	}
	// session_id kept as the store names it; no run_id invented.
	r0 := recs[0]
	if r0["session_id"] != "itinerary-2025-apr" || r0["run_id"] != nil || r0["user_id"] != "customer_6412" || r0["app_id"] != "concierge_portal" {
		t.Fatalf("scope keys %v", r0)
	}
	if _, ok := r0["agent_id"]; ok {
		t.Fatal("null agent_id must stay absent")
	}
	if r0["content_text"] != "User avoids shellfish" || r0["record_class"] != "mem0_memory" {
		t.Fatal("content/class")
	}
	nat := r0["metadata"].(map[string]any)["_native"].(map[string]any)
	if nat["hash"] != "9ce3cbeed0cc11e37df95aed884c815d" || nat["score"] != nil {
		t.Fatalf("native %v", nat)
	}
	if inv.dropped["score"] != 1 {
		t.Fatalf("score not counted as dropped: %v", inv.dropped)
	}
	// replaced_by and lifecycle_state copied.
	if recs[3]["replaced_by"] != recs[4]["id"] || recs[3]["lifecycle_state"] != "superseded" {
		t.Fatalf("replaced_by %v", recs[3])
	}
	// M1 marker stays in metadata at top level.
	if recs[5]["metadata"].(map[string]any)["shared"] != true {
		t.Fatal("marker lost")
	}
	// history: the latest event of m8 is DELETE (timestamps with different offsets); one DELETE
	// names a memory absent from the dump and is only counted.
	if recs[7]["is_deleted"] != true || recs[7]["content_text"] != "Vegetarian on Mondays" {
		t.Fatalf("m8 %v", recs[7])
	}
	for i, r := range recs {
		if i != 7 && r["is_deleted"] != nil {
			t.Fatalf("record %d marked deleted", i)
		}
	}
	if inv.Counts["history_deletes_for_memories_not_in_the_dump (not emitted)"] != 1 {
		t.Fatalf("counts %v", inv.Counts)
	}
	if len(inv.Notes) != 0 {
		t.Fatalf("complete pages flagged: %v", inv.Notes)
	}
}

func TestMem0PlatformMissingPage(t *testing.T) {
	_, _, inv, _ := packed(t, Inputs{Records: files(t, td("mem0-platform/page1.json"))}, Options{Source: Mem0Platform})
	joined := strings.Join(inv.Notes, "\n")
	if !strings.Contains(joined, "count 9 but 5 records") || !strings.Contains(joined, "next = null") {
		t.Fatalf("notes %v", inv.Notes)
	}
}

func TestMem0OSS(t *testing.T) {
	in := Inputs{Records: files(t, td("mem0-oss/get_all.json")), History: files(t, td("mem0-oss/history.jsonl"))}
	sub, recs, inv, _ := packed(t, in, Options{Source: Mem0OSS})
	if sub["variant"] != "oss" || len(recs) != 5 {
		t.Fatalf("variant %v records %d", sub["variant"], len(recs))
	}
	// metadata.app_id is never promoted to a scope (extension rule).
	if _, ok := recs[0]["app_id"]; ok {
		t.Fatal("app_id promoted from metadata")
	}
	md := recs[0]["metadata"].(map[string]any)
	if md["app_id"] != "web" || md["_native"].(map[string]any)["attributed_to"] != "user" {
		t.Fatalf("metadata %v", md)
	}
	if recs[0]["run_id"] != "sess-42" || recs[0]["record_class"] != "mem0_oss_memory" {
		t.Fatal("run_id")
	}
	// history.db rows: o4 ADD then DELETE (is_deleted 1) -> deleted; o3 only ADD.
	if recs[3]["is_deleted"] != true || recs[2]["is_deleted"] != nil {
		t.Fatalf("history %v %v", recs[2]["is_deleted"], recs[3]["is_deleted"])
	}
	if inv.Counts["history_events_read"] != 4 {
		t.Fatalf("counts %v", inv.Counts)
	}
	if recs[4]["expired_at"] != nil || recs[4]["metadata"].(map[string]any)["_native"].(map[string]any)["expiration_date"] != "2025-12-31" {
		t.Fatal("expiration_date must stay native, expired_at not derived")
	}
	// No cutoff: the date cannot be compared; a blocking loss, and the memory stays live.
	if recs[4]["lifecycle_state"] != nil || !hasOmission(inv, "mem0: expiration_date not compared (no capture cutoff)", 1, true) {
		t.Fatalf("no cutoff: %v %+v", recs[4]["lifecycle_state"], inv.Omissions)
	}
}

func TestGraphiti(t *testing.T) {
	in := Inputs{
		Records:  files(t, td("graphiti/edges.json")),
		Episodes: files(t, td("graphiti/episodes.json")),
		Nodes:    files(t, td("graphiti/nodes.json")),
	}
	sub, recs, inv, _ := packed(t, in, Options{Source: Graphiti})
	if sub["family"] != "zep_graphiti" || sub["variant"] != "graphiti" || len(recs) != 6 {
		t.Fatal("header")
	}
	want := []struct {
		group    string
		episodes []string
		endpts   []string
	}{
		{"team_alpha", []string{"team_alpha"}, []string{"team_alpha"}},
		{"team_beta", []string{"team_beta"}, []string{"team_beta"}},
		{"team_alpha", []string{"team_alpha"}, []string{"team_alpha"}},
		{"team_alpha", []string{"team_alpha"}, []string{"team_alpha", "team_beta"}}, // g4: cross-group endpoint; ep X unresolved
		{"team_alpha", []string{"team_beta"}, []string{"team_alpha"}},               // g5: episode of another group; node 6 unresolved
		{"team_alpha", []string{"team_alpha"}, []string{"team_alpha"}},
	}
	for i, w := range want {
		r := recs[i]
		if r["group_id"] != w.group || !eqStrings(strs(r["episode_group_ids"]), w.episodes) || !eqStrings(strs(r["endpoint_group_ids"]), w.endpts) {
			t.Errorf("edge %d: %v %v %v", i, r["group_id"], r["episode_group_ids"], r["endpoint_group_ids"])
		}
	}
	if recs[2]["invalid_at"] != "2025-02-15T00:00:00Z" || recs[2]["expired_at"] != "2025-03-01T12:00:03Z" {
		t.Fatal("liveness fields")
	}
	if recs[5]["invalid_at"] == nil || recs[5]["expired_at"] != nil {
		t.Fatal("split state must stay as it is")
	}
	if recs[0]["lifecycle_state"] != nil {
		t.Fatal("lifecycle_state derived")
	}
	if inv.Unresolv["episode_uuids"] != 1 || inv.Unresolv["endpoint_node_uuids"] != 1 {
		t.Fatalf("unresolved %v", inv.Unresolv)
	}
	if recs[4]["metadata"].(map[string]any)["since"] == nil || recs[4]["metadata"].(map[string]any)["_native"].(map[string]any)["name"] != "MENTORS" {
		t.Fatalf("metadata %v", recs[4]["metadata"])
	}
	// Without listings nothing is derived.
	_, recs, _, _ = packed(t, Inputs{Records: files(t, td("graphiti/edges.json"))}, Options{Source: Graphiti})
	for _, r := range recs {
		if r["episode_group_ids"] != nil || r["endpoint_group_ids"] != nil {
			t.Fatal("derived without listings")
		}
	}
}

func TestZepCloud(t *testing.T) {
	in := Inputs{Records: files(t, td("zep-cloud/edges.graph=acme-kb.json"), td("zep-cloud/edges.user=u-4821.json"))}
	sub, recs, _, _ := packed(t, in, Options{Source: ZepCloud})
	if sub["variant"] != "zep_cloud" || len(recs) != 4 {
		t.Fatal("header")
	}
	wantGraph := []string{"acme-kb", "acme-kb", "user:u-4821", "user:u-4821"}
	for i, r := range recs {
		if r["graph_id"] != wantGraph[i] || r["group_id"] != nil || r["record_class"] != "zep_entity_edge" {
			t.Errorf("record %d: %v", i, r)
		}
		if r["episode_group_ids"] != nil || r["endpoint_group_ids"] != nil {
			t.Error("zep records get no group resolution")
		}
	}
	if recs[2]["user_id"] != "u-4821" || recs[0]["user_id"] != nil {
		t.Fatal("user stamp")
	}
	// A flag names the scope for files without the pattern; a contradiction is refused.
	plain := File{Name: "edges.json", Data: in.Records[0].Data}
	_, recs, _, _ = packed(t, Inputs{Records: []File{plain}}, Options{Source: ZepCloud, GraphID: "kb-2"})
	if recs[0]["graph_id"] != "kb-2" {
		t.Fatal("flag stamp")
	}
	if _, err := Pack(Inputs{Records: []File{plain}}, Options{Source: ZepCloud}); err == nil {
		t.Fatal("no scope must be refused, never guessed")
	}
	if _, err := Pack(Inputs{Records: in.Records[:1]}, Options{Source: ZepCloud, GraphID: "other"}); err == nil {
		t.Fatal("flag and file name disagree")
	}
	for name, want := range map[string][2]string{
		"dump.graph=kb.v2.json":             {"graph", "kb.v2"},
		"/x/y/user=alice@example.com.jsonl": {"user", "alice@example.com"},
		"graph=.json":                       {"", ""},
		"mygraph=kb.json":                   {"", ""},
	} {
		k, id, _ := ZepScopeFromName(name)
		if k != want[0] || id != want[1] {
			t.Errorf("%s: %q %q", name, k, id)
		}
	}
}

func TestLettaAF(t *testing.T) {
	lid := func(t *testing.T) (agent string, passages []string) {
		// the server agent id of the archive resolution, read from the fixture
		v, err := decodeValue(file(t, td("letta-af/archives.json")).Data)
		if err != nil {
			t.Fatal(err)
		}
		agent = v.([]any)[0].(map[string]any)["agent_id"].(string)
		pv, _ := decodeValue(file(t, td("letta-af/passages.json")).Data)
		for _, p := range pv.([]any) {
			passages = append(passages, p.(map[string]any)["id"].(string))
		}
		return agent, passages
	}
	agentA, pids := lid(t)
	in := Inputs{
		Records:  files(t, td("letta-af/team.af"), td("letta-af/solo.af")),
		Passages: files(t, td("letta-af/passages.json")),
		Archives: files(t, td("letta-af/archives.json")),
	}
	sub, recs, inv, _ := packed(t, in, Options{Source: LettaAF, AgentAliases: map[string]string{"af1:agent-0": agentA}})
	if sub["family"] != "letta" || sub["variant"] != "mixed" || len(recs) != 12 {
		t.Fatalf("header %v %d", sub["variant"], len(recs))
	}
	type exp struct {
		id       string
		attached []string
	}
	want := []exp{
		{"af1:block-0", []string{agentA, "af1:agent-1"}}, // shared by both agents: one record, a set
		{"af1:block-1", []string{agentA}},
		{"af1:block-2", []string{agentA}},
		{"af1:block-3", []string{"af1:agent-1"}},
		{"af1:block-4", []string{}}, // orphan kept with an empty set
		{"af1:block-5", []string{}}, // template, orphan
		{"af2:block-0", []string{"af2:agent-0"}},
		{"af2:block-1", []string{"af2:agent-0"}},
		{pids[0], []string{agentA}},
		{pids[1], []string{agentA}},
		{pids[2], []string{}}, // archive not resolved: counted, never guessed
		{pids[3], []string{}}, // source passage
	}
	for i, w := range want {
		r := recs[i]
		got := strs(r["attached_to"])
		if r["id"] != w.id || !eqStrings(sortedCopy(got), sortedCopy(w.attached)) {
			t.Errorf("record %d: %v %v want %v %v", i, r["id"], got, w.id, w.attached)
		}
	}
	if recs[5]["is_template"] != true || recs[0]["is_template"] != false {
		t.Fatal("is_template")
	}
	if recs[0]["template_id"] != nil {
		t.Fatal("null template_id must stay absent")
	}
	if recs[11]["source_passage"] != true || recs[11]["record_class"] != "letta_source_passage" || recs[11]["file_id"] == nil {
		t.Fatalf("source passage %v", recs[11])
	}
	if recs[8]["record_class"] != "letta_archival_passage" || recs[8]["source_passage"] != nil {
		t.Fatal("archival passage")
	}
	if inv.Unresolv["passage_archive_ids (no archive resolution)"] != 1 || inv.Counts["orphan_blocks (attached_to empty)"] != 2 {
		t.Fatalf("inventory %v %v", inv.Unresolv, inv.Counts)
	}
	if inv.Counts["groups_with_shared_block_ids (not used for attached_to)"] != 0 {
		t.Fatal("empty shared_block_ids counted")
	}
	// .af alone: blocks variant, ids unprefixed for one file.
	sub, recs, inv, _ = packed(t, Inputs{Records: files(t, td("letta-af/solo.af"))}, Options{Source: LettaAF})
	if sub["variant"] != "blocks" || recs[0]["id"] != "block-0" || !strings.Contains(strings.Join(inv.Notes, " "), "not that none exist") {
		t.Fatalf("solo %v %v", sub["variant"], recs[0]["id"])
	}
}

func sortedCopy(s []string) []string {
	c := append([]string{}, s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

const realLetta = "../../shared/fixtures/letta"

func TestLettaRealAgentFiles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		blocks int
		agent  string
	}{{"customer_service.af", 2, "agent-1"}, {"loop.af", 9, "agent-0"}} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := readIfPresent(realLetta + "/" + tc.name)
			if err != nil {
				t.Skip("real fixtures absent: " + err.Error())
			}
			_, recs, _, _ := packed(t, Inputs{Records: []File{f}}, Options{Source: LettaAF})
			if len(recs) != tc.blocks {
				t.Fatalf("blocks %d", len(recs))
			}
			for _, r := range recs {
				if !eqStrings(strs(r["attached_to"]), []string{tc.agent}) || r["is_template"] != false {
					t.Fatalf("record %v", r["id"])
				}
			}
			_, _, _, _ = packed(t, Inputs{Records: []File{f}}, Options{Source: LettaAF, HashOnly: true})
		})
	}
	a, errA := readIfPresent(realLetta + "/customer_service.af")
	b, errB := readIfPresent(realLetta + "/loop.af")
	if errA != nil || errB != nil {
		t.Skip("real fixtures absent")
	}
	_, recs, _, _ := packed(t, Inputs{Records: []File{a, b}}, Options{Source: LettaAF})
	if len(recs) != 11 || recs[0]["id"] != "af1:block-2" || recs[2]["id"] != "af2:block-0" {
		t.Fatalf("combined %d", len(recs))
	}
}

func TestLettaAPI(t *testing.T) {
	sub, recs, inv, _ := packed(t, Inputs{Records: files(t, td("letta-api/bundle.json"))}, Options{Source: LettaAPI})
	if sub["variant"] != "mixed" || len(recs) != 9 {
		t.Fatalf("header %v %d", sub["variant"], len(recs))
	}
	v, _ := decodeValue(file(t, td("letta-api/bundle.json")).Data)
	agents := v.(map[string]any)["agents"].([]any)
	a1 := agents[0].(map[string]any)["id"].(string)
	a2 := agents[1].(map[string]any)["id"].(string)
	both := sortedCopy([]string{a1, a2})
	want := [][]string{{a1}, both, {a1}, {a2}, {a2}, {}, {}, both, {a2}}
	classes := []string{"letta_block", "letta_block", "letta_block", "letta_block", "letta_block", "letta_block", "letta_block", "letta_archival_passage", "letta_source_passage"}
	for i, r := range recs {
		if !eqStrings(strs(r["attached_to"]), want[i]) || r["record_class"] != classes[i] {
			t.Errorf("record %d: %v %v", i, r["attached_to"], r["record_class"])
		}
	}
	if recs[2]["template_id"] != "template-42" || recs[4]["template_id"] != "template-42" || recs[5]["is_template"] != true {
		t.Fatal("template fields")
	}
	if inv.Counts["block_listed_twice_with_different_fields (first kept)"] != 0 {
		t.Fatal("identical repeats are not differences")
	}
}

func TestClaims(t *testing.T) {
	sub, recs, _, _ := packed(t, Inputs{Records: files(t, td("claims/claims.jsonl"))}, Options{Source: ClaimsJSONL,
		Manifest: ManifestOptions{DeclaredSet: true, DeclaredScopeKeys: []string{"tenant"}}})
	if sub["family"] != "generic" || sub["variant"] != "claim-jsonl" || len(recs) != 5 {
		t.Fatal("header")
	}
	if !eqStrings(strs(sub["manifest"].(map[string]any)["declared_scope_keys"]), []string{"tenant"}) {
		t.Fatal("manifest")
	}
	if recs[0]["record_class"] != "claim" || recs[3]["record_class"] != "policy_claim" || recs[3]["supersedes"] != "c5" || recs[0]["source"] != "crm" {
		t.Fatal("pass-through")
	}
	// no declared keys: no manifest at all
	sub, _, _, _ = packed(t, Inputs{Records: files(t, td("claims/claims.jsonl"))}, Options{Source: ClaimsJSONL})
	if sub["manifest"] != nil {
		t.Fatal("manifest invented")
	}
	// an empty declared list is a declaration
	sub, _, _, _ = packed(t, Inputs{Records: files(t, td("claims/claims.jsonl"))}, Options{Source: ClaimsJSONL, Manifest: ManifestOptions{DeclaredSet: true}})
	if d := sub["manifest"].(map[string]any)["declared_scope_keys"].([]any); len(d) != 0 {
		t.Fatal("empty declaration")
	}
}

func TestHashOnly(t *testing.T) {
	in := Inputs{Records: files(t, td("mem0-platform/page1.json"), td("mem0-platform/page2.json"))}
	opt := Options{Source: Mem0Platform, HashOnly: true, Manifest: ManifestOptions{
		GlobalContentKeys: []string{"Prefers aisle seats"}, GlobalClaimIDs: []string{"x"}, GlobalScopes: []string{"customer_9020/concierge_portal"}}}
	sub, recs, _, body := packed(t, in, opt)
	if sub["form"] != "hash_only" {
		t.Fatal("form")
	}
	for _, s := range []string{"Prefers aisle seats", "shellfish", "policy-sync", "travel", "9ce3cbeed0cc11e37df95aed884c815d"} {
		if strings.Contains(string(body), s) {
			t.Fatalf("hash-only body carries %q", s)
		}
	}
	// sha256("Prefers aisle seats"), from sha256sum
	const aisle = "7ae0d3df4c5329b08611a377c7eea34d3aaea8cb14176fc11acc64498c83d8c6"
	if HashContent("Prefers aisle seats") != recs[1]["content_hash"] {
		t.Fatal("content hash")
	}
	if got := HashContent("Prefers aisle seats"); got != aisle {
		t.Fatalf("sha256 = %s", got)
	}
	if strs(sub["manifest"].(map[string]any)["global_content_keys"])[0] != recs[1]["content_hash"] {
		t.Fatal("manifest content key not hashed like the records")
	}
	md := recs[5]["metadata"].(map[string]any)
	if len(md) != 1 || md["shared"] != true {
		t.Fatalf("markers only: %v", md)
	}
	if recs[0]["metadata"] != nil || recs[0]["content_text"] != nil {
		t.Fatal("metadata or text kept")
	}
	// --keep-metadata keeps it
	_, recs, _, _ = packed(t, in, Options{Source: Mem0Platform, HashOnly: true, KeepMetadata: true})
	if recs[0]["metadata"] == nil {
		t.Fatal("keep-metadata")
	}
	// UTF-8 bytes exactly
	if HashContent("é") != SHA256Hex([]byte{0xc3, 0xa9}) {
		t.Fatal("utf-8")
	}
	if _, err := Pack(in, Options{Source: Mem0Platform, Manifest: ManifestOptions{GlobalContentHashes: []string{"ab"}}}); err == nil {
		t.Fatal("hashes in full-text form")
	}
}

func TestVariantOverride(t *testing.T) {
	in := Inputs{Records: files(t, td("graphiti/edges.json"))}
	sub, _, _, _ := packed(t, in, Options{Source: Graphiti, Variant: "zep_cloud"})
	if sub["variant"] != "zep_cloud" {
		t.Fatal("override")
	}
	if _, err := Pack(in, Options{Source: Graphiti, Variant: "oss"}); err == nil {
		t.Fatal("unpublished variant")
	}
}

// Errors never carry export content.
func TestErrorsCarryNoContent(t *testing.T) {
	secret := "SECRET-CONTENT-4711"
	cases := []struct {
		src  Source
		data string
	}{
		{Mem0Platform, `[{"id": 5, "memory": "` + secret + `"}]`},
		{Mem0Platform, `[{"id": "` + secret + `", "memory": 5}]`},
		{Mem0Platform, `[{"id": "a", "memory": "x"}, {"id": "a", "memory": "` + secret + `"}]`},
		{Graphiti, `[{"uuid": "` + secret + `"}]`},
		{LettaAF, `"{\"blocks\": [{\"id\": \"` + secret + `\"}]}"`},
		{LettaAF, `{"blocks": [{"id": "b", "value": "x"}, {"id": "b", "value": "` + secret + `"}]}`},
		{LettaAPI, `[{"weird": "` + secret + `"}]`},
		{ClaimsJSONL, `{"id": "` + secret + `"}` + "\n" + `[1]`},
		{ClaimsJSONL, `{"id": "x", "content_text": "` + secret + `"` + "\n"},
	}
	for i, c := range cases {
		_, err := Pack(Inputs{Records: []File{{Name: "dump.json", Data: []byte(c.data)}}}, Options{Source: c.src})
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("case %d: error carries content: %v", i, err)
		}
	}
}

func TestCapsAndSplit(t *testing.T) {
	// 1,200 records in 600 content keys; keys 0..9 appear in two scopes (cross-scope pairs).
	var sb strings.Builder
	for i := 0; i < 1200; i++ {
		fmt.Fprintf(&sb, `{"id":"c%04d","content_text":"claim text %d %s","tenant":"t%d"}`+"\n", i, i%600, strings.Repeat("x", 150), i%2)
	}
	res, err := Pack(Inputs{Records: []File{{Name: "c.jsonl", Data: []byte(sb.String())}}}, Options{Source: ClaimsJSONL, Manifest: ManifestOptions{DeclaredSet: true, DeclaredScopeKeys: []string{"tenant"}}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := res.Submission.Marshal()
	var ce *CapError
	if err := CheckCaps(len(res.Submission.Records), body); !errors.As(err, &ce) || ce.Records != 1200 || ce.Bytes != len(body) {
		t.Fatalf("cap error %v", err)
	} else if !strings.Contains(err.Error(), "1200 records (cap 1000)") {
		t.Fatal(err)
	}
	parts, notes, err := Split(res.Submission)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 2 {
		t.Fatalf("parts %d", len(parts))
	}
	where := map[string]int{}
	total := 0
	for k, p := range parts {
		b, _ := p.Marshal()
		if err := CheckCaps(len(p.Records), b); err != nil {
			t.Fatalf("part %d: %v", k, err)
		}
		contractCheck(t, b)
		if p.Manifest == nil || p.Family != "generic" {
			t.Fatal("part header")
		}
		for _, r := range p.Records {
			total++
			key := r["content_text"].(string)
			if w, ok := where[key]; ok && w != k {
				t.Fatalf("content key split although it fits")
			}
			where[key] = k
		}
	}
	if total != 1200 {
		t.Fatal("records lost")
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "split into") {
		t.Fatalf("notes %v", notes)
	}
}

func TestSplitOversizeCluster(t *testing.T) {
	// 1,100 copies of one text over 3 scopes: the group cannot fit and must be reported.
	var sb strings.Builder
	for i := 0; i < 1100; i++ {
		fmt.Fprintf(&sb, `{"id":"c%04d","content_text":"same","tenant":"t%d"}`+"\n", i, i%3)
	}
	res, err := Pack(Inputs{Records: []File{{Name: "c.jsonl", Data: []byte(sb.String())}}}, Options{Source: ClaimsJSONL, Manifest: ManifestOptions{DeclaredSet: true, DeclaredScopeKeys: []string{"tenant"}}})
	if err != nil {
		t.Fatal(err)
	}
	parts, notes, err := Split(res.Submission)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || len(parts[0].Records) != 1000 || len(parts[1].Records) != 100 {
		t.Fatalf("parts %d", len(parts))
	}
	if len(notes) != 2 || !strings.Contains(notes[1], "CROSS-SCOPE CLUSTER candidate (3 distinct scopes) of 1100 records") || !strings.Contains(notes[1], "SPLIT across parts 1, 2") {
		t.Fatalf("notes %v", notes)
	}
	if strings.Contains(strings.Join(notes, ""), "same") {
		t.Fatal("note carries content")
	}
}

func TestSplitKeepsSupersedesTogether(t *testing.T) {
	recs := []Record{}
	for i := 0; i < 1001; i++ {
		recs = append(recs, Record{"id": fmt.Sprintf("r%d", i), "content_text": fmt.Sprint(i)})
	}
	recs[1000]["supersedes"] = []any{"r0"}
	recs[999]["origin_claim_id"] = "r1"
	groups := groupRecords(recs)
	if len(groups) != 999 {
		t.Fatalf("groups %d", len(groups))
	}
	if !eqInts(groups[0], []int{0, 1000}) || !eqInts(groups[1], []int{1, 999}) {
		t.Fatalf("groups %v %v", groups[0], groups[1])
	}
}

func eqInts(a, b []int) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestDecodeAFShapes(t *testing.T) {
	if _, err := DecodeAF([]byte(`{"core_memory": []}`)); err == nil {
		t.Fatal("legacy accepted")
	}
	if _, err := DecodeAF([]byte(`"\"x\""`)); err == nil {
		t.Fatal("string accepted")
	}
	if _, err := DecodeAF([]byte("\xEF\xBB\xBF{\"blocks\": []}")); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeAF([]byte(`{"blocks": []} {}`)); err == nil {
		t.Fatal("trailing data")
	}
}

func TestDepthRefused(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	data := `[{"id":"x","content_text":"y","metadata":` + deep + `}]`
	if _, err := Pack(Inputs{Records: []File{{Name: "c.json", Data: []byte(data)}}}, Options{Source: ClaimsJSONL}); err == nil || !strings.Contains(err.Error(), "levels deep") {
		t.Fatalf("deep record: %v", err)
	}
}

func TestInventory(t *testing.T) {
	in := Inputs{Records: files(t, td("letta-af/team.af"))}
	res, err := Pack(in, Options{Source: LettaAF})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := res.Submission.Marshal()
	res.Inventory.SetOutputs([]OutputPart{Part("x.json", len(res.Submission.Records), body)}, nil)
	b, err := res.Inventory.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeValue(b)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	in0 := m["inputs"].([]any)[0].(map[string]any)
	if in0["file"] != td("letta-af/team.af") || in0["sha256"] != SHA256Hex(in.Records[0].Data) {
		t.Fatal("input digest")
	}
	if m["submission"].([]any)[0].(map[string]any)["sha256"] != SHA256Hex(body) {
		t.Fatal("submission digest")
	}
	if fmt.Sprint(m["records"].(map[string]any)["by_class"].(map[string]any)["letta_block"]) != "6" {
		t.Fatal("by class")
	}
	if len(m["absent_in_native_format"].([]any)) == 0 {
		t.Fatal("absent fields not stated")
	}
}
