package gen

import (
	"encoding/json"
	"math/rand"
	"strconv"
)

// RandomExport returns a random VALID export body (any family, form and variant;
// 1 to 60 records) for differential testing. Value alphabets are small so that
// clusters, duplicates, pointer chains and collisions are frequent. Everything is
// synthetic: ids like "r07", contents like "note-a", scopes like "u1".
func RandomExport(r *rand.Rand) []byte {
	g := &randGen{r: r}
	body := g.export()
	b, err := json.Marshal(body)
	if err != nil {
		panic("gen: random export cannot be marshaled") // unreachable: plain values only
	}
	return b
}

type randGen struct {
	r *rand.Rand
}

func (g *randGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *randGen) pick(list ...any) any { return list[g.r.Intn(len(list))] }

func (g *randGen) pickS(list ...string) string { return list[g.r.Intn(len(list))] }

// randExport is one export under construction: what every record draws from.
type randExport struct {
	*randGen
	family, form string
	ids          []string // record ids, shuffled
	declared     []string // declared scope keys, nil when none
	contents     []string // full_text contents
	hashes       []string // content hashes
	scopeVals    []any
	// per-export intensities, so that each decision rule shows up
	pShared, pMalformed, pMeta, pOrigin, pSource, pTemplate float64
}

// originScopes are the origin_scope values a record may claim.
var originScopes = []string{"s1", "s2", "s3", "global", "s1/s2", "", "a1", "a1/a2"}

// export draws one export body. The draws happen in a fixed order (header, ids,
// declared keys, alphabets, intensities, records, manifest): seeded tests pin them.
func (g *randGen) export() map[string]any {
	x := &randExport{randGen: g}
	body := x.header()
	x.recordIDs()
	manifest := x.declaredKeys()
	x.alphabets()
	x.intensities()
	records := make([]any, len(x.ids))
	for i := range records {
		records[i] = x.record(x.ids[i])
	}
	body["records"] = records
	if g.chance(0.55) {
		x.manifestMembers(manifest)
	}
	if len(manifest) > 0 || g.chance(0.05) {
		body["manifest"] = manifest
	}
	return body
}

// header draws the family, the form and (mostly) a variant.
func (x *randExport) header() map[string]any {
	x.family = familyOrder[x.r.Intn(len(familyOrder))]
	x.form = formOrder[x.r.Intn(len(formOrder))]
	body := map[string]any{"family": x.family, "form": x.form}
	if x.chance(0.7) {
		vs := familyVariants[x.family]
		body["variant"] = vs[x.r.Intn(len(vs))]
	}
	return body
}

// recordIDs draws 1..60 records (often only 1..8) and shuffles their ids.
func (x *randExport) recordIDs() {
	n := 1 + x.r.Intn(60)
	if x.chance(0.3) {
		n = 1 + x.r.Intn(8)
	}
	x.ids = make([]string, n)
	for i := range x.ids {
		x.ids[i] = "r" + pad2(i)
	}
	x.r.Shuffle(n, func(i, j int) { x.ids[i], x.ids[j] = x.ids[j], x.ids[i] })
}

// declaredKeys draws the declared scope keys (generic needs them for most factors;
// mem0/zep sometimes override) and returns the manifest that declares them.
func (x *randExport) declaredKeys() map[string]any {
	manifest := map[string]any{}
	switch x.family {
	case "generic":
		if x.chance(0.75) {
			x.declared = []string{x.pickS("tenant", "project")}
			if x.chance(0.4) {
				x.declared = append(x.declared, x.pickS("tenant", "project", "session"))
			}
		}
	case "mem0":
		if x.chance(0.15) {
			x.declared = []string{x.pickS("user_id", "agent_id", "tenant")}
			if x.chance(0.3) {
				x.declared = append(x.declared, "run_id")
			}
		}
	case "zep_graphiti":
		if x.chance(0.1) {
			x.declared = []string{x.pickS("group_id", "graph_id", "tenant")}
		}
	case "letta":
		if x.chance(0.1) {
			x.declared = []string{"user_id"}
		}
	}
	if x.declared != nil {
		arr := []any{}
		for _, k := range x.declared {
			arr = append(arr, k)
		}
		manifest["declared_scope_keys"] = arr
	} else if x.family == "generic" && x.chance(0.1) {
		manifest["declared_scope_keys"] = []any{}
	}
	return manifest
}

// alphabets draws the contents, hashes and scope values records pick from.
func (x *randExport) alphabets() {
	x.contents = []string{"note-a", "note-b", "note-c", "Note-a", "note-a ", ""}
	if x.chance(0.5) {
		x.contents = x.contents[:3]
	}
	x.hashes = []string{"h1", "h2", "h3", "H1", "h4"}
	if x.chance(0.5) {
		x.hashes = x.hashes[:2]
	}
	x.scopeVals = []any{"s1", "s2", "s3", "global"}
	if x.chance(0.3) {
		x.scopeVals = append(x.scopeVals, "", "GLOBAL", " global", "shared", "*", 7, true, nil)
	}
}

