package pack

import (
	"strings"
	"testing"
	"time"
)

// Tests named by the findings of issue 13, each on a hand-made dump of the real shape.

func mustPackErr(t *testing.T, in Inputs, opt Options, want string) {
	t.Helper()
	_, err := Pack(in, opt)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one naming %q", err, want)
	}
}

func one(name, data string) []File { return []File{{Name: name, Data: []byte(data)}} }

// Finding 2: Zep TypeScript SDK edges (camelCase) keep their liveness, in both forms.
func TestFinding2ZepCamelCaseLiveness(t *testing.T) {
	in := Inputs{Records: files(t, td("leak/zep-cloud.graph=kb-1.json"))}
	for _, ho := range []bool{false, true} {
		_, recs, inv, _ := packed(t, in, Options{Source: ZepCloud, HashOnly: ho})
		r := recs[0]
		if r["invalid_at"] != "2025-06-01T00:00:00Z" || r["expired_at"] != "2025-06-01T00:00:01Z" {
			t.Fatalf("hash-only %v: liveness lost: %v", ho, r)
		}
		if inv.Counts["edge_members_renamed (invalidAt -> invalid_at)"] != 1 {
			t.Fatalf("renames not counted: %v", inv.Counts)
		}
	}
	// groupId on a Graphiti edge from the TypeScript shape is the scope.
	g := `[{"uuid":"e1","groupId":"team","fact":"f","invalidAt":null,"expiredAt":null}]`
	_, recs, _, _ := packed(t, Inputs{Records: one("e.json", g)}, Options{Source: Graphiti})
	if recs[0]["group_id"] != "team" {
		t.Fatalf("groupId not read: %v", recs[0])
	}
}

// Finding 2: Mem0's expiration_date before the capture cutoff makes the memory expired (not
// live), kept in hash-only form; after the cutoff it stays live; without a cutoff it is a
// blocking loss.
func TestFinding2Mem0Expiration(t *testing.T) {
	d := `{"results":[{"id":"m1","memory":"a","user_id":"u","expiration_date":"2025-12-31"},
	{"id":"m2","memory":"b","user_id":"u","expiration_date":"2026-03-01"},
	{"id":"m3","memory":"c","user_id":"u","expiration_date":"2025-01-01T00:00:00Z","lifecycle_state":"active"}]}`
	in := Inputs{Records: one("p.json", d)}
	cut := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	for _, ho := range []bool{false, true} {
		_, recs, inv, _ := packed(t, in, Options{Source: Mem0Platform, HashOnly: ho, Cutoff: cut})
		if recs[0]["lifecycle_state"] != "expired" || recs[1]["lifecycle_state"] != nil || recs[2]["lifecycle_state"] != "active" {
			t.Fatalf("hash-only %v: %v %v %v", ho, recs[0], recs[1], recs[2])
		}
		if inv.Counts["expired_memories_with_a_lifecycle_state (state kept)"] != 1 || inv.Counts["memories_with_a_future_expiration_date"] != 1 {
			t.Fatalf("counts %v", inv.Counts)
		}
		for _, a := range inv.Absent {
			if a.Field == "expired_at" && strings.Contains(a.Note, "kept as given") {
				t.Fatal("inventory claims the date was kept")
			}
		}
	}
	_, recs, inv, _ := packed(t, in, Options{Source: Mem0Platform})
	if recs[0]["lifecycle_state"] != nil || !hasOmission(inv, "mem0: expiration_date not compared (no capture cutoff)", 3, true) {
		t.Fatalf("no cutoff: %+v", inv.Omissions)
	}
}

// Finding 3: every part of a .af that is not a block is declared, with counts (the transcript in
// files, messages, sources, tools, groups, the system prompt).
func TestFinding3AFOmissions(t *testing.T) {
	_, _, inv, _ := packed(t, Inputs{Records: files(t, td("leak/letta.af"))}, Options{Source: LettaAF})
	for part, n := range map[string]int{
		"letta-af: files": 1, "letta-af: sources": 1, "letta-af: tools": 1, "letta-af: groups": 1,
		"letta-af: metadata": 1, "letta-af: agents[].messages": 1, "letta-af: agents[].system": 1,
		"letta-af: agents[].files_agents": 1, "letta-af: agents[].tool_ids": 1,
	} {
		if !hasOmission(inv, part, n, false) {
			t.Errorf("omission %q x%d missing: %+v", part, n, inv.Omissions)
		}
	}
	if hasOmission(inv, "letta-af: blocks", 1, false) || hasOmission(inv, "letta-af: agents[].block_ids", 1, false) {
		t.Fatal("converted parts declared as omitted")
	}
}

