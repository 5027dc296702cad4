package pack

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// lettaBundle assembles blocks, agents, passages and the archive-to-agent resolution.
type lettaBundle struct {
	inv      *Inventory
	aliases  map[string]string
	blocks   []Record
	blockIdx map[string]int
	attach   map[string]map[string]bool // block id -> agent ids
	agentSrc map[string]map[string]bool // source id -> agent ids (API agents only)
	archives map[string]map[string]bool // archive id -> agent ids
	passages []Record
	passIdx  map[string]int
	pending  []pendingPassage
}

type pendingPassage struct {
	rec       Record
	archiveID string
	sourceID  string
	agents    []string
	file, loc string
}

func newLettaBundle(opt Options, inv *Inventory) *lettaBundle {
	return &lettaBundle{
		inv: inv, aliases: opt.AgentAliases,
		blockIdx: map[string]int{}, attach: map[string]map[string]bool{},
		agentSrc: map[string]map[string]bool{}, archives: map[string]map[string]bool{},
		passIdx: map[string]int{},
	}
}

func (b *lettaBundle) agentID(prefix, id string) string {
	full := prefix + id
	if a, ok := b.aliases[full]; ok {
		b.inv.count("agent_ids_aliased (--agent-id)", 1)
		return a
	}
	return full
}

func addTo(m map[string]map[string]bool, k, v string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][v] = true
}

var blockMapped = map[string]bool{"id": true, "value": true, "metadata": true, "is_template": true, "template_id": true, "base_template_id": true}
var lettaDropped = map[string]bool{"embedding": true, "embedding_config": true}

// addBlock maps one block. Blocks listed twice (an API block list and an agent's blocks) are
// kept once; a differing second copy is counted, the first kept.
func (b *lettaBundle) addBlock(where string, i int, prefix string, it map[string]any, loc string) error {
	id, ok := str(it, "id")
	if !ok || id == "" {
		return fmt.Errorf("pack: %s: block %d: id missing or not a string", where, i)
	}
	val, ok := str(it, "value")
	if !ok {
		return fmt.Errorf("pack: %s: block %d: value missing or not a string", where, i)
	}
	rec := Record{"id": prefix + id, "content_text": val, "record_class": "letta_block"}
	for _, k := range []string{"is_template", "template_id", "base_template_id"} {
		if v, ok := it[k]; ok && v != nil {
			rec[k] = v
		}
	}
	native := splitNative(it, blockMapped, lettaDropped, b.inv)
	withMetadata(rec, it["metadata"], native, b.inv)
	if j, dup := b.blockIdx[prefix+id]; dup {
		if !sameRecord(b.blocks[j], rec) {
			b.inv.count("block_listed_twice_with_different_fields (first kept)", 1)
		}
		return nil
	}
	b.blockIdx[prefix+id] = len(b.blocks)
	b.blocks = append(b.blocks, rec)
	b.inv.from(prefix+id, where, loc)
	return nil
}

// addAgent records an agent's block and source attachments. API agents may embed their blocks.
func (b *lettaBundle) addAgent(where string, i int, prefix string, it map[string]any, api bool, loc string) error {
	id, ok := str(it, "id")
	if !ok || id == "" {
		return fmt.Errorf("pack: %s: agent %d: id missing or not a string", where, i)
	}
	aid := b.agentID(prefix, id)
	ids, skipped := stringList(it["block_ids"])
	b.inv.count("block_ids_not_strings", skipped)
	var embedded []any
	embeddedAt := loc + "/blocks/"
	if api {
		if arr, ok := it["blocks"].([]any); ok {
			embedded = arr
		} else if mem, ok := it["memory"].(map[string]any); ok {
			embedded, _ = mem["blocks"].([]any)
			embeddedAt = loc + "/memory/blocks/"
		}
	}
	for j, x := range embedded {
		bl, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("pack: %s: agent %d: block %d is not an object", where, i, j)
		}
		if err := b.addBlock(where, j, prefix, bl, embeddedAt+strconv.Itoa(j)); err != nil {
			return err
		}
		if bid, ok := str(bl, "id"); ok {
			ids = append(ids, bid)
		}
	}
	for _, bid := range ids {
		addTo(b.attach, prefix+bid, aid)
	}
	if api {
		for _, k := range sortedKeys(it) {
			if !lettaAPIAgentUsed[k] {
				b.inv.omit("letta-api: agents[]."+k, OmissionDeclared, itemCount(it[k]), false, "agent configuration or state, not a memory record the criteria grade")
			}
		}
		srcs, _ := stringList(it["source_ids"])
		for _, k := range []string{"sources", "folders"} {
			if arr, ok := it[k].([]any); ok {
				for _, x := range arr {
					if m, ok := x.(map[string]any); ok {
						if s, ok := str(m, "id"); ok {
							srcs = append(srcs, s)
						}
					}
				}
			}
		}
		for _, s := range srcs {
			addTo(b.agentSrc, s, aid)
		}
	}
	return nil
}

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

