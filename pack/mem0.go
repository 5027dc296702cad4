package pack

import (
	"encoding/json"
	"fmt"
	"time"
)

// mem0ScopeKeys are copied as the store names them (the platform list calls the run id
// session_id; the search endpoint and the OSS library call it run_id). The criteria normalise.
var mem0ScopeKeys = []string{"user_id", "agent_id", "app_id", "run_id", "session_id"}

// mem0Dropped are search/embedding artefacts that say nothing about the stored record.
var mem0Dropped = map[string]bool{
	"score": true, "score_breakdown": true, "embedding": true, "vector": true,
	"previous_embedding_qwen": true, "embedding_qwen": true,
}

var mem0EnvelopeKeys = []string{"results", "memories", "items", "data"}

func buildMem0(in Inputs, opt Options, inv *Inventory) ([]Record, error) {
	r := newMem0Reader(opt, inv)
	for _, f := range in.Records {
		if err := r.readFile(f); err != nil {
			return nil, err
		}
	}
	r.noteEnvelopes()
	if err := applyMem0History(in.History, r.recs, r.index, inv); err != nil {
		return nil, err
	}
	if r.oss {
		inv.absent("app_id", "Mem0 OSS has no app_id entity; an app_id inside metadata stays in metadata and is never promoted to a scope")
		inv.absent("replaced_by", "Mem0 OSS has no supersede pointer")
		inv.absent("lifecycle_state", "Mem0 OSS has no lifecycle state")
	} else {
		inv.absent("lifecycle_state", "present only on v1 get/list responses; copied where a record carries it")
	}
	inv.absent("is_deleted", "deletes are hard deletes (the record leaves the dump); set only from a DELETE history event when history files are given")
	inv.absent("expired_at", "not derived: an expiration_date before the capture cutoff sets lifecycle_state \"expired\" instead (a lone expired_at would be a split state)")
	return r.recs, nil
}

// mem0Reader reads Mem0 memory files into records, keeping what the pages' envelopes and the
// items' search scores say about the dump's completeness.
type mem0Reader struct {
	opt    Options
	inv    *Inventory
	oss    bool
	class  string
	mapped map[string]bool
	recs   []Record
	index  map[string]int // record index by id

	envCount                                                 int64
	pagesWithEnvelope, lastPages, pagesWithNext, searchItems int
}

func newMem0Reader(opt Options, inv *Inventory) *mem0Reader {
	r := &mem0Reader{opt: opt, inv: inv, oss: opt.Source == Mem0OSS, class: "mem0_memory", index: map[string]int{},
		mapped: map[string]bool{"id": true, "memory": true, "metadata": true, "replaced_by": true, "lifecycle_state": true, "state": true}}
	if r.oss {
		r.class = "mem0_oss_memory"
		r.mapped["data"] = true
	}
	for _, k := range mem0ScopeKeys {
		r.mapped[k] = true
	}
	return r
}

// readFile reads one memory file: a page (with its envelope) or a list of memories.
func (r *mem0Reader) readFile(f File) error {
	items, env, err := readItems(f, mem0EnvelopeKeys...)
	if err != nil {
		return err
	}
	r.inv.envelopeOmissions("mem0", env)
	if env.Key != "" {
		r.pagesWithEnvelope++
		if env.HasCount && env.Count > r.envCount {
			r.envCount = env.Count
		}
		if env.HasNext {
			r.pagesWithNext++
			if env.NextNull {
				r.lastPages++
			}
		}
	}
	scored := 0
	for i, it := range items {
		if _, hasScore := it["score"]; hasScore {
			scored++
		}
		rec, err := r.record(f.Name, i, it, len(items) == 1 && env.Locs[0] == "")
		if err != nil {
			return err
		}
		id := rec["id"].(string)
		if j, dup := r.index[id]; dup {
			if sameRecord(r.recs[j], rec) {
				r.inv.count("duplicate_items_dropped (same id, same record, e.g. overlapping pages)", 1)
				continue
			}
			return fmt.Errorf("pack: %s: item %d: id repeats an earlier item with different fields", f.Name, i)
		}
		r.index[id] = len(r.recs)
		r.recs = append(r.recs, rec)
		r.inv.from(id, f.Name, env.Locs[i])
	}
	// A file whose every item carries a search score is a search result, not a dump.
	if scored > 0 && scored == len(items) {
		r.searchItems += scored
	}
	return nil
}

