package gen

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
)

// MaxSizeFamilies are the families MaxSizeExport builds, in benchmark order.
var MaxSizeFamilies = []string{"generic", "letta", "mem0", "zep_graphiti"}

// maxSizeTarget is the body size MaxSizeExport aims at: just under the published 256 KiB cap,
// leaving room for the caller field a client may add.
const maxSizeTarget = 261_000

// MaxSizeExport returns a realistic export of the given family at the published caps: 1,000
// records, about 261 KB, several hundred scopes, cross-scope clusters of every class (marked
// shared, undeclared, and every ambiguous reason), M4 pointer chains, dead records, duplicates,
// conflict fields on every Zep/Graphiti record and Letta scope sets with templates. It is
// deterministic (seeded), synthetic, and valid: it is audited, never refused. It is the input of
// the max-size benchmarks and of the load benchmark.
func MaxSizeExport(family string) []byte {
	pad := ""
	body := maxSizeBody(family, pad)
	// Every record carries one content value; widen them all by the same suffix, so that the
	// groups (clusters, duplicates) stay exactly as built, until the body reaches the target.
	if n := (maxSizeTarget - len(body)) / RecordsPerAuditCap; n > 0 {
		pad = " " + strings.Repeat("x", n-1)
		body = maxSizeBody(family, pad)
	}
	return body
}

// RecordsPerAuditCap is the published records_per_audit cap MaxSizeExport fills.
const RecordsPerAuditCap = 1000

func maxSizeBody(family, pad string) []byte {
	g := &maxGen{r: rand.New(rand.NewSource(12)), family: family, pad: pad}
	b, err := json.Marshal(g.export())
	if err != nil {
		panic("gen: max-size export cannot be marshaled") // unreachable: plain values only
	}
	return b
}

type maxGen struct {
	r      *rand.Rand
	family string
	pad    string
	recs   []map[string]any
}

// scopes is the number of distinct scopes a max-size export spreads its records over.
const maxScopes = 360

// groupKinds are the shapes of one content group: what its copies carry decides the cluster class
// (precedence N4, N3, N2, N5, B5, N1, B1, B2) or makes it a duplicate or a lone record.
var groupKinds = []string{
	"undeclared", "marked_shared", "undeclared", "partial", "broken_pointer", "chain",
	"malformed", "contradiction", "key_sets", "sources", "duplicate", "single", "single",
	"undeclared", "dead", "global_member", "manifest_key",
}

func (g *maxGen) export() map[string]any {
	body := map[string]any{"family": g.family, "form": "full_text"}
	manifest := map[string]any{}
	switch g.family {
	case "generic":
		manifest["declared_scope_keys"] = []any{"tenant", "project"}
	case "zep_graphiti":
		body["variant"] = "graphiti"
	case "letta":
		body["variant"] = "mixed"
	case "mem0":
		body["variant"] = "platform"
	}
	var globalKeys, globalIDs []any
	group := 0
	for len(g.recs) < RecordsPerAuditCap {
		kind := groupKinds[group%len(groupKinds)]
		size := 2 + g.r.Intn(3)
		if kind == "single" {
			size = 1
		}
		if room := RecordsPerAuditCap - len(g.recs); size > room {
			size = room
		}
		content := fmt.Sprintf("note %d about project %d%s", group, group%23, g.pad)
		first := len(g.recs)
		for k := 0; k < size; k++ {
			g.recs = append(g.recs, g.record(len(g.recs), content, group, k, kind))
		}
		members := g.recs[first:]
		switch kind {
		case "manifest_key":
			globalKeys = append(globalKeys, content)
		case "chain":
			// M4: each later copy points at the one before; the first is attested by the manifest.
			globalIDs = append(globalIDs, members[0]["id"])
		}
		group++
	}
	// Supersession: a few records name another as superseded (not live), one names a missing id.
	for i := 7; i < len(g.recs); i += 97 {
		g.recs[i]["supersedes"] = g.recs[(i+400)%len(g.recs)]["id"]
	}
	g.recs[3]["supersedes"] = "rec-missing"
	if g.family != "letta" {
		manifest["global_scopes"] = []any{g.scopeValue(1), g.scopeValue(2), "nowhere"}
		manifest["private_scopes"] = []any{g.scopeValue(5)}
	}
	manifest["global_content_keys"] = append(globalKeys, "absent note"+g.pad)
	manifest["global_claim_ids"] = append(globalIDs, "rec-absent")
	if g.family == "zep_graphiti" || g.family == "mem0" {
		manifest["multi_scope"] = true
	}
	body["manifest"] = manifest
	recs := make([]any, len(g.recs))
	for i, r := range g.recs {
		recs[i] = r
	}
	body["records"] = recs
	return body
}

func (g *maxGen) id(i int) string { return fmt.Sprintf("rec-%04d", i) }

// scopeValue is the value of scope s (0 <= s < maxScopes) on the family's first key.
func (g *maxGen) scopeValue(s int) string {
	switch g.family {
	case "mem0":
		return fmt.Sprintf("user-%03d", s)
	case "zep_graphiti":
		return fmt.Sprintf("g%03d", s)
	case "letta":
		return fmt.Sprintf("agent-%03d", s)
	}
	return fmt.Sprintf("tenant-%03d", s)
}