const lettaAttachHow = "blocks: the agents whose block_ids (or API blocks) list the block; passages: the agents of the passage's archive from the archive resolution (L-3), a legacy agent_id, or the agent a per-agent listing came from"

// finish resolves attachments and returns blocks then passages.
func (b *lettaBundle) finish() []Record {
	orphans := 0
	for _, r := range b.blocks {
		agents := sortedKeys(b.attach[r["id"].(string)])
		if len(agents) == 0 {
			orphans++
		}
		r["attached_to"] = agents
		b.inv.derive("attached_to", lettaAttachHow)
	}
	for bid := range b.attach {
		if _, ok := b.blockIdx[bid]; !ok {
			b.inv.unresolved("agent_block_ids_without_a_block", 1)
		}
	}
	b.inv.count("orphan_blocks (attached_to empty)", orphans)
	for _, p := range b.pending {
		id := p.rec["id"].(string)
		agents := map[string]bool{}
		for _, a := range p.agents {
			agents[a] = true
		}
		if p.archiveID != "" {
			if res, ok := b.archives[p.archiveID]; ok {
				for a := range res {
					agents[a] = true
				}
			} else if len(p.agents) == 0 {
				b.inv.unresolved("passage_archive_ids (no archive resolution)", 1)
			}
		}
		if p.sourceID != "" {
			for a := range b.agentSrc[p.sourceID] {
				agents[a] = true
			}
		}
		if j, dup := b.passIdx[id]; dup {
			prev := b.passages[j]
			for _, a := range prev["attached_to"].([]string) {
				agents[a] = true
			}
			prev["attached_to"] = sortedKeys(agents)
			b.inv.count("passages_listed_more_than_once (kept once, attached_to united)", 1)
			continue
		}
		p.rec["attached_to"] = sortedKeys(agents)
		b.inv.from(id, p.file, p.loc)
		b.passIdx[id] = len(b.passages)
		b.passages = append(b.passages, p.rec)
	}
	for _, p := range b.passages {
		if len(p["attached_to"].([]string)) == 0 && p["source_passage"] == nil {
			b.inv.count("archival_passages_unattached", 1)
		}
		b.inv.derive("attached_to", lettaAttachHow)
	}
	out := append([]Record{}, b.blocks...)
	return append(out, b.passages...)
}

func buildLetta(in Inputs, opt Options, inv *Inventory) ([]Record, string, error) {
	b := newLettaBundle(opt, inv)
	switch opt.Source {
	case LettaAF:
		for k, f := range in.Records {
			doc, err := DecodeAF(f.Data)
			if err != nil {
				return nil, "", fmt.Errorf("pack: %s: %w", f.Name, err)
			}
			prefix := ""
			if len(in.Records) > 1 {
				prefix = fmt.Sprintf("af%d:", k+1)
				inv.note(fmt.Sprintf("ids from %s are prefixed %q (agent-file ids are file-local)", f.Name, prefix))
			}
			if err := b.addAF(f.Name, prefix, doc); err != nil {
				return nil, "", err
			}
		}
		inv.absent("template_id/base_template_id", "the .af exporter writes them as null: template lineage is unknown for .af blocks, not known to be absent")
		inv.absent("archival passages (in .af)", "the .af format omits archival passages and archives; they enter only from a passages dump plus the archive resolution")
	case LettaAPI:
		for _, f := range in.Records {
			if err := b.addAPIFile(f); err != nil {
				return nil, "", err
			}
		}
	}
	for _, f := range in.Archives {
		if err := b.addArchives(f); err != nil {
			return nil, "", err
		}
	}
	for _, f := range in.Passages {
		if err := b.addPassageFile(f); err != nil {
			return nil, "", err
		}
	}
	if len(b.pending) > 0 && len(in.Archives) == 0 {
		inv.note("no archive resolution given: archival passages are attached only through a legacy agent_id or a per-agent listing")
	}
	recs := b.finish()
	variant := "mixed"
	switch {
	case len(b.passages) == 0:
		variant = "blocks"
		if opt.Source == LettaAF {
			inv.note("no passages dump given: the submission holds blocks only; this records that archival passages were not available, not that none exist")
		}
	case len(b.blocks) == 0:
		variant = "passages"
	}
	if len(in.Records) > 0 && opt.Source == LettaAF && len(in.Passages) > 0 && len(opt.AgentAliases) == 0 {
		inv.note("agent ids in .af files are file-local (agent-0); passage scopes use server agent ids; they are linked only through --agent-id LOCAL=SERVER")
	}
	return recs, variant, nil
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
var lettaAPIAgentUsed = map[string]bool{"id": true, "block_ids": true, "blocks": true, "memory": true, "source_ids": true, "sources": true, "folders": true}

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

// itemCount is the number of items a member holds: list items, or 1 for a set object or scalar
// (0 for null, false, "" and empty containers).
func itemCount(v any) int {
	if t, ok := v.([]any); ok {
		return len(t)
	}
	if isSet(v) {
		return 1
	}
	return 0
}

func strOr(m map[string]any, k string) string {
	s, _ := str(m, k)
	return s
}

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
