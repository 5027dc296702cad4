package pack

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Fuzz targets for every parser of untrusted input: none may panic, and whatever Pack accepts
// must marshal into a submission that satisfies the published input contract.

func seed(f *testing.F, paths ...string) []byte {
	var out []byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = b
	}
	return out
}

func fuzzPack(t *testing.T, in Inputs, opt Options) {
	res, err := Pack(in, opt)
	if err != nil {
		return
	}
	body, err := res.Submission.Marshal()
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if CheckCaps(len(res.Submission.Records), body) != nil {
		parts, _, err := Split(res.Submission)
		if err != nil {
			return
		}
		for _, p := range parts {
			b, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			contractCheck(t, b)
		}
		return
	}
	contractCheck(t, body)
	if _, err := res.Inventory.Marshal(); err != nil {
		t.Fatal(err)
	}
	// Whatever packs makes a package that verifies: every record found its source bytes.
	built, err := BuildPackage(res, in, []*Submission{res.Submission}, PackageOptions{ID: "urn:uuid:fuzz", Revision: 1, KeepNames: true, CaptureTime: time.Unix(1e9, 0), TargetCriteriaID: "c"})
	if err != nil {
		if strings.Contains(err.Error(), "not valid UTF-8") || strings.Contains(err.Error(), "share one name") {
			return
		}
		t.Fatalf("package: %v", err)
	}
	sig, err := SignManifest(built.Files[ManifestName], nil)
	if err != nil {
		t.Fatal(err)
	}
	built.Files[SignatureName] = sig
	srcs := map[string][]byte{}
	for _, fs := range [][]File{in.Records, in.History, in.Episodes, in.Nodes, in.Passages, in.Archives} {
		for _, f := range fs {
			srcs[f.Name] = f.Data
		}
	}
	if v := VerifyPackage(built.Files, nil, srcs); len(v.Mismatches) > 0 {
		t.Fatalf("a fresh package does not verify: %v", v.Mismatches)
	}
}

func FuzzDecodeAF(f *testing.F) {
	f.Add(seed(f, td("letta-af/team.af")))
	f.Add(seed(f, td("letta-af/solo.af")))
	f.Add([]byte(`"{\"agents\": []}"`))
	f.Add([]byte(`"\"{}\""`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = DecodeAF(data)
	})
}

