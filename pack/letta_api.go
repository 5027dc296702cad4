package pack

import (
	"fmt"
	"strings"
)

// lettaAPIAgentUsed are the members of an API agent that become records or attachments.
var lettaAPIAgentUsed = map[string]bool{"id": true, "block_ids": true, "blocks": true, "memory": true, "source_ids": true, "sources": true, "folders": true}

// addAPIFile reads a Letta API dump: a bundle object {agents, blocks, passages, archives_agents}
// or a list whose items are classified by their native members (passage: text; block: value;
// agent: agent_type/blocks/block_ids; archive row: archive_id with agent_id).
func (b *lettaBundle) addAPIFile(f File) error {
	items, env, err := readItems(f)
	if err != nil {
		return err
	}
	if len(items) == 1 && items[0]["id"] == nil {
		doc := items[0]
		known := false
		for _, k := range []string{"agents", "blocks", "passages", "archives_agents", "archives"} {
			arr, ok := doc[k].([]any)
			if !ok {
				continue
			}
			known = true
			objs, _, err := objects(f.Name, arr)
			if err != nil {
				return err
			}
			if err := b.apiItems(f.Name, objs, k, locs(env.Locs[0]+"/"+k+"/", 0, len(objs))); err != nil {
				return err
			}
		}
		if !known {
			return fmt.Errorf("pack: %s: not a Letta API dump (no agents, blocks, passages or archives_agents list)", f.Name)
		}
		for _, k := range sortedKeys(doc) {
			switch k {
			case "agents", "blocks", "passages", "archives_agents", "archives":
			default:
				b.inv.omit("letta-api: "+k, OmissionDeclared, itemCount(doc[k]), false, "not a memory record the criteria grade; kept out of the submission")
			}
		}
		return nil
	}
	return b.apiItems(f.Name, items, "", env.Locs)
}

func (b *lettaBundle) apiItems(name string, items []map[string]any, kind string, at []string) error {
	for i, it := range items {
		k := kind
		if k == "" {
			k = classifyLettaItem(it)
		}
		var err error
		switch k {
		case "agents":
			err = b.addAgent(name, i, "", it, true, at[i])
		case "blocks":
			err = b.addBlock(name, i, "", it, at[i])
		case "passages":
			err = b.addPassage(name, i, it, "", at[i])
		case "archives_agents", "archives":
			arch, ok := str(it, "archive_id")
			if !ok {
				arch, ok = str(it, "id")
			}
			if !ok || arch == "" {
				return fmt.Errorf("pack: %s: archive row %d: archive_id missing or not a string", name, i)
			}
			if a, ok := str(it, "agent_id"); ok && a != "" {
				addTo(b.archives, arch, a)
			} else {
				list := it["agent_ids"]
				if list == nil {
					list = it["agents"]
				}
				err = b.archiveAgents(name, i, arch, list)
			}
		default:
			return fmt.Errorf("pack: %s: item %d is not a recognised Letta agent, block, passage or archive row", name, i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func classifyLettaItem(it map[string]any) string {
	id, _ := str(it, "id")
	_, hasText := it["text"]
	_, hasValue := it["value"]
	switch {
	case hasText:
		return "passages"
	case hasValue && (it["label"] != nil || it["limit"] != nil || strings.HasPrefix(id, "block-")):
		return "blocks"
	case it["agent_type"] != nil || it["block_ids"] != nil || it["blocks"] != nil || strings.HasPrefix(id, "agent-"):
		return "agents"
	case it["archive_id"] != nil && (it["agent_id"] != nil || it["agent_ids"] != nil):
		return "archives_agents"
	}
	return ""
}