func (x *randExport) intensities() {
	x.pShared = x.pick(0.0, 0.1, 0.3, 0.7).(float64)
	x.pMalformed = x.pick(0.0, 0.0, 0.0, 0.05).(float64)
	x.pMeta = x.pick(0.0, 0.1, 0.3).(float64)
	x.pOrigin = x.pick(0.0, 0.1, 0.3).(float64)
	x.pSource = x.pick(0.0, 0.5, 0.95, 1.0).(float64)
	x.pTemplate = x.pick(0.1, 0.3, 0.95).(float64)
}

func (x *randExport) content() string {
	if x.form == "full_text" {
		return x.contents[x.r.Intn(len(x.contents))]
	}
	return x.hashes[x.r.Intn(len(x.hashes))]
}

func (x *randExport) scopeVal() any { return x.scopeVals[x.r.Intn(len(x.scopeVals))] }

// anyID is a record id, or sometimes the id of no record.
func (x *randExport) anyID() string {
	if x.chance(0.15) {
		return "missing-" + strconv.Itoa(x.r.Intn(3))
	}
	return x.ids[x.r.Intn(len(x.ids))]
}

// record draws one record: content, scope, markers, liveness and conflict fields.
func (x *randExport) record(id string) map[string]any {
	rec := map[string]any{"id": id}
	if x.form == "full_text" {
		rec["content_text"] = x.content()
	} else {
		rec["content_hash"] = x.content()
	}
	switch x.family {
	case "mem0":
		keys := x.declared
		if keys == nil {
			keys = []string{"user_id", "agent_id", "run_id", "session_id"}
		}
		x.scopeMembers(rec, keys, 0.45)
	case "zep_graphiti":
		if x.chance(0.85) {
			rec["group_id"] = x.scopeVal()
		}
		if x.chance(0.2) {
			rec["graph_id"] = x.scopeVal()
		}
		x.scopeMembers(rec, x.declared, 0.5)
	case "generic":
		x.scopeMembers(rec, []string{"tenant", "project", "session"}, 0.5)
	case "letta":
		x.lettaMembers(rec)
	}
	x.markers(rec)
	x.liveness(rec)
	if x.family == "mem0" || x.family == "zep_graphiti" || x.chance(0.1) {
		x.conflictFields(rec)
	}
	return rec
}

// scopeMembers sets each key to a scope value with probability p.
func (x *randExport) scopeMembers(rec map[string]any, keys []string, p float64) {
	for _, k := range keys {
		if x.chance(p) {
			rec[k] = x.scopeVal()
		}
	}
}

// lettaMembers draws letta's attachment set and template lineage members.
func (x *randExport) lettaMembers(rec map[string]any) {
	if x.chance(0.85) {
		set := []any{}
		for _, s := range []string{"a1", "a2", "a3", "global"} {
			if x.chance(0.3) {
				set = append(set, s)
			}
		}
		if x.chance(0.1) {
			set = append(set, x.pick("", 5, nil, "a1"))
		}
		rec["attached_to"] = set
	} else if x.chance(0.2) {
		rec["attached_to"] = x.pick("a1", nil, 3)
	}
	if x.chance(0.15) {
		rec["is_template"] = x.pick(true, false, "true")
	}
	if x.chance(x.pTemplate) {
		rec["template_id"] = "t1"
		if x.chance(0.2) {
			rec["template_id"] = "t2"
		}
	}
	if x.chance(0.15) {
		rec["base_template_id"] = x.pickS("b1", "b2")
	}
	if x.chance(0.15) {
		rec["file_id"] = x.pick("f1", "", nil)
	}
	if x.chance(0.1) {
		rec["source_passage"] = x.pick(true, false)
	}
	if x.chance(0.2) {
		rec["record_class"] = x.pickS("block", "passage", "template")
	}
}

