package pack

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// leakCases are hand-made dumps of every source in its real shape, with the word "quetzal"
// planted in every field the audit does not read (texts, metadata, names, labels, descriptions,
// categories, history texts, messages, files, tools, unpublished members such as evidence).
// Ids, scope values and source are allowed through by design and carry no canary.
func leakCases(t *testing.T) []struct {
	name string
	in   Inputs
	opt  Options
} {
	l := func(p string) string { return td("leak/" + p) }
	return []struct {
		name string
		in   Inputs
		opt  Options
	}{
		{"mem0-platform", Inputs{Records: files(t, l("mem0-platform.json")), History: files(t, l("mem0-platform-history.json"))}, Options{Source: Mem0Platform}},
		{"mem0-oss", Inputs{Records: files(t, l("mem0-oss.json")), History: files(t, l("mem0-oss-history.jsonl"))}, Options{Source: Mem0OSS}},
		{"graphiti", Inputs{Records: files(t, l("graphiti.json")), Episodes: files(t, l("graphiti-episodes.json")), Nodes: files(t, l("graphiti-nodes.json"))}, Options{Source: Graphiti}},
		{"zep-cloud", Inputs{Records: files(t, l("zep-cloud.graph=kb-1.json"))}, Options{Source: ZepCloud}},
		{"letta-af", Inputs{Records: files(t, l("letta.af")), Passages: files(t, l("letta-passages.json")), Archives: files(t, l("letta-archives.json"))}, Options{Source: LettaAF}},
		{"letta-api", Inputs{Records: files(t, l("letta-api.json"))}, Options{Source: LettaAPI}},
		{"claims-jsonl", Inputs{Records: files(t, l("claims.jsonl"))}, Options{Source: ClaimsJSONL, Manifest: ManifestOptions{DeclaredSet: true, DeclaredScopeKeys: []string{"tenant"}}}},
	}
}

// TestHashOnlyLeak is finding 1 for every source: the hash-only submission and its inventory
// carry no planted word, while the full-text submission shows the words were planted where a
// pass-through would let them out.
func TestHashOnlyLeak(t *testing.T) {
	for _, c := range leakCases(t) {
		t.Run(c.name, func(t *testing.T) {
			full := c.opt
			full.Cutoff = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			_, _, _, fullBody := packed(t, c.in, full)
			if n := bytes.Count(bytes.ToLower(fullBody), []byte("quetzal")); n < 2 {
				t.Fatalf("full-text body shows %d planted words: the fixture plants nothing the test could catch", n)
			}
			ho := full
			ho.HashOnly = true
			_, recs, inv, body := packed(t, c.in, ho)
			if bytes.Contains(bytes.ToLower(body), []byte("quetzal")) {
				t.Fatalf("hash-only body leaks a planted word: %s", body)
			}
			ib, err := inv.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(bytes.ToLower(ib), []byte("quetzal")) {
				t.Fatalf("inventory leaks a planted word")
			}
			for _, r := range recs {
				for k := range r {
					if !hashOnlyKept[k] && k != "metadata" && k != "tenant" {
						t.Fatalf("hash-only record carries %q, a field the audit does not read", k)
					}
				}
			}
		})
	}
}

// TestHashOnlyDropsUnpublished is finding 1 on the claim form: an unpublished evidence member is
// dropped and counted, declared scope keys and source stay, and --hash-source replaces each
// distinct source with a keyed digest that keeps equality.
func TestHashOnlyDropsUnpublished(t *testing.T) {
	in := Inputs{Records: []File{{Name: "c.jsonl", Data: []byte(
		`{"id":"a","content_text":"x","tenant":"t1","source":"crm","evidence":"restates x"}` + "\n" +
			`{"id":"b","content_text":"y","tenant":"t2","source":"crm"}` + "\n" +
			`{"id":"c","content_text":"z","tenant":"t2","source":"web"}`)}}}
	decl := ManifestOptions{DeclaredSet: true, DeclaredScopeKeys: []string{"tenant"}}
	_, recs, inv, _ := packed(t, in, Options{Source: ClaimsJSONL, HashOnly: true, Manifest: decl})
	if recs[0]["evidence"] != nil || inv.HashOnlyDropped["evidence"] != 1 {
		t.Fatalf("evidence kept or not counted: %v %v", recs[0], inv.HashOnlyDropped)
	}
	if recs[0]["tenant"] != "t1" || recs[0]["source"] != "crm" || !strings.HasPrefix(inv.SourceValues, "as submitted") {
		t.Fatalf("declared scope key or source lost: %v %q", recs[0], inv.SourceValues)
	}
	// Undeclared, tenant is not read by the audit: dropped too.
	_, recs, _, _ = packed(t, in, Options{Source: ClaimsJSONL, HashOnly: true})
	if recs[0]["tenant"] != nil {
		t.Fatal("undeclared tenant kept")
	}
	key := []byte("operator secret")
	_, recs, inv, body := packed(t, in, Options{Source: ClaimsJSONL, HashOnly: true, Manifest: decl, HashSourceKey: key})
	if bytes.Contains(body, []byte("crm")) || bytes.Contains(body, []byte("web")) {
		t.Fatal("--hash-source left a source in clear")
	}
	if recs[0]["source"] != recs[1]["source"] || recs[1]["source"] == recs[2]["source"] || recs[0]["source"] != HashSource(key, "crm") {
		t.Fatalf("keyed source digests do not keep equality: %v %v %v", recs[0]["source"], recs[1]["source"], recs[2]["source"])
	}
	if !strings.Contains(inv.SourceValues, "HMAC-SHA-256") || inv.Counts["hash_only_source_values_keyed"] != 3 {
		t.Fatalf("inventory does not say sources were keyed: %q %v", inv.SourceValues, inv.Counts)
	}
}

// TestKeepMetadataNoted is finding 5: --keep-metadata lets metadata out in full, and the
// inventory says so with a count.
func TestKeepMetadataNoted(t *testing.T) {
	in := Inputs{Records: files(t, td("leak/mem0-platform.json"))}
	_, recs, inv, _ := packed(t, in, Options{Source: Mem0Platform, HashOnly: true, KeepMetadata: true})
	if recs[0]["metadata"].(map[string]any)["note"] == nil {
		t.Fatal("metadata not kept")
	}
	if inv.Counts["hash_only_metadata_kept_in_full (--keep-metadata)"] != 2 {
		t.Fatalf("counts %v", inv.Counts)
	}
	found := false
	for _, n := range inv.Notes {
		found = found || strings.Contains(n, "MAY CARRY FREE TEXT")
	}
	if !found {
		t.Fatalf("no note: %v", inv.Notes)
	}
}
