package pack

import (
	"fmt"
	"strconv"
)

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