// markers draws the sharing markers, origin claims and source of one record.
func (x *randExport) markers(rec map[string]any) {
	if x.chance(x.pShared) {
		if x.chance(x.pMalformed) {
			rec["shared"] = x.pick("true", 1, "")
		} else {
			rec["shared"] = x.pick(true, true, true, false, nil)
		}
	}
	if x.chance(0.08) {
		rec["sharing"] = x.pick("global", "GLOBAL", "private")
	}
	if x.chance(x.pMeta) {
		md := map[string]any{}
		if x.chance(0.6) {
			if x.chance(x.pMalformed) {
				md["shared"] = "yes"
			} else {
				md["shared"] = x.pick(true, true, false)
			}
		}
		if x.chance(0.4) {
			md["sharing"] = x.pick("global", "local")
		}
		rec["metadata"] = md
	}
	if x.chance(x.pOrigin) {
		if x.chance(0.9) {
			rec["origin_claim_id"] = x.anyID()
		} else {
			rec["origin_claim_id"] = x.pick(nil, 4, "")
		}
		if x.chance(0.4) {
			rec["origin_scope"] = x.pick(originScopes[x.r.Intn(len(originScopes))], nil, 2)
		}
	}
	if x.chance(x.pSource) {
		rec["source"] = "src-1"
		if x.chance(0.3) {
			rec["source"] = x.pick("src-2", "src-3", "", 9)
		}
	}
}

// liveness draws the supersession, deletion, expiry and state members of one record.
func (x *randExport) liveness(rec map[string]any) {
	if x.chance(0.08) {
		if x.chance(0.7) {
			rec["supersedes"] = x.anyID()
		} else {
			rec["supersedes"] = []any{x.anyID(), x.anyID(), 3}
		}
	}
	if x.chance(0.04) {
		rec["replaced_by"] = x.pick(x.anyID(), "", nil, false)
	}
	if x.chance(0.04) {
		rec["superseded_by"] = x.pick(x.anyID(), "", []any{})
	}
	if x.chance(0.05) {
		rec["is_deleted"] = x.pick(true, false, "true")
	}
	if x.chance(0.06) {
		rec["invalid_at"] = x.pick("2026-01-01T00:00:00Z", nil, "")
	}
	if x.chance(0.06) {
		rec["expired_at"] = x.pick("2026-01-02T00:00:00Z", nil)
	}
	if x.chance(0.06) {
		rec["lifecycle_state"] = x.pick("superseded", "deleted", "expired", "Deleted", "active")
	}
	if x.chance(0.1) {
		rec["state"] = x.pick("pending", "pending", "expired", "active", "PENDING")
	}
}

// conflictFields draws the attributed, history, storage and episode scopes of one record.
func (x *randExport) conflictFields(rec map[string]any) {
	if x.chance(0.15) {
		rec["attributed_scope"] = x.pick("s1", "s2", "s1/s2", "", 5, "global")
	}
	if x.chance(0.1) {
		rec["history_scope"] = x.pick("s1", "s2", "", nil)
	}
	if x.chance(0.1) {
		rec["storage_scope"] = x.pick("s1", "s2", "", nil, 3)
	}
	if x.chance(0.12) {
		rec["episode_group_ids"] = x.pick([]any{"s1"}, []any{"s1", "s2"}, "s1", []any{}, []any{4}, "s2")
	}
	if x.chance(0.1) {
		rec["endpoint_group_ids"] = x.pick([]any{"s2"}, "s1", []any{"s1", nil}, 6)
	}
	if x.family == "mem0" && x.chance(0.15) {
		rec["group_id"] = x.pick("s1", "s2", 1)
	}
}

// manifestMembers draws the manifest's scope lists, global keys and flags.
func (x *randExport) manifestMembers(manifest map[string]any) {
	if x.chance(0.35) {
		manifest["global_scopes"] = x.scopeList()
	}
	if x.chance(0.3) {
		manifest["private_scopes"] = x.scopeList()
	}
	if x.chance(0.3) {
		arr := []any{}
		for k := 0; k < 1+x.r.Intn(2); k++ {
			if x.form == "full_text" {
				arr = append(arr, x.pick("note-a", "note-b", "absent-note", 0))
			} else {
				arr = append(arr, x.pick("h1", "h2", "h9"))
			}
		}
		manifest["global_content_keys"] = arr
	}
	if x.chance(0.3) {
		arr := []any{}
		for k := 0; k < 1+x.r.Intn(3); k++ {
			arr = append(arr, x.anyID())
		}
		manifest["global_claim_ids"] = arr
	}
	if x.chance(0.2) {
		manifest["scope_filtered"] = x.pick(true, false, "true")
	}
	if x.chance(0.25) {
		manifest["multi_scope"] = x.pick(true, false, 1)
	}
}

func (x *randExport) scopeList() any {
	if x.chance(0.1) {
		return x.pick("s1", 3, nil)
	}
	arr := []any{}
	for k := 0; k < 1+x.r.Intn(3); k++ {
		arr = append(arr, x.pick("s1", "s2", "s3", "a1", "a2", "s1/s2", "nowhere", 4))
	}
	return arr
}

func pad2(i int) string {
	if i < 10 {
		return "0" + strconv.Itoa(i)
	}
	return strconv.Itoa(i)
}
