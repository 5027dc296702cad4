package pack

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// zepScopePattern names a listing's scope in its file name: "...graph=<id>.json" for a
// standalone graph, "...user=<id>.json" for a user graph (.jsonl accepted). The id is everything
// after "=" up to the extension.
var zepScopePattern = regexp.MustCompile(`(?:^|[._-])(graph|user)=(.+)\.jsonl?$`)

// ZepScopeFromName returns the scope kind ("graph" or "user") and id named by a file name, or ok
// false when the name does not follow the pattern.
func ZepScopeFromName(name string) (kind, id string, ok bool) {
	m := zepScopePattern.FindStringSubmatch(filepath.Base(name))
	if m == nil || strings.TrimSpace(m[2]) == "" {
		return "", "", false
	}
	return m[1], m[2], true
}

// buildZepCloud maps Zep Cloud v3 edge listings. v3 edges carry no scope, so the scope each
// listing came from (a flag, or the file's name) is stamped on every record as graph_id.
func buildZepCloud(in Inputs, opt Options, inv *Inventory) ([]Record, error) {
	if opt.GraphID != "" && opt.UserID != "" {
		return nil, fmt.Errorf("pack: give --graph-id or --user-id, not both")
	}
	var recs []Record
	index := map[string]int{}
	for _, f := range in.Records {
		kind, id := "", ""
		switch {
		case opt.GraphID != "":
			kind, id = "graph", opt.GraphID
		case opt.UserID != "":
			kind, id = "user", opt.UserID
		}
		if k, i, ok := ZepScopeFromName(f.Name); ok {
			if kind != "" && (k != kind || i != id) {
				return nil, fmt.Errorf("pack: %s: the scope in the file name differs from the scope flag", f.Name)
			}
			kind, id = k, i
		}
		if kind == "" {
			return nil, fmt.Errorf("pack: %s: Zep Cloud edges carry no scope: give --graph-id / --user-id, or name the file ...graph=<id>.json / ...user=<id>.json", f.Name)
		}
		graphID := id
		if kind == "user" {
			graphID = "user:" + id
		}
		items, env, err := readItems(f, edgeEnvelopeKeys...)
		if err != nil {
			return nil, err
		}
		inv.envelopeOmissions("zep-cloud", env)
		withGroup := 0
		for i, it := range items {
			rec, err := edgeRecord(f, i, it, "zep_entity_edge", inv)
			if err != nil {
				return nil, err
			}
			if isSet(rec["group_id"]) {
				withGroup++
			}
			if _, native := rec["graph_id"]; native {
				inv.count("records_with_native_graph_id (stamp not applied)", 1)
			} else {
				rec["graph_id"] = graphID
				inv.derive("graph_id", "stamped from the listing's scope (flag or file name); user graphs as \"user:<user_id>\"")
				if kind == "user" {
					if _, has := rec["user_id"]; !has {
						rec["user_id"] = id
						inv.derive("user_id", "stamped from a user-graph listing's scope (not a default Zep/Graphiti scope key)")
					}
				}
			}
			rid := rec["id"].(string)
			if j, dup := index[rid]; dup {
				if sameRecord(recs[j], rec) {
					inv.count("duplicate_items_dropped (same id, same record)", 1)
					continue
				}
				return nil, fmt.Errorf("pack: %s: edge %d: uuid repeats an earlier edge with different fields", f.Name, i)
			}
			index[rid] = len(recs)
			recs = append(recs, rec)
			inv.from(rid, f.Name, env.Locs[i])
		}
		if withGroup > 0 && withGroup == len(items) {
			return nil, fmt.Errorf("pack: %s: every edge carries group_id: this is a Graphiti dump, not a Zep Cloud v3 listing (use --from graphiti)", f.Name)
		}
	}
	inv.absent("group_id", "Zep Cloud v3 edges carry no group_id/graph_id/user_id; the listing's scope is stamped as graph_id instead")
	inv.absent("episode_group_ids/endpoint_group_ids", "not derived for Zep Cloud: the records carry no group_id for the criteria to compare against, and a listing's episodes and nodes share its scope by construction")
	inv.absent("supersedes/replaced_by/is_deleted", "Zep stores no supersede pointer and no soft delete")
	return recs, nil
}
