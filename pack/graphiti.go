package pack

import (
	"fmt"
)

// edgeDropped are embedding and search artefacts dropped from Graphiti/Zep edges.
var edgeDropped = map[string]bool{
	"fact_embedding": true, "score": true, "relevance": true, "selection_rank": true,
	"scope": true, // Zep search-only ("entity", "maybe_related"): not a storage scope
}

var edgeEnvelopeKeys = []string{"edges", "results", "items", "data"}

// edgeRecord maps one Graphiti/Zep entity edge. group_id is copied only when the edge carries
// it; invalid_at and expired_at are copied as they are (null stays absent).
func edgeRecord(f File, i int, it map[string]any, class string, inv *Inventory) (Record, error) {
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
	for _, f := range in.Records {
		items, _, err := readItems(f, edgeEnvelopeKeys...)
		if err != nil {
			return nil, err
		}
		for i, it := range items {
			rec, err := edgeRecord(f, i, it, "graphiti_entity_edge", inv)
			if err != nil {
				return nil, err
			}
			if episodes != nil {
				uuids, skipped := stringList(it["episodes"])
				inv.count("episode_references_not_strings", skipped)
				var groups []string
				for _, u := range uuids {
					g, ok := episodes[u]
					if !ok {
						inv.unresolved("episode_uuids", 1)
						continue
					}
					if !contains(groups, g) {
						groups = append(groups, g)
					}
				}
				if len(groups) > 0 {
					rec["episode_group_ids"] = groups
					inv.derive("episode_group_ids", "distinct group_id of the listed episodes named in the edge's episodes[]; unresolved uuids counted, never guessed")
				}
			}
			if nodes != nil {
				var groups []string
				for _, k := range []string{"source_node_uuid", "target_node_uuid"} {
					u, ok := str(it, k)
					if !ok {
						inv.unresolved("endpoint_node_uuid_missing", 1)
						continue
					}
					g, ok := nodes[u]
					if !ok {
						inv.unresolved("endpoint_node_uuids", 1)
						continue
					}
					if !contains(groups, g) {
						groups = append(groups, g)
					}
				}
				if len(groups) > 0 {
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
		}
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
