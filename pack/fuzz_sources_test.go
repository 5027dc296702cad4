package pack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// One fuzz target per source: none may panic, whatever Pack accepts marshals into a submission
// that satisfies the published input contract, and a package built from it verifies.

func fuzzPack(t *testing.T, in pack.Inputs, opt pack.Options) {
	res, err := pack.Pack(in, opt)
	if err != nil {
		return
	}
	body, err := res.Submission.Marshal()
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if pack.CheckCaps(len(res.Submission.Records), body) != nil {
		parts, _, err := pack.Split(res.Submission)
		if err != nil {
			return
		}
		for _, p := range parts {
			b, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			pack.ContractCheck(t, b)
		}
		return
	}
	pack.ContractCheck(t, body)
	if _, err := res.Inventory.Marshal(); err != nil {
		t.Fatal(err)
	}
	// Whatever packs makes a package that verifies: every record found its source bytes.
	built, err := mpp.Build(res, in, []*pack.Submission{res.Submission}, mpp.Options{ID: "urn:uuid:fuzz", Revision: 1, KeepNames: true, CaptureTime: time.Unix(1e9, 0), TargetCriteriaID: "c"})
	if err != nil {
		if strings.Contains(err.Error(), "not valid UTF-8") || strings.Contains(err.Error(), "share one name") {
			return
		}
		t.Fatalf("package: %v", err)
	}
	sig, err := mpp.SignManifest(built.Files[mpp.ManifestName], nil)
	if err != nil {
		t.Fatal(err)
	}
	built.Files[mpp.SignatureName] = sig
	srcs := map[string][]byte{}
	for _, fs := range [][]pack.File{in.Records, in.History, in.Episodes, in.Nodes, in.Passages, in.Archives} {
		for _, f := range fs {
			srcs[f.Name] = f.Data
		}
	}
	if v := mpp.Verify(built.Files, nil, srcs); len(v.Mismatches) > 0 {
		t.Fatalf("a fresh package does not verify: %v", v.Mismatches)
	}
}

func FuzzMem0(f *testing.F) {
	f.Add(pack.Seed(f, pack.TD("mem0-platform/page1.json")), pack.Seed(f, pack.TD("mem0-platform/history.json")), false, false)
	f.Add(pack.Seed(f, pack.TD("mem0-oss/get_all.json")), pack.Seed(f, pack.TD("mem0-oss/history.jsonl")), true, true)
	f.Add([]byte(`{"results":[{"id":"a","memory":"m","user_id":"u","metadata":{"shared":true}}],"count":2,"next":null}`), []byte(`[{"memory_id":"a","event":"DELETE","created_at":"2025-01-01T00:00:00Z"}]`), false, false)
	f.Add([]byte(`{"id":"a","data":"m","run_id":"r"}`+"\n"+`{"id":"b","memory":"m"}`), []byte(`{"memory_id":"b","is_deleted":1}`), true, false)
	f.Fuzz(func(t *testing.T, dump, history []byte, oss, hashOnly bool) {
		src := pack.Mem0Platform
		if oss {
			src = pack.Mem0OSS
		}
		in := pack.Inputs{Records: []pack.File{{Name: "d.json", Data: dump}}}
		if len(history) > 0 {
			in.History = []pack.File{{Name: "h.json", Data: history}}
		}
		fuzzPack(t, in, pack.Options{Source: src, HashOnly: hashOnly})
	})
}

func FuzzGraphiti(f *testing.F) {
	f.Add(pack.Seed(f, pack.TD("graphiti/edges.json")), pack.Seed(f, pack.TD("graphiti/episodes.json")), pack.Seed(f, pack.TD("graphiti/nodes.json")), false)
	f.Add([]byte(`[{"uuid":"e","fact":"f","group_id":"g","episodes":["p","q"],"source_node_uuid":"a","target_node_uuid":"b"}]`), []byte(`[{"uuid":"p","group_id":"h"}]`), []byte(`{"nodes":[{"uuid":"a","group_id":"g"}]}`), true)
	f.Fuzz(func(t *testing.T, edges, episodes, nodes []byte, hashOnly bool) {
		in := pack.Inputs{Records: []pack.File{{Name: "e.json", Data: edges}}}
		if len(episodes) > 0 {
			in.Episodes = []pack.File{{Name: "ep.json", Data: episodes}}
		}
		if len(nodes) > 0 {
			in.Nodes = []pack.File{{Name: "n.json", Data: nodes}}
		}
		fuzzPack(t, in, pack.Options{Source: pack.Graphiti, HashOnly: hashOnly})
	})
}