// record maps item i of a file; lone says the file is one bare object.
func (r *mem0Reader) record(name string, i int, it map[string]any, lone bool) (Record, error) {
	id, ok := str(it, "id")
	if _, fact := it["fact"]; !ok && fact {
		return nil, fmt.Errorf("pack: %s: item %d: carries fact and no id: this looks like a Graphiti/Zep edge dump (use --from graphiti or zep-cloud)", name, i)
	}
	if !ok && lone && it["memory"] == nil && it["content"] == nil {
		return nil, fmt.Errorf("pack: %s: one object with no memory id or text: a schema-shaped memory export (POST /v1/exports/) holds what an LLM extracted into your schema, not memory records; dump the memories with get_all, or export with a schema {\"memories\": [{\"id\", \"memory\", \"user_id\", \"agent_id\", \"app_id\", \"run_id\", \"metadata\"}]}", name)
	}
	if !ok || id == "" {
		return nil, fmt.Errorf("pack: %s: item %d: id missing or not a string", name, i)
	}
	text, ok := str(it, "memory")
	if !ok && r.oss {
		text, ok = str(it, "data") // raw vector-store payload names the text "data"
	}
	if !ok {
		if text, ok = str(it, "content"); ok { // OpenMemory backups name the text "content"
			r.mapped["content"] = true
			r.inv.count("openmemory_items (text read from content)", 1)
		}
	}
	if !ok {
		return nil, fmt.Errorf("pack: %s: item %d: memory text missing or not a string", name, i)
	}
	rec := Record{"id": id, "content_text": text, "record_class": r.class}
	for _, k := range mem0ScopeKeys {
		if v, ok := it[k]; ok && v != nil {
			rec[k] = v
		}
	}
	// state: OpenMemory's active, paused, archived, deleted
	for _, k := range []string{"replaced_by", "lifecycle_state", "state"} {
		if v, ok := it[k]; ok && v != nil {
			rec[k] = v
		}
	}
	if v, ok := it["expiration_date"]; ok && v != nil {
		mem0Expiry(rec, v, r.opt.Cutoff, r.inv)
	}
	native := splitNative(it, r.mapped, mem0Dropped, r.inv)
	withMetadata(rec, it["metadata"], native, r.inv)
	return rec, nil
}

// noteEnvelopes says what the pages' envelopes and the search scores say about completeness.
func (r *mem0Reader) noteEnvelopes() {
	if r.pagesWithEnvelope > 0 {
		if r.envCount > int64(len(r.recs)) {
			r.inv.note(fmt.Sprintf("the pagination envelopes report count %d but %d records were read: pages may be missing", r.envCount, len(r.recs)))
		}
		if r.pagesWithNext > 0 && r.lastPages == 0 {
			r.inv.note("no page with next = null was given: the dump may be incomplete")
		}
	}
	if r.searchItems > 0 {
		r.inv.note("the input holds search results (items carry a score): a search returns only the memories that matched, so the submission is not a full dump and every rate covers the matches only")
		r.inv.omit("mem0: memories not returned by the search", OmissionCompatibility, r.searchItems, true,
			"search results (items carry a score) stand for a full dump; the count is the number of scored items read, the memories the search did not return are unknown")
	}
}

