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

func (g *randGen) export() map[string]any {
	family := familyOrder[g.r.Intn(len(familyOrder))]
	form := formOrder[g.r.Intn(len(formOrder))]
	body := map[string]any{"family": family, "form": form}
	if g.chance(0.7) {
		vs := familyVariants[family]
		body["variant"] = vs[g.r.Intn(len(vs))]
	}

	n := 1 + g.r.Intn(60)
	if g.chance(0.3) {
		n = 1 + g.r.Intn(8)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "r" + pad2(i)
	}
	g.r.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })

	// declared keys (generic needs them for most factors; mem0/zep sometimes override)
	var declared []string
	manifest := map[string]any{}
	switch family {
	case "generic":
		if g.chance(0.75) {
			declared = []string{g.pickS("tenant", "project")}
			if g.chance(0.4) {
				declared = append(declared, g.pickS("tenant", "project", "session"))
			}
		}
	case "mem0":
		if g.chance(0.15) {
			declared = []string{g.pickS("user_id", "agent_id", "tenant")}
			if g.chance(0.3) {
				declared = append(declared, "run_id")
			}
		}
	case "zep_graphiti":
		if g.chance(0.1) {
			declared = []string{g.pickS("group_id", "graph_id", "tenant")}
		}
	case "letta":
		if g.chance(0.1) {
			declared = []string{"user_id"}
		}
	}
	if declared != nil {
		arr := []any{}
		for _, k := range declared {
			arr = append(arr, k)
		}
		manifest["declared_scope_keys"] = arr
	} else if family == "generic" && g.chance(0.1) {
		manifest["declared_scope_keys"] = []any{}
	}

	contents := []string{"note-a", "note-b", "note-c", "Note-a", "note-a ", ""}
	if g.chance(0.5) {
		contents = contents[:3]
	}
	hashes := []string{"h1", "h2", "h3", "H1", "h4"}
	if g.chance(0.5) {
		hashes = hashes[:2]
	}
	contentFor := func() string {
		if form == "full_text" {
			return contents[g.r.Intn(len(contents))]
		}
		return hashes[g.r.Intn(len(hashes))]
	}
	scopeVals := []any{"s1", "s2", "s3", "global"}
	if g.chance(0.3) {
		scopeVals = append(scopeVals, "", "GLOBAL", " global", "shared", "*", 7, true, nil)
	}
	scopeVal := func() any { return scopeVals[g.r.Intn(len(scopeVals))] }

	// per-export intensities
	pShared := g.pick(0.0, 0.1, 0.3, 0.7).(float64)
	pMalformed := g.pick(0.0, 0.0, 0.0, 0.05).(float64)
	pMeta := g.pick(0.0, 0.1, 0.3).(float64)
	pOrigin := g.pick(0.0, 0.1, 0.3).(float64)
	pSource := g.pick(0.0, 0.5, 0.95, 1.0).(float64)
	pTemplate := g.pick(0.1, 0.3, 0.95).(float64)

	records := make([]any, n)
	recIDs := append([]string{}, ids...)
	anyID := func() string {
		if g.chance(0.15) {
			return "missing-" + strconv.Itoa(g.r.Intn(3))
		}
		return recIDs[g.r.Intn(n)]
	}
	scopeStrings := []string{"s1", "s2", "s3", "global", "s1/s2", "", "a1", "a1/a2"}

	for i := 0; i < n; i++ {
		rec := map[string]any{"id": ids[i]}
		if form == "full_text" {
			rec["content_text"] = contentFor()
		} else {
			rec["content_hash"] = contentFor()
		}
		// scope
		switch family {
		case "mem0":
			keys := declared
			if keys == nil {
				keys = []string{"user_id", "agent_id", "run_id", "session_id"}
			}
			for _, k := range keys {
				if g.chance(0.45) {
					rec[k] = scopeVal()
				}
			}
		case "zep_graphiti":
			if g.chance(0.85) {
				rec["group_id"] = scopeVal()
			}
			if g.chance(0.2) {
				rec["graph_id"] = scopeVal()
			}
			for _, k := range declared {
				if g.chance(0.5) {
					rec[k] = scopeVal()
				}
			}
		case "generic":
			for _, k := range []string{"tenant", "project", "session"} {
				if g.chance(0.5) {
					rec[k] = scopeVal()
				}
			}
		case "letta":
			if g.chance(0.85) {
				set := []any{}
				for _, s := range []string{"a1", "a2", "a3", "global"} {
					if g.chance(0.3) {
						set = append(set, s)
					}
				}
				if g.chance(0.1) {
					set = append(set, g.pick("", 5, nil, "a1"))
				}
				rec["attached_to"] = set
			} else if g.chance(0.2) {
				rec["attached_to"] = g.pick("a1", nil, 3)
			}
			if g.chance(0.15) {
				rec["is_template"] = g.pick(true, false, "true")
			}
			if g.chance(pTemplate) {
				rec["template_id"] = "t1"
				if g.chance(0.2) {
					rec["template_id"] = "t2"
				}
			}
			if g.chance(0.15) {
				rec["base_template_id"] = g.pickS("b1", "b2")
			}
			if g.chance(0.15) {
				rec["file_id"] = g.pick("f1", "", nil)
			}
			if g.chance(0.1) {
				rec["source_passage"] = g.pick(true, false)
			}
			if g.chance(0.2) {
				rec["record_class"] = g.pickS("block", "passage", "template")
			}
		}
		// markers (per-export intensities, so that each decision rule shows up)
		if g.chance(pShared) {
			if g.chance(pMalformed) {
				rec["shared"] = g.pick("true", 1, "")
			} else {
				rec["shared"] = g.pick(true, true, true, false, nil)
			}
		}
		if g.chance(0.08) {
			rec["sharing"] = g.pick("global", "GLOBAL", "private")
		}
		if g.chance(pMeta) {
			md := map[string]any{}
			if g.chance(0.6) {
				if g.chance(pMalformed) {
					md["shared"] = "yes"
				} else {
					md["shared"] = g.pick(true, true, false)
				}
			}
			if g.chance(0.4) {
				md["sharing"] = g.pick("global", "local")
			}
			rec["metadata"] = md
		}
		if g.chance(pOrigin) {
			if g.chance(0.9) {
				rec["origin_claim_id"] = anyID()
			} else {
				rec["origin_claim_id"] = g.pick(nil, 4, "")
			}
			if g.chance(0.4) {
				rec["origin_scope"] = g.pick(scopeStrings[g.r.Intn(len(scopeStrings))], nil, 2)
			}
		}
		if g.chance(pSource) {
			rec["source"] = "src-1"
			if g.chance(0.3) {
				rec["source"] = g.pick("src-2", "src-3", "", 9)
			}
		}
		// liveness
		if g.chance(0.08) {
			if g.chance(0.7) {
				rec["supersedes"] = anyID()
			} else {
				rec["supersedes"] = []any{anyID(), anyID(), 3}
			}
		}
		if g.chance(0.04) {
			rec["replaced_by"] = g.pick(anyID(), "", nil, false)
		}
		if g.chance(0.04) {
			rec["superseded_by"] = g.pick(anyID(), "", []any{})
		}
		if g.chance(0.05) {
			rec["is_deleted"] = g.pick(true, false, "true")
		}
		if g.chance(0.06) {
			rec["invalid_at"] = g.pick("2026-01-01T00:00:00Z", nil, "")
		}
		if g.chance(0.06) {
			rec["expired_at"] = g.pick("2026-01-02T00:00:00Z", nil)
		}
		if g.chance(0.06) {
			rec["lifecycle_state"] = g.pick("superseded", "deleted", "expired", "Deleted", "active")
		}
		if g.chance(0.1) {
			rec["state"] = g.pick("pending", "pending", "expired", "active", "PENDING")
		}
		// conflict fields
		if family == "mem0" || family == "zep_graphiti" || g.chance(0.1) {
			if g.chance(0.15) {
				rec["attributed_scope"] = g.pick("s1", "s2", "s1/s2", "", 5, "global")
			}
			if g.chance(0.1) {
				rec["history_scope"] = g.pick("s1", "s2", "", nil)
			}
			if g.chance(0.1) {
				rec["storage_scope"] = g.pick("s1", "s2", "", nil, 3)
			}
			if g.chance(0.12) {
				rec["episode_group_ids"] = g.pick([]any{"s1"}, []any{"s1", "s2"}, "s1", []any{}, []any{4}, "s2")
			}
			if g.chance(0.1) {
				rec["endpoint_group_ids"] = g.pick([]any{"s2"}, "s1", []any{"s1", nil}, 6)
			}
			if family == "mem0" && g.chance(0.15) {
				rec["group_id"] = g.pick("s1", "s2", 1)
			}
		}
		records[i] = rec
	}
	body["records"] = records

	// manifest
	if g.chance(0.55) {
		scopeList := func() any {
			if g.chance(0.1) {
				return g.pick("s1", 3, nil)
			}
			arr := []any{}
			for k := 0; k < 1+g.r.Intn(3); k++ {
				arr = append(arr, g.pick("s1", "s2", "s3", "a1", "a2", "s1/s2", "nowhere", 4))
			}
			return arr
		}
		if g.chance(0.35) {
			manifest["global_scopes"] = scopeList()
		}
		if g.chance(0.3) {
			manifest["private_scopes"] = scopeList()
		}
		if g.chance(0.3) {
			arr := []any{}
			for k := 0; k < 1+g.r.Intn(2); k++ {
				if form == "full_text" {
					arr = append(arr, g.pick("note-a", "note-b", "absent-note", 0))
				} else {
					arr = append(arr, g.pick("h1", "h2", "h9"))
				}
			}
			manifest["global_content_keys"] = arr
		}
		if g.chance(0.3) {
			arr := []any{}
			for k := 0; k < 1+g.r.Intn(3); k++ {
				arr = append(arr, anyID())
			}
			manifest["global_claim_ids"] = arr
		}
		if g.chance(0.2) {
			manifest["scope_filtered"] = g.pick(true, false, "true")
		}
		if g.chance(0.25) {
			manifest["multi_scope"] = g.pick(true, false, 1)
		}
	}
	if len(manifest) > 0 || g.chance(0.05) {
		body["manifest"] = manifest
	}
	return body
}

func pad2(i int) string {
	if i < 10 {
		return "0" + strconv.Itoa(i)
	}
	return strconv.Itoa(i)
}
