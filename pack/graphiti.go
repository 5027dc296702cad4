package pack

import (
	"fmt"
)

// edgeDropped are embedding and search artefacts dropped from Graphiti/Zep edges.
var edgeDropped = map[string]bool{
	"fact_embedding": true, "score": true, "relevance": true, "selection_rank": true,
	"scope": true, // Zep search-only ("entity", "maybe_related"): not a storage scope
}

// edgeEnvelopeKeys hold edge lists: dumps and pages, and the Graphiti MCP server's
// search_memory_facts answer {"message", "facts"}.
var edgeEnvelopeKeys = []string{"edges", "facts", "results", "items", "data"}

// edgeAliases are the other spellings of edge members: the Zep TypeScript SDK's camelCase, and
// the Zep Python SDK's model_dump()/.json() field name uuid_ (alias uuid).
var edgeAliases = map[string]string{
	"uuid_": "uuid", "groupId": "group_id", "graphId": "graph_id", "userId": "user_id",
	"invalidAt": "invalid_at", "expiredAt": "expired_at", "validAt": "valid_at", "createdAt": "created_at",
	"sourceNodeUuid": "source_node_uuid", "targetNodeUuid": "target_node_uuid",
	"factEmbedding": "fact_embedding",
}

// normaliseEdge renames aliased members to their snake_case names (a member present under both
// spellings keeps the snake_case value; the alias is counted as dropped).
func normaliseEdge(it map[string]any, inv *Inventory) map[string]any {
	var out map[string]any
	for alias, name := range edgeAliases {
		v, ok := it[alias]
		if !ok {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(it))
			for k, x := range it {
				out[k] = x
			}
		}
		delete(out, alias)
		if _, both := it[name]; both {
			inv.drop(alias)
			continue
		}
		out[name] = v
		inv.count("edge_members_renamed ("+alias+" -> "+name+")", 1)
	}
	if out == nil {
		return it
	}
	return out
}

// edgeRecord maps one Graphiti/Zep entity edge. group_id is copied only when the edge carries
// it; invalid_at and expired_at are copied as they are (null stays absent).
func edgeRecord(f File, i int, it map[string]any, class string, inv *Inventory) (Record, error) {
	it = normaliseEdge(it, inv)
	if _, mem0 := it["memory"]; mem0 && it["fact"] == nil {
		return nil, fmt.Errorf("pack: %s: edge %d: carries memory and no fact: this looks like a Mem0 dump (use --from mem0-platform or mem0-oss)", f.Name, i)
	}
	id, ok := str(it, "uuid")
	if !ok || id == "" {
		return nil, fmt.Errorf("pack: %s: edge %d: uuid missing or not a string", f.Name, i)
	}
	fact, ok := str(it, "fact")
	if !ok {
		return nil, fmt.Errorf("pack: %s: edge %d: fact missing or not a string", f.Name, i)
	}
	rec := Record{"id": id, "content_text": fact, "record_class": class}
	mapped := map[string]bool{"uuid": true, "fact": true, "attributes": true, "group_id": true, "invalid_at": true, "expired_at": true, "graph_id": true}
	for _, k := range []string{"group_id", "graph_id", "invalid_at", "expired_at"} {
		if v, ok := it[k]; ok && v != nil {
			rec[k] = v
		}
	}
	native := splitNative(it, mapped, edgeDropped, inv)
	withMetadata(rec, it["attributes"], native, inv)
	return rec, nil
}

// groupIndex maps uuid to group_id from episode or node listings.
func groupIndex(files []File, keys []string, what string, inv *Inventory) (map[string]string, error) {
	idx := map[string]string{}
	for _, f := range files {
		items, _, err := readItems(f, keys...)
		if err != nil {
			return nil, err
		}
		for i, it := range items {
			id, ok := str(it, "uuid")
			if !ok || id == "" {
				return nil, fmt.Errorf("pack: %s: %s %d: uuid missing or not a string", f.Name, what, i)
			}
			inv.omit("graphiti: "+what+" listings (all but uuid and group_id)", OmissionDeclared, 1, false,
				"listings are read only to resolve group ids; their names, summaries and episode contents are not records of the grade")
			g, ok := str(it, "group_id")
			if !ok {
				inv.count(what+"s_without_group_id", 1)
				continue
			}
			if prev, seen := idx[id]; seen && prev != g {
				return nil, fmt.Errorf("pack: %s: %s %d: uuid listed earlier with a different group_id", f.Name, what, i)
			}
			idx[id] = g
		}
	}
	return idx, nil
}