// Finding 3: the Mem0 TypeScript history lists newest first and writes DELETE rows with null
// timestamps; the DELETE still marks the memory deleted.
func TestFinding3Mem0HistoryNewestFirst(t *testing.T) {
	recs := `[{"id":"m1","memory":"a","user_id":"u"},{"id":"m2","memory":"b","user_id":"u"}]`
	hist := `[{"id":"h3","memoryId":"x","memory_id":"m1","event":"DELETE","created_at":null,"updated_at":null},
	{"id":"h2","memory_id":"m1","event":"UPDATE","created_at":"2025-05-02T00:00:00Z"},
	{"id":"h1","memory_id":"m1","event":"ADD","created_at":"2025-05-01T00:00:00Z"},
	{"id":"h4","memory_id":"m2","event":"UPDATE","created_at":"2025-05-02T00:00:00Z"},
	{"id":"h5","memory_id":"m2","event":"ADD","created_at":"2025-05-01T00:00:00Z"}]`
	_, out, inv, _ := packed(t, Inputs{Records: one("r.json", recs), History: one("h.json", hist)}, Options{Source: Mem0OSS})
	if out[0]["is_deleted"] != true || out[1]["is_deleted"] != nil {
		t.Fatalf("delete missed: %v %v", out[0], out[1])
	}
	if inv.Counts["history_events_without_a_timestamp"] != 1 || !hasOmission(inv, "mem0: history event texts (old_memory, new_memory, input)", 5, false) {
		t.Fatalf("counts %v %+v", inv.Counts, inv.Omissions)
	}
}

// Finding 3: search results are flagged as blocking losses, not taken for full dumps.
func TestFinding3SearchResultsFlagged(t *testing.T) {
	s := `{"results":[{"id":"m1","memory":"a","user_id":"u","score":0.9},{"id":"m2","memory":"b","user_id":"u","score":0.5}]}`
	_, _, inv, _ := packed(t, Inputs{Records: one("s.json", s)}, Options{Source: Mem0Platform})
	if !hasOmission(inv, "mem0: memories not returned by the search", 2, true) {
		t.Fatalf("mem0 search not flagged: %+v", inv.Omissions)
	}
	g := `{"message":"Facts retrieved successfully","facts":[{"uuid":"e1","fact":"a","name":"R"},{"uuid":"e2","fact":"b","group_id":"g"}]}`
	_, recs, inv, _ := packed(t, Inputs{Records: one("f.json", g)}, Options{Source: Graphiti})
	if len(recs) != 2 || !hasOmission(inv, "graphiti: group_id of edges that carry none", 1, true) {
		t.Fatalf("graphiti without group_id not flagged: %+v", inv.Omissions)
	}
	b, nb := inv.OmissionTotals()
	if b != 1 || nb != 1 { // the blocking edge; the MCP answer's message member
		t.Fatalf("totals %d %d", b, nb)
	}
}

// Finding 3: a lone surrogate (and an invalid UTF-8 byte) is counted, not silently replaced.
func TestFinding3ReplacedCharacters(t *testing.T) {
	d := "[{\"id\":\"c1\",\"content_text\":\"a\\ud800b \\ud83d\\ude00 \\\\ud800 \xff\"}]"
	_, _, inv, _ := packed(t, Inputs{Records: one("c.json", d)}, Options{Source: ClaimsJSONL})
	if !hasOmission(inv, "characters replaced by U+FFFD (lone UTF-16 surrogates, invalid UTF-8)", 2, true) {
		t.Fatalf("replacement not counted: %+v", inv.Omissions)
	}
	// In a double-encoded .af the escape sits in the inner document.
	af := `"{\"agents\":[{\"id\":\"agent-0\",\"block_ids\":[\"block-0\"]}],\"blocks\":[{\"id\":\"block-0\",\"value\":\"x\\ud800\"}]}"`
	_, _, inv, _ = packed(t, Inputs{Records: one("a.af", af)}, Options{Source: LettaAF})
	if !hasOmission(inv, "characters replaced by U+FFFD (lone UTF-16 surrogates, invalid UTF-8)", 1, true) {
		t.Fatalf("double-encoded replacement not counted: %+v", inv.Omissions)
	}
	for in, want := range map[string]int{`"\udc00"`: 1, `"\ud800\udc00"`: 0, `"\ud800\u0041"`: 1, `"\\ud800"`: 0, `"\u00e9"`: 0} {
		if got := replacedChars([]byte(in)); got != want {
			t.Errorf("replacedChars(%s) = %d, want %d", in, got, want)
		}
	}
}