// mem0Expiry reads Mem0's expiration_date (a date, or a date-time): a memory whose expiration
// date lies before the capture cutoff's date is expired, and gets lifecycle_state "expired" unless
// it carries a lifecycle state already. Without a cutoff the date cannot be compared: that is a
// blocking loss, counted.
func mem0Expiry(rec Record, v any, cutoff time.Time, inv *Inventory) {
	s, ok := v.(string)
	var exp time.Time
	var err error
	if ok {
		if exp, err = time.Parse("2006-01-02", s); err != nil {
			exp, err = parseTime(s)
		}
	}
	switch {
	case !ok || err != nil:
		inv.omit("mem0: expiration_date not read (not a date)", OmissionCompatibility, 1, true,
			"an expiration_date that is not a date or date-time cannot be compared: the memory counts as live")
	case cutoff.IsZero():
		inv.omit("mem0: expiration_date not compared (no capture cutoff)", OmissionCompatibility, 1, true,
			"without a capture cutoff an expiration_date cannot be compared: the memory counts as live")
	case exp.UTC().Format("2006-01-02") < cutoff.UTC().Format("2006-01-02"):
		if _, has := rec["lifecycle_state"]; has {
			inv.count("expired_memories_with_a_lifecycle_state (state kept)", 1)
			return
		}
		rec["lifecycle_state"] = "expired"
		inv.derive("lifecycle_state", "\"expired\" where Mem0's expiration_date lies before the capture cutoff's date (UTC)")
	default:
		inv.count("memories_with_a_future_expiration_date", 1)
	}
}

// sameRecord compares two packed records by their JSON encoding.
func sameRecord(a, b Record) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

type mem0Event struct {
	at      time.Time
	hasTime bool
	deleted bool
	order   int
}

// applyMem0History marks records deleted whose latest history event is a DELETE (platform
// event "DELETE", or an OSS history.db row with is_deleted 1/true).
func applyMem0History(files []File, recs []Record, index map[string]int, inv *Inventory) error {
	if len(files) == 0 {
		return nil
	}
	latest := map[string]mem0Event{}
	order := 0
	for _, f := range files {
		items, _, err := readItems(f, mem0EnvelopeKeys...)
		if err != nil {
			return err
		}
		for i, it := range items {
			mid, ok := str(it, "memory_id")
			if !ok || mid == "" {
				return fmt.Errorf("pack: %s: history item %d: memory_id missing or not a string", f.Name, i)
			}
			ev, _ := str(it, "event")
			del := ev == "DELETE" || truthy(it["is_deleted"])
			e := mem0Event{deleted: del, order: order}
			order++
			inv.count("history_events_read", 1)
			for _, k := range []string{"created_at", "updated_at"} {
				if s, ok := str(it, k); ok {
					if t, err := parseTime(s); err == nil {
						e.at, e.hasTime = t, true
						break
					}
				}
			}
			if !e.hasTime {
				inv.count("history_events_without_a_timestamp", 1)
			}
			// A DELETE is terminal (Mem0 never re-uses a memory id), so it wins whatever the
			// order of the listing (the TypeScript SDK lists newest first and writes DELETE rows
			// with null timestamps).
			if prev, ok := latest[mid]; ok && (prev.deleted || (!e.deleted && !later(e, prev))) {
				continue
			}
			latest[mid] = e
		}
	}
	inv.omit("mem0: history event texts (old_memory, new_memory, input)", OmissionDeclared, order, false,
		"history is read only for DELETE events; the event texts are past versions, not records of the grade")
	absent := 0
	for _, mid := range sortedKeys(latest) {
		e := latest[mid]
		if !e.deleted {
			continue
		}
		j, ok := index[mid]
		if !ok {
			absent++
			continue
		}
		recs[j]["is_deleted"] = true
		inv.derive("is_deleted", "true where the memory's latest history event is DELETE (or is_deleted)")
	}
	if absent > 0 {
		inv.count("history_deletes_for_memories_not_in_the_dump (not emitted)", absent)
	}
	return nil
}

// later reports whether event a comes after b: by time when both carry one, else by input order.
func later(a, b mem0Event) bool {
	if a.hasTime && b.hasTime && !a.at.Equal(b.at) {
		return a.at.After(b.at)
	}
	return a.order > b.order
}

func truthy(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case json.Number:
		return t.String() == "1"
	}
	return false
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("pack: unparsed time")
}