// record builds copy k of a content group. Copies of one group sit in different scopes, so a group
// of two or more live copies is a cross-scope cluster unless its kind says otherwise.
func (g *maxGen) record(i int, content string, group, k int, kind string) map[string]any {
	r := map[string]any{"id": g.id(i), "content_text": content}
	scope := (group*7 + k*31 + g.r.Intn(5)) % maxScopes
	if kind == "duplicate" {
		scope = group % maxScopes // same scope: a duplicate, not a cluster
	}
	g.scope(r, scope, k, kind)
	switch kind {
	case "marked_shared":
		if k%2 == 0 {
			r["shared"] = true
		} else {
			r["metadata"] = map[string]any{"sharing": "global", "origin": "import"}
		}
	case "partial":
		if k == 0 {
			r["shared"] = true
		}
	case "broken_pointer":
		if k == 1 {
			r["origin_claim_id"] = "rec-gone"
		}
	case "chain":
		if k > 0 {
			r["origin_claim_id"] = g.id(i - 1)
		}
	case "malformed":
		if k == 0 {
			r["shared"] = "yes"
		}
	case "contradiction":
		if k == 0 {
			r["shared"] = true
			r["metadata"] = map[string]any{"shared": false}
		}
	case "sources":
		r["shared"] = true
	case "dead":
		switch k % 4 {
		case 0:
			r["replaced_by"] = g.id((i + 1) % RecordsPerAuditCap)
		case 1:
			r["is_deleted"] = true
		case 2:
			r["invalid_at"] = "2026-03-01T00:00:00Z"
		default:
			r["expired_at"] = "2026-03-02T00:00:00Z"
			r["lifecycle_state"] = "expired"
		}
	}
	// Provenance: every copy carries a source; kind "sources" spreads them so that B5 runs.
	if kind == "sources" {
		r["source"] = fmt.Sprintf("import-%d", k)
	} else if g.r.Intn(10) > 0 {
		r["source"] = "import-main"
	}
	if g.family != "zep_graphiti" { // Zep records carry their conflict fields instead
		r["created_at"] = fmt.Sprintf("2026-02-%02dT%02d:%02d:00Z", 1+i%28, i%24, i%60)
	}
	g.familyFields(r, i, scope, k, kind)
	return r
}

// scope writes the record's scope members.
func (g *maxGen) scope(r map[string]any, s, k int, kind string) {
	global := kind == "global_member" && k == 0
	v := g.scopeValue(s)
	if global {
		v = "global"
	}
	switch g.family {
	case "mem0":
		r["user_id"] = v
		if !global && s%3 == 0 {
			r["agent_id"] = fmt.Sprintf("agent-%02d", s%40)
		}
		if !global && s%5 == 0 {
			r["session_id"] = fmt.Sprintf("sess-%03d", s)
		}
		if kind == "key_sets" && k == 1 {
			r["app_id"] = "app-1"
		}
	case "zep_graphiti":
		r["group_id"] = v
		if kind == "key_sets" && k == 1 {
			r["graph_id"] = "graph-x"
		}
	case "letta":
		set := []any{v}
		if !global && s%4 == 0 {
			set = append(set, g.scopeValue((s+1)%maxScopes))
		}
		r["attached_to"] = set
	default:
		r["tenant"] = v
		if !global && (s%2 == 0 || (kind == "key_sets" && k == 1)) {
			r["project"] = fmt.Sprintf("proj-%02d", s%50)
		}
	}
}

// familyFields adds what each family's records carry besides scope and markers.
func (g *maxGen) familyFields(r map[string]any, i, s, k int, kind string) {
	switch g.family {
	case "zep_graphiti":
		// Every record carries the conflict fields; about one in six disagrees with its scope.
		own := r["group_id"].(string)
		other := g.scopeValue((s + 1) % maxScopes)
		pick := func(bad bool) string {
			if bad {
				return other
			}
			return own
		}
		r["attributed_scope"] = pick(i%6 == 0)
		r["history_scope"] = pick(i%11 == 0)
		if i%9 == 0 {
			r["storage_scope"] = own
		}
		r["episode_group_ids"] = []any{own, pick(i%13 == 0)}
		r["endpoint_group_ids"] = []any{pick(i%17 == 0)}
	case "mem0":
		if i%8 == 0 {
			r["attributed_scope"] = r["user_id"]
		}
		if i%29 == 0 {
			r["attributed_scope"] = "user-elsewhere"
		}
		r["categories"] = []any{"preferences", "work"}
		r["hash"] = fmt.Sprintf("%032x", i*7919)
	case "letta":
		switch {
		case kind == "dead":
		case i%10 == 0:
			r["is_template"] = true
			r["template_id"] = fmt.Sprintf("tpl-%d", i%3)
		case i%10 == 1:
			r["template_id"] = fmt.Sprintf("tpl-%d", i%3)
			r["base_template_id"] = "base-1"
		case i%10 == 2:
			r["file_id"] = fmt.Sprintf("file-%d", i%17)
			r["record_class"] = "passage"
		default:
			r["record_class"] = "block"
		}
		r["label"] = "human"
	default:
		if i%12 == 0 {
			r["state"] = "pending"
		} else {
			r["state"] = "active"
		}
		r["claim_type"] = "fact"
	}
}
