package pack

import (
	"fmt"
	"strconv"
)

// passageMapped are the passage members mapped onto the record (the rest go to native).
var passageMapped = map[string]bool{"id": true, "text": true, "metadata": true, "is_deleted": true, "file_id": true, "agent_id": true}

// addPassage maps one passage; its scope is resolved in finish (after every file is read).
func (b *lettaBundle) addPassage(where string, i int, it map[string]any, listedFor, loc string) error {
	id, ok := str(it, "id")
	if !ok || id == "" {
		return fmt.Errorf("pack: %s: passage %d: id missing or not a string", where, i)
	}
	text, ok := str(it, "text")
	if !ok {
		return fmt.Errorf("pack: %s: passage %d: text missing or not a string", where, i)
	}
	archiveID, _ := str(it, "archive_id")
	sourceID, _ := str(it, "source_id")
	fileID := it["file_id"]
	source := archiveID == "" && (sourceID != "" || isSet(fileID))
	rec := Record{"id": id, "content_text": text}
	if source {
		rec["record_class"] = "letta_source_passage"
		rec["source_passage"] = true
	} else {
		rec["record_class"] = "letta_archival_passage"
	}
	if isSet(fileID) {
		rec["file_id"] = fileID
	}
	if v, ok := it["is_deleted"]; ok && v != nil {
		rec["is_deleted"] = v
	}
	var agents []string
	if a, ok := str(it, "agent_id"); ok && a != "" { // pre-0.10 passages name their agent natively
		agents = append(agents, a)
		b.inv.count("passages_with_legacy_agent_id", 1)
	}
	if listedFor != "" {
		agents = append(agents, listedFor)
	}
	native := splitNative(it, passageMapped, lettaDropped, b.inv)
	withMetadata(rec, it["metadata"], native, b.inv)
	b.pending = append(b.pending, pendingPassage{rec: rec, archiveID: archiveID, sourceID: sourceID, agents: agents, file: where, loc: loc})
	return nil
}

// addArchives reads an archive-to-agent resolution: rows {archive_id, agent_id, is_owner?}
// (the archives_agents table), objects {archive_id|id, agent_ids|agents: [...]}, or one object
// mapping archive id to a list of agent ids (or agent objects with an id).
func (b *lettaBundle) addArchives(f File) error {
	items, _, err := readItems(f)
	if err != nil {
		return err
	}
	if len(items) == 1 && items[0]["archive_id"] == nil && items[0]["id"] == nil {
		for _, arch := range sortedKeys(items[0]) {
			if err := b.archiveAgents(f.Name, 0, arch, items[0][arch]); err != nil {
				return err
			}
		}
		return nil
	}
	for i, it := range items {
		arch, ok := str(it, "archive_id")
		if !ok {
			arch, ok = str(it, "id")
		}
		if !ok || arch == "" {
			return fmt.Errorf("pack: %s: archive row %d: archive_id missing or not a string", f.Name, i)
		}
		if a, ok := str(it, "agent_id"); ok && a != "" {
			addTo(b.archives, arch, a)
			continue
		}
		list := it["agent_ids"]
		if list == nil {
			list = it["agents"]
		}
		if err := b.archiveAgents(f.Name, i, arch, list); err != nil {
			return err
		}
	}
	return nil
}

func (b *lettaBundle) archiveAgents(name string, i int, arch string, v any) error {
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("pack: %s: archive row %d: expected a list of agents", name, i)
	}
	if b.archives[arch] == nil {
		b.archives[arch] = map[string]bool{}
	}
	for _, x := range arr {
		switch t := x.(type) {
		case string:
			addTo(b.archives, arch, t)
		case map[string]any:
			if s, ok := str(t, "id"); ok && s != "" {
				addTo(b.archives, arch, s)
			} else {
				return fmt.Errorf("pack: %s: archive row %d: agent without an id", name, i)
			}
		default:
			return fmt.Errorf("pack: %s: archive row %d: agent entry is not a string or object", name, i)
		}
	}
	return nil
}

// addPassageFile reads a passage dump: an array / JSON Lines / envelope of passages, or one
// object mapping agent id to that agent's archival listing (GET /v1/agents/{id}/archival-memory).
func (b *lettaBundle) addPassageFile(f File) error {
	items, env, err := readItems(f, "passages", "results", "items", "data")
	if err == nil {
		for i, it := range items {
			if err := b.addPassage(f.Name, i, it, "", env.Locs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	v, derr := decodeValue(f.Data)
	m, ok := v.(map[string]any)
	if derr != nil || !ok {
		return err
	}
	for _, agent := range sortedKeys(m) {
		arr, ok := m[agent].([]any)
		if !ok {
			return err
		}
		objs, _, oerr := objects(f.Name, arr)
		if oerr != nil {
			return oerr
		}
		for i, it := range objs {
			if perr := b.addPassage(f.Name, i, it, agent, "/"+pointerToken(agent)+"/"+strconv.Itoa(i)); perr != nil {
				return perr
			}
		}
	}
	b.inv.note("passages listed per agent: each listing's agent is added to the passage's attached_to; a shared archive's passages are kept once with the union")
	return nil
}
