// Package mem0history turns Mem0's history table (the history.db of Mem0 OSS: one row per ADD,
// UPDATE or DELETE of a memory, with its actor and timestamps) into a mutation-log export for
// memory-forget-envelope/v1 (docs/forget-envelope.md), with an inventory that says what the source
// cannot tell. It is caller-side and pure: rows in, export and inventory out. No memory text
// (old_memory, new_memory) is ever copied into the export.
package mem0history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Row is one history row as read from the table (JSON Lines with the table's own column names).
type Row struct {
	MemoryID  *string `json:"memory_id"`
	Event     *string `json:"event"`
	CreatedAt *string `json:"created_at"`
	// Timestamp is the time column of the older history schema (prev_value, new_value, timestamp).
	Timestamp *string `json:"timestamp"`
	ActorID   *string `json:"actor_id"`
}

// ScopeDimensions are Mem0's scope keys. The history table carries none of them, so every key of
// the export has an empty scope, and the inventory says so.
var ScopeDimensions = []string{"user_id", "agent_id", "run_id"}

// MaxEvents is the audit's event cap (criteria caps.events_per_audit).
const MaxEvents = 1000

// Inventory says what was converted and what the source cannot tell.
type Inventory struct {
	Source        string         `json:"source"`
	Rows          int            `json:"rows"`
	Events        map[string]int `json:"events"`
	SkippedRows   map[string]int `json:"skipped_rows"`
	Memories      int            `json:"memories"`
	RowsWithActor int            `json:"rows_with_actor"`
	Order         string         `json:"order"`
	Versions      string         `json:"versions"`
	NotInSource   []string       `json:"not_in_source"`
	// NotAssessable names each factor the source makes NOT ASSESSABLE and why, in words.
	NotAssessable map[string]string `json:"not_assessable"`
}

// Export is the mutation-log export (the request body of /v1/forget-envelope/...).
type Export struct {
	Format           string   `json:"format"`
	ForgetMode       string   `json:"forget_mode"`
	ScopeDimensions  []string `json:"scope_dimensions"`
	ReinsertIdentity string   `json:"reinsert_identity"`
	Events           []Event  `json:"events"`
}

// Event is one mutation-log event.
type Event struct {
	Seq       int    `json:"seq"`
	Op        string `json:"op"`
	Key       Key    `json:"key"`
	Principal string `json:"principal,omitempty"`
	Version   *int   `json:"version,omitempty"`
}

// Key is a canonical key: Mem0's memory id under an empty scope.
type Key struct {
	Scope map[string]string `json:"scope"`
	Name  string            `json:"name"`
}

type row struct {
	Row
	index int
	at    string
}

// Convert reads history rows (JSON Lines) and returns the export and its inventory. Rows are
// ordered by their created_at text (Mem0 writes ISO 8601 timestamps, which order as text; the older
// schema's timestamp column otherwise), rows without a time first, ties in table order; they are
// numbered seq 1, 2, ... in that order. ADD and UPDATE are writes, DELETE is a forget; any other
// event (Mem0's NONE) is skipped and counted. A write's version is the count of writes to its
// memory so far (the table has no version column).
func Convert(jsonl []byte) (*Export, *Inventory, error) {
	inv := &Inventory{Source: "mem0-history (Mem0 OSS history.db, table history)", Events: map[string]int{"write": 0, "forget": 0},
		SkippedRows: map[string]int{}}
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(jsonl))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r Row
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, nil, fmt.Errorf("mem0-history: row %d is not a JSON object of history columns", inv.Rows)
		}
		if r.MemoryID == nil || *r.MemoryID == "" {
			return nil, nil, fmt.Errorf("mem0-history: row %d has no memory_id", inv.Rows)
		}
		at := ""
		switch {
		case r.CreatedAt != nil:
			at = *r.CreatedAt
		case r.Timestamp != nil:
			at = *r.Timestamp
		}
		rows = append(rows, row{Row: r, index: inv.Rows, at: at})
		inv.Rows++
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("mem0-history: read rows: %w", err)
	}
	if inv.Rows == 0 {
		return nil, nil, errors.New("mem0-history: no history rows")
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].at < rows[j].at })
	ex := &Export{Format: "mutation-log", ForgetMode: "transitional", ScopeDimensions: ScopeDimensions, ReinsertIdentity: "new_key",
		Events: []Event{}}
	writes := map[string]int{}
	memories := map[string]bool{}
	for _, r := range rows {
		ev := ""
		if r.Event != nil {
			ev = *r.Event
		}
		var e Event
		switch ev {
		case "ADD", "UPDATE":
			writes[*r.MemoryID]++
			v := writes[*r.MemoryID]
			e = Event{Op: "write", Version: &v}
		case "DELETE":
			e = Event{Op: "forget"}
		default:
			name := ev
			if r.Event == nil {
				name = "(none)"
			}
			inv.SkippedRows[name]++
			continue
		}
		memories[*r.MemoryID] = true
		e.Seq = len(ex.Events) + 1
		e.Key = Key{Scope: map[string]string{}, Name: *r.MemoryID}
		if r.ActorID != nil && *r.ActorID != "" {
			e.Principal = *r.ActorID
			inv.RowsWithActor++
		}
		inv.Events[e.Op]++
		ex.Events = append(ex.Events, e)
	}
	inv.Memories = len(memories)
	if len(ex.Events) == 0 {
		return nil, nil, errors.New("mem0-history: no ADD, UPDATE or DELETE rows")
	}
	if len(ex.Events) > MaxEvents {
		return nil, nil, fmt.Errorf("mem0-history: %d events, over the audit's cap of %d: give the rows of fewer memories", len(ex.Events), MaxEvents)
	}
	inv.Order = "seq follows created_at (text order of Mem0's ISO 8601 timestamps), rows without a time first, ties in table order"
	inv.Versions = "the history table has no version column: a write's version is the count of ADD/UPDATE rows of its memory so far"
	inv.NotInSource = []string{
		"no authority envelope: Mem0 logs who acted (actor_id), never who may mutate a memory, so no forget records an envelope",
		"no scope columns in history: user_id, agent_id and run_id are not in the history table, so every key has an empty scope",
		"no principal table and no scope grants: actor_id is carried as the event's principal, unverified",
		"a re-added memory gets a new memory_id: a reinsert into a forgotten memory cannot show in the log (reinsert_identity new_key)",
		"no final-state snapshot: the memories themselves live in the vector store, not in history.db",
		"no reopen and no session reassignment operations",
	}
	inv.NotAssessable = map[string]string{
		"reinserts_after_forget":     "a re-added memory gets a new id, so reinserts are not observable",
		"reinserts_outside_envelope": "reinserts are not observable, and there is no principal table and no envelope",
		"alias_reinserts":            "reinserts are not observable",
		"reopens":                    "Mem0's delete is a transitional forget: no key is retired",
		"reassignments":              "no session reassignment is logged",
		"replay":                     "no final-state snapshot",
	}
	return ex, inv, nil
}