// Finding 3: an unpaginated {"results": [...]} carries no pagination note.
func TestFinding3NoSpuriousPaginationNote(t *testing.T) {
	_, _, inv, _ := packed(t, Inputs{Records: one("r.json", `{"results":[{"id":"m1","memory":"a","user_id":"u"}]}`)}, Options{Source: Mem0OSS})
	for _, n := range inv.Notes {
		if strings.Contains(n, "next") || strings.Contains(n, "pages") {
			t.Fatalf("spurious note %q", n)
		}
	}
	_, _, inv, _ = packed(t, Inputs{Records: one("r.json", `{"count":1,"next":"https://x/?page=2","results":[{"id":"m1","memory":"a","user_id":"u"}]}`)}, Options{Source: Mem0Platform})
	if len(inv.Notes) != 1 || !strings.Contains(inv.Notes[0], "next = null") {
		t.Fatalf("a page with a next link must be flagged: %v", inv.Notes)
	}
}

// Finding 4: the real shapes that were refused now pack.
func TestFinding4Shapes(t *testing.T) {
	// Graphiti MCP search_memory_facts
	_, recs, _, _ := packed(t, Inputs{Records: one("mcp.json", `{"message":"ok","facts":[{"uuid":"e1","fact":"a","group_id":"g"}]}`)}, Options{Source: Graphiti})
	if recs[0]["id"] != "e1" {
		t.Fatal("MCP facts")
	}
	// Zep Python model_dump(): uuid_
	_, recs, _, _ = packed(t, Inputs{Records: one("x.graph=g1.json", `[{"uuid_":"e2","fact":"a","invalid_at":null}]`)}, Options{Source: ZepCloud})
	if recs[0]["id"] != "e2" || recs[0]["graph_id"] != "g1" {
		t.Fatalf("uuid_: %v", recs[0])
	}
	// OpenMemory backup: content and state
	_, recs, _, _ = packed(t, Inputs{Records: one("om.json", `[{"id":"o1","content":"a","user_id":"u","app_id":"cursor","state":"deleted"},{"id":"o2","content":"b","user_id":"u","state":"active"}]`)}, Options{Source: Mem0Platform})
	if recs[0]["content_text"] != "a" || recs[0]["state"] != "deleted" || recs[1]["state"] != "active" {
		t.Fatalf("openmemory: %v", recs)
	}
	// OpenMemory export envelope: the memory list is read, its other members declared.
	om := `{"user":{"id":"u"},"apps":[{"id":"cursor"},{"id":"claude"}],"memories":[{"id":"o1","content":"a","user_id":"u","state":"active"}]}`
	_, recs, inv, _ := packed(t, Inputs{Records: one("memories.json", om)}, Options{Source: Mem0Platform})
	if len(recs) != 1 || !hasOmission(inv, "mem0: envelope member apps", 2, false) || !hasOmission(inv, "mem0: envelope member user", 1, false) {
		t.Fatalf("openmemory envelope: %+v", inv.Omissions)
	}
}

// Finding 4: Mem0's schema-shaped export. One shaped as a memory list packs; one shaped as a
// profile (what an LLM extracted into the caller's schema) holds no records and is refused with
// the way out, naming no value of it.
func TestFinding4Mem0SchemaExport(t *testing.T) {
	list := `{"memories":[{"id":"m1","memory":"a","user_id":"u","agent_id":null,"app_id":"app","run_id":null,"metadata":{"shared":true}}]}`
	_, recs, _, _ := packed(t, Inputs{Records: one("export.json", list)}, Options{Source: Mem0Platform})
	if len(recs) != 1 || recs[0]["app_id"] != "app" {
		t.Fatalf("list-shaped export: %v", recs)
	}
	profile := `{"full_name":"Quetzal Person","current_role":"engineer","skills":["go"]}`
	_, err := Pack(Inputs{Records: one("export.json", profile)}, Options{Source: Mem0Platform})
	if err == nil || !strings.Contains(err.Error(), "schema-shaped memory export") || strings.Contains(err.Error(), "Quetzal") {
		t.Fatalf("profile-shaped export: %v", err)
	}
}

// Finding 4: a wrong --from is detected where the shapes overlap.
func TestFinding4WrongSource(t *testing.T) {
	edges := `[{"uuid":"e1","fact":"a","group_id":"g"}]`
	mustPackErr(t, Inputs{Records: one("x.graph=g.json", edges)}, Options{Source: ZepCloud}, "use --from graphiti")
	mustPackErr(t, Inputs{Records: one("e.json", edges)}, Options{Source: Mem0Platform}, "use --from graphiti or zep-cloud")
	mustPackErr(t, Inputs{Records: one("m.json", `[{"uuid":"m1","memory":"a"}]`)}, Options{Source: Graphiti}, "looks like a Mem0 dump")
}
