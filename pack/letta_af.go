package pack

import (
	"errors"
	"fmt"
	"strconv"
)

// DecodeAF decodes a Letta agent file. Some published .af files are a JSON string that contains
// the JSON document (double-encoded); those are decoded twice. The result must be an object in
// the v2 multi-entity layout (agents, blocks, ...).
func DecodeAF(data []byte) (map[string]any, error) {
	v, err := decodeValue(data)
	if err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok {
		if v, err = decodeValue([]byte(s)); err != nil {
			return nil, fmt.Errorf("double-encoded: inner document: %w", err)
		}
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	if _, legacy := doc["core_memory"]; legacy {
		return nil, errors.New("legacy v1 agent file (core_memory) is not supported; re-export it with a current Letta server")
	}
	_, hasAgents := doc["agents"]
	_, hasBlocks := doc["blocks"]
	if !hasAgents && !hasBlocks {
		return nil, errors.New("no agents or blocks member: not a v2 agent file")
	}
	return doc, nil
}

func (b *lettaBundle) addAF(name, prefix string, doc map[string]any) error {
	if blocks, ok := doc["blocks"]; ok && blocks != nil {
		arr, ok := blocks.([]any)
		if !ok {
			return fmt.Errorf("pack: %s: blocks is not an array", name)
		}
		objs, _, err := objects(name, arr)
		if err != nil {
			return err
		}
		for i, it := range objs {
			if _, dup := b.blockIdx[prefix+strOr(it, "id")]; dup {
				return fmt.Errorf("pack: %s: block %d: id repeats an earlier block in the file", name, i)
			}
			if err := b.addBlock(name, i, prefix, it, "/blocks/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	if agents, ok := doc["agents"]; ok && agents != nil {
		arr, ok := agents.([]any)
		if !ok {
			return fmt.Errorf("pack: %s: agents is not an array", name)
		}
		objs, _, err := objects(name, arr)
		if err != nil {
			return err
		}
		for i, it := range objs {
			if err := b.addAgent(name, i, prefix, it, false, "/agents/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	b.omitAF(doc)
	if groups, ok := doc["groups"].([]any); ok {
		for _, g := range groups {
			if gm, ok := g.(map[string]any); ok && isSet(gm["shared_block_ids"]) {
				b.inv.count("groups_with_shared_block_ids (not used for attached_to)", 1)
			}
		}
	}
	return nil
}

// afUsed are the .af members (top level, and per agent) that become records or attachments.
var afUsed = map[string]bool{"agents": true, "blocks": true}
var afAgentUsed = map[string]bool{"id": true, "block_ids": true}

// omitAF declares every part of an agent file that is not converted: top-level lists (files,
// sources, tools, groups, ...) and agent members (messages, system prompt, tools, ...), counted by
// item. None of them is a memory record the criteria grade, so none is blocking; files and
// sources hold source material whose passages enter only from a passages dump.
func (b *lettaBundle) omitAF(doc map[string]any) {
	for _, k := range sortedKeys(doc) {
		if afUsed[k] {
			continue
		}
		why := "not a memory record the criteria grade; kept out of the submission"
		if k == "files" || k == "sources" {
			why = "source material (file contents, transcripts): its passages enter only from a passages dump as letta_source_passage records"
		}
		b.inv.omit("letta-af: "+k, OmissionDeclared, itemCount(doc[k]), false, why)
	}
	agents, _ := doc["agents"].([]any)
	for _, a := range agents {
		am, ok := a.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range sortedKeys(am) {
			if afAgentUsed[k] {
				continue
			}
			why := "agent configuration or state, not a memory record the criteria grade"
			if k == "messages" || k == "in_context_message_ids" {
				why = "conversation messages (recall memory): not graded by memory-scope-hygiene/v1"
			}
			b.inv.omit("letta-af: agents[]."+k, OmissionDeclared, itemCount(am[k]), false, why)
		}
	}
}