func FuzzReadItems(f *testing.F) {
	f.Add(seed(f, td("mem0-platform/page1.json")))
	f.Add(seed(f, td("mem0-oss/history.jsonl")))
	f.Add([]byte(`{"results": [1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = readItems(File{Name: "f", Data: data}, "results", "edges")
		_, _, _ = readItems(File{Name: "f", Data: data})
	})
}

func FuzzMem0(f *testing.F) {
	f.Add(seed(f, td("mem0-platform/page1.json")), seed(f, td("mem0-platform/history.json")), false, false)
	f.Add(seed(f, td("mem0-oss/get_all.json")), seed(f, td("mem0-oss/history.jsonl")), true, true)
	f.Add([]byte(`{"results":[{"id":"a","memory":"m","user_id":"u","metadata":{"shared":true}}],"count":2,"next":null}`), []byte(`[{"memory_id":"a","event":"DELETE","created_at":"2025-01-01T00:00:00Z"}]`), false, false)
	f.Add([]byte(`{"id":"a","data":"m","run_id":"r"}`+"\n"+`{"id":"b","memory":"m"}`), []byte(`{"memory_id":"b","is_deleted":1}`), true, false)
	f.Fuzz(func(t *testing.T, dump, history []byte, oss, hashOnly bool) {
		src := Mem0Platform
		if oss {
			src = Mem0OSS
		}
		in := Inputs{Records: []File{{Name: "d.json", Data: dump}}}
		if len(history) > 0 {
			in.History = []File{{Name: "h.json", Data: history}}
		}
		fuzzPack(t, in, Options{Source: src, HashOnly: hashOnly})
	})
}

func FuzzGraphiti(f *testing.F) {
	f.Add(seed(f, td("graphiti/edges.json")), seed(f, td("graphiti/episodes.json")), seed(f, td("graphiti/nodes.json")), false)
	f.Add([]byte(`[{"uuid":"e","fact":"f","group_id":"g","episodes":["p","q"],"source_node_uuid":"a","target_node_uuid":"b"}]`), []byte(`[{"uuid":"p","group_id":"h"}]`), []byte(`{"nodes":[{"uuid":"a","group_id":"g"}]}`), true)
	f.Fuzz(func(t *testing.T, edges, episodes, nodes []byte, hashOnly bool) {
		in := Inputs{Records: []File{{Name: "e.json", Data: edges}}}
		if len(episodes) > 0 {
			in.Episodes = []File{{Name: "ep.json", Data: episodes}}
		}
		if len(nodes) > 0 {
			in.Nodes = []File{{Name: "n.json", Data: nodes}}
		}
		fuzzPack(t, in, Options{Source: Graphiti, HashOnly: hashOnly})
	})
}

func FuzzZepCloud(f *testing.F) {
	f.Add(seed(f, td("zep-cloud/edges.graph=acme-kb.json")), "edges.graph=acme-kb.json", "")
	f.Add(seed(f, td("zep-cloud/edges.user=u-4821.json")), "x.json", "g")
	f.Add([]byte(`[{"uuid":"e","fact":"f","graph_id":"x"}]`), "a.user=u.jsonl", "")
	f.Fuzz(func(t *testing.T, edges []byte, name, graph string) {
		fuzzPack(t, Inputs{Records: []File{{Name: name, Data: edges}}}, Options{Source: ZepCloud, GraphID: graph})
	})
}

func FuzzLettaAF(f *testing.F) {
	f.Add(seed(f, td("letta-af/team.af")), seed(f, td("letta-af/solo.af")), seed(f, td("letta-af/passages.json")), seed(f, td("letta-af/archives.json")))
	f.Add([]byte(`"{\"agents\":[{\"id\":\"agent-0\",\"block_ids\":[\"block-0\",\"block-9\"]}],\"blocks\":[{\"id\":\"block-0\",\"value\":\"v\",\"is_template\":true}]}"`), []byte{}, []byte(`{"agent-1":[{"id":"p","text":"t","archive_id":"a"}]}`), []byte(`{"a":["agent-2",{"id":"agent-3"}]}`))
	f.Fuzz(func(t *testing.T, af1, af2, passages, archives []byte) {
		in := Inputs{Records: []File{{Name: "a.af", Data: af1}}}
		if len(af2) > 0 {
			in.Records = append(in.Records, File{Name: "b.af", Data: af2})
		}
		if len(passages) > 0 {
			in.Passages = []File{{Name: "p.json", Data: passages}}
		}
		if len(archives) > 0 {
			in.Archives = []File{{Name: "r.json", Data: archives}}
		}
		fuzzPack(t, in, Options{Source: LettaAF, AgentAliases: map[string]string{"af1:agent-0": "agent-x"}})
	})
}

func FuzzLettaAPI(f *testing.F) {
	f.Add(seed(f, td("letta-api/bundle.json")), []byte(`{"agent-1": [{"id": "passage-1", "text": "t", "archive_id": "archive-1"}]}`))
	f.Add([]byte(`[{"id":"agent-1","blocks":[{"id":"block-1","value":"v","label":"l"}],"sources":[{"id":"s"}]},{"id":"p","text":"t","source_id":"s"},{"archive_id":"a","agent_id":"agent-1"}]`), []byte{})
	f.Fuzz(func(t *testing.T, dump, passages []byte) {
		in := Inputs{Records: []File{{Name: "api.json", Data: dump}}}
		if len(passages) > 0 {
			in.Passages = []File{{Name: "p.json", Data: passages}}
		}
		fuzzPack(t, in, Options{Source: LettaAPI})
	})
}

func FuzzClaims(f *testing.F) {
	f.Add(seed(f, td("claims/claims.jsonl")), true)
	f.Add([]byte(`[{"id":"a","content_hash":"ab","supersedes":["a","b"]}]`), true)
	f.Fuzz(func(t *testing.T, data []byte, hashOnly bool) {
		fuzzPack(t, Inputs{Records: []File{{Name: "c.jsonl", Data: data}}}, Options{Source: ClaimsJSONL, HashOnly: hashOnly})
	})
}

// FuzzSourceBytes: every location readItems reports leads SourceBytes to bytes that decode to
// the very item read.
func FuzzSourceBytes(f *testing.F) {
	f.Add(seed(f, td("mem0-platform/page1.json")))
	f.Add(seed(f, td("mem0-oss/history.jsonl")))
	f.Add([]byte(`[{"a":1},{"b":[2]}]`))
	f.Add([]byte(`{"results":[{"x":"\ud800"}],"next":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, env, err := readItems(File{Name: "f", Data: data}, "results", "edges")
		if err != nil {
			return
		}
		if len(env.Locs) != len(items) {
			t.Fatalf("%d locations for %d items", len(env.Locs), len(items))
		}
		c := newSourceCache(data)
		for i, loc := range env.Locs {
			b, ok := c.at(loc)
			if !ok {
				t.Fatalf("item %d at %q not found", i, loc)
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var v map[string]any
			if err := dec.Decode(&v); err != nil || !reflect.DeepEqual(v, items[i]) {
				t.Fatalf("item %d at %q: the bytes found are another value", i, loc)
			}
		}
		_, _ = SourceBytes(data, "/0/x/1")
		_, _ = SourceBytes(data, "jsonl:2")
	})
}

// FuzzReplacedChars: when no replacement is counted (and the input holds no U+FFFD of its
// own), no decoded string holds U+FFFD.
func FuzzReplacedChars(f *testing.F) {
	f.Add([]byte(`["a\ud800b"]`))
	f.Add([]byte("[\"\xff\"]"))
	f.Add([]byte(`["\ud83d\ude00"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := replacedChars(data)
		v, err := decodeValue(data)
		if err != nil || n > 0 || bytes.Contains(data, []byte("\xef\xbf\xbd")) || bytes.Contains(bytes.ToLower(data), []byte(`\ufffd`)) {
			return
		}
		var walk func(any)
		walk = func(x any) {
			switch t2 := x.(type) {
			case string:
				if strings.ContainsRune(t2, '\uFFFD') {
					t.Fatalf("a replacement went uncounted in %q", data)
				}
			case []any:
				for _, y := range t2 {
					walk(y)
				}
			case map[string]any:
				for k, y := range t2 {
					walk(k)
					walk(y)
				}
			}
		}
		walk(v)
	})
}

// FuzzVerifyPackage: a package manifest, signature and part of any bytes never panic the
// verifier, and a changed manifest never verifies against the signature made for the original.
func FuzzVerifyPackage(f *testing.F) {
	res, err := Pack(Inputs{Records: []File{{Name: "c.jsonl", Data: []byte(`{"id":"a","content_text":"x"}`)}}}, Options{Source: ClaimsJSONL})
	if err != nil {
		f.Fatal(err)
	}
	in := Inputs{Records: []File{{Name: "c.jsonl", Data: []byte(`{"id":"a","content_text":"x"}`)}}}
	built, err := BuildPackage(res, in, []*Submission{res.Submission}, PackageOptions{ID: "urn:uuid:fuzz", Revision: 1, KeepNames: true, CaptureTime: time.Unix(1e9, 0), TargetCriteriaID: "c"})
	if err != nil {
		f.Fatal(err)
	}
	sig, _ := SignManifest(built.Files[ManifestName], nil)
	f.Add(built.Files[ManifestName], sig, built.Files["submission.json"])
	f.Fuzz(func(t *testing.T, manifest, sigb, part []byte) {
		files := map[string][]byte{ManifestName: manifest, SignatureName: sigb, "submission.json": part, InventoryName: built.Files[InventoryName]}
		v := VerifyPackage(files, nil, map[string][]byte{"c.jsonl": in.Records[0].Data})
		if !bytes.Equal(manifest, built.Files[ManifestName]) && bytes.Equal(sigb, sig) && len(v.Mismatches) == 0 {
			t.Fatal("a changed manifest verified against the original signature file")
		}
		if v.Manifest != nil {
			_ = CheckReport(v.Manifest, part, "")
		}
	})
}

// FuzzCheckReport: a report of any bytes never panics the check, and a clean result names a
// part that holds every id the report names.
func FuzzCheckReport(f *testing.F) {
	m := &PackageManifest{TargetCriteriaID: "c", Family: "generic", Form: "full_text", Variant: "claim-jsonl",
		Records: []MemberRecord{{ID: "a", Part: "p1"}, {ID: "b", Part: "p1"}, {ID: "c", Part: "p2"}}}
	f.Add([]byte(`{"criteria_id":"c","family":"generic","form":"full_text","variant":"claim-jsonl","records":2,"factors":{"duplicates":{"clusters":[{"members":["a","b"]}]}}}`))
	f.Add([]byte(`{"records":1,"factors":{"scope_conflicts":{"records":{"history_scope":["c"]}},"cross_scope_clusters":{"clusters":[{"members":[{"id":"c"}]}]}}}`))
	f.Fuzz(func(t *testing.T, report []byte) {
		rc := CheckReport(m, report, "")
		if len(rc.Mismatches) > 0 {
			return
		}
		var r struct {
			Factors json.RawMessage `json:"factors"`
		}
		_ = json.Unmarshal(report, &r)
		for _, id := range ReportRecordIDs(r.Factors) {
			found := false
			for _, rec := range m.Records {
				found = found || (rec.ID == id && rec.Part == rc.Part)
			}
			if !found {
				t.Fatalf("clean check, but id %q is not in part %s", id, rc.Part)
			}
		}
	})
}