func buildGraphiti(in Inputs, inv *Inventory) ([]Record, error) {
	var episodes, nodes map[string]string
	var err error
	if len(in.Episodes) > 0 {
		if episodes, err = groupIndex(in.Episodes, []string{"episodes", "results", "items", "data"}, "episode", inv); err != nil {
			return nil, err
		}
	}
	if len(in.Nodes) > 0 {
		if nodes, err = groupIndex(in.Nodes, []string{"nodes", "results", "items", "data"}, "node", inv); err != nil {
			return nil, err
		}
	}
	var recs []Record
	index := map[string]int{}
	noGroup := 0
	for _, f := range in.Records {
		items, env, err := readItems(f, edgeEnvelopeKeys...)
		if err != nil {
			return nil, err
		}
		inv.envelopeOmissions("graphiti", env)
		for i, it := range items {
			rec, err := edgeRecord(f, i, it, "graphiti_entity_edge", inv)
			if err != nil {
				return nil, err
			}
			if !isSet(rec["group_id"]) {
				noGroup++
			}
			if episodes != nil {
				if groups := episodeGroups(it, episodes, inv); len(groups) > 0 {
					rec["episode_group_ids"] = groups
					inv.derive("episode_group_ids", "distinct group_id of the listed episodes named in the edge's episodes[]; unresolved uuids counted, never guessed")
				}
			}
			if nodes != nil {
				if groups := endpointGroups(it, nodes, inv); len(groups) > 0 {
					rec["endpoint_group_ids"] = groups
					inv.derive("endpoint_group_ids", "distinct group_id of the edge's source and target nodes from the node listing; unresolved uuids counted, never guessed")
				}
			}
			if j, dup := index[rec["id"].(string)]; dup {
				if sameRecord(recs[j], rec) {
					inv.count("duplicate_items_dropped (same id, same record)", 1)
					continue
				}
				return nil, fmt.Errorf("pack: %s: edge %d: uuid repeats an earlier edge with different fields", f.Name, i)
			}
			index[rec["id"].(string)] = len(recs)
			recs = append(recs, rec)
			inv.from(rec["id"].(string), f.Name, env.Locs[i])
		}
	}
	if noGroup > 0 {
		inv.note(fmt.Sprintf("%d of %d edges carry no group_id: search results (the Graphiti MCP facts, a Zep search) or a dump that lost its scope; these edges are audited as unscoped", noGroup, len(recs)))
		inv.omit("graphiti: group_id of edges that carry none", OmissionCompatibility, noGroup, true,
			"a Graphiti edge is always stored in a group; an edge without group_id lost its scope on the way, and the audit counts it as unscoped")
	}
	if episodes == nil {
		inv.note("no episode listing given: episode_group_ids not derived")
	}
	if nodes == nil {
		inv.note("no node listing given: endpoint_group_ids not derived")
	}
	inv.absent("supersedes/replaced_by", "Graphiti stores no supersede pointer; a contradiction sets invalid_at/expired_at on the old edge")
	inv.absent("is_deleted", "Graphiti deletes are DETACH DELETE: deleted edges are not in the dump")
	inv.absent("lifecycle_state", "not derived: liveness is read from invalid_at/expired_at as they are")
	return recs, nil
}

// episodeGroups are the distinct groups of the listed episodes an edge names; unresolved and
// malformed references are counted.
func episodeGroups(it map[string]any, episodes map[string]string, inv *Inventory) []string {
	uuids, skipped := stringList(it["episodes"])
	inv.count("episode_references_not_strings", skipped)
	return distinctGroups(uuids, episodes, "episode_uuids", inv)
}

// endpointGroups are the distinct groups of an edge's source and target nodes; missing and
// unresolved endpoints are counted.
func endpointGroups(it map[string]any, nodes map[string]string, inv *Inventory) []string {
	var uuids []string
	for _, k := range []string{"source_node_uuid", "target_node_uuid"} {
		u, ok := str(it, k)
		if !ok {
			inv.unresolved("endpoint_node_uuid_missing", 1)
			continue
		}
		uuids = append(uuids, u)
	}
	return distinctGroups(uuids, nodes, "endpoint_node_uuids", inv)
}

// distinctGroups are the distinct groups index gives the uuids, in order; a uuid it does not
// know is counted as an unresolved what.
func distinctGroups(uuids []string, index map[string]string, what string, inv *Inventory) []string {
	var groups []string
	for _, u := range uuids {
		g, ok := index[u]
		if !ok {
			inv.unresolved(what, 1)
			continue
		}
		if !contains(groups, g) {
			groups = append(groups, g)
		}
	}
	return groups
}