func FuzzZepCloud(f *testing.F) {
	f.Add(pack.Seed(f, pack.TD("zep-cloud/edges.graph=acme-kb.json")), "edges.graph=acme-kb.json", "")
	f.Add(pack.Seed(f, pack.TD("zep-cloud/edges.user=u-4821.json")), "x.json", "g")
	f.Add([]byte(`[{"uuid":"e","fact":"f","graph_id":"x"}]`), "a.user=u.jsonl", "")
	f.Fuzz(func(t *testing.T, edges []byte, name, graph string) {
		fuzzPack(t, pack.Inputs{Records: []pack.File{{Name: name, Data: edges}}}, pack.Options{Source: pack.ZepCloud, GraphID: graph})
	})
}

func FuzzLettaAF(f *testing.F) {
	f.Add(pack.Seed(f, pack.TD("letta-af/team.af")), pack.Seed(f, pack.TD("letta-af/solo.af")), pack.Seed(f, pack.TD("letta-af/passages.json")), pack.Seed(f, pack.TD("letta-af/archives.json")))
	f.Add([]byte(`"{\"agents\":[{\"id\":\"agent-0\",\"block_ids\":[\"block-0\",\"block-9\"]}],\"blocks\":[{\"id\":\"block-0\",\"value\":\"v\",\"is_template\":true}]}"`), []byte{}, []byte(`{"agent-1":[{"id":"p","text":"t","archive_id":"a"}]}`), []byte(`{"a":["agent-2",{"id":"agent-3"}]}`))
	f.Fuzz(func(t *testing.T, af1, af2, passages, archives []byte) {
		in := pack.Inputs{Records: []pack.File{{Name: "a.af", Data: af1}}}
		if len(af2) > 0 {
			in.Records = append(in.Records, pack.File{Name: "b.af", Data: af2})
		}
		if len(passages) > 0 {
			in.Passages = []pack.File{{Name: "p.json", Data: passages}}
		}
		if len(archives) > 0 {
			in.Archives = []pack.File{{Name: "r.json", Data: archives}}
		}
		fuzzPack(t, in, pack.Options{Source: pack.LettaAF, AgentAliases: map[string]string{"af1:agent-0": "agent-x"}})
	})
}

func FuzzLettaAPI(f *testing.F) {
	f.Add(pack.Seed(f, pack.TD("letta-api/bundle.json")), []byte(`{"agent-1": [{"id": "passage-1", "text": "t", "archive_id": "archive-1"}]}`))
	f.Add([]byte(`[{"id":"agent-1","blocks":[{"id":"block-1","value":"v","label":"l"}],"sources":[{"id":"s"}]},{"id":"p","text":"t","source_id":"s"},{"archive_id":"a","agent_id":"agent-1"}]`), []byte{})
	f.Fuzz(func(t *testing.T, dump, passages []byte) {
		in := pack.Inputs{Records: []pack.File{{Name: "api.json", Data: dump}}}
		if len(passages) > 0 {
			in.Passages = []pack.File{{Name: "p.json", Data: passages}}
		}
		fuzzPack(t, in, pack.Options{Source: pack.LettaAPI})
	})
}

func FuzzClaims(f *testing.F) {
	f.Add(pack.Seed(f, pack.TD("claims/claims.jsonl")), true)
	f.Add([]byte(`[{"id":"a","content_hash":"ab","supersedes":["a","b"]}]`), true)
	f.Fuzz(func(t *testing.T, data []byte, hashOnly bool) {
		fuzzPack(t, pack.Inputs{Records: []pack.File{{Name: "c.jsonl", Data: data}}}, pack.Options{Source: pack.ClaimsJSONL, HashOnly: hashOnly})
	})
}
