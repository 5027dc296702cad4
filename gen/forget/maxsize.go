package forget

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// MaxSizeModes are the forget modes MaxSizeLog makes a log for.
var MaxSizeModes = []string{ModeTransitional, ModeTerminal}

// MaxSizeLog is a mutation log near the published caps in forget mode mode, for benchmarks:
// EventsCap events over three scope dimensions and a few hundred slots, written, forgotten with
// and without envelopes, re-inserted (under alias spellings too), reopened and reassigned by a
// table of principals with grants, then a snapshot of the slots the generator meant to leave live,
// perturbed, while the body stays under BodyBytesCap (at most SnapshotCap entries). It is
// deterministic and audited, not refused (TestMaxSizeLogs in corpus checks that engine and oracle
// agree on it).
func MaxSizeLog(mode string) []byte {
	seed := uint64(1000)
	if mode == ModeTerminal {
		seed++
	}
	rng := rand.New(rand.NewPCG(20261201, seed))
	dims := []string{"tenant", "agent", "session"}
	dimsAny := []any{"tenant", "agent", "session"}
	var ids []string
	var table []any
	for i := 0; i < 24; i++ {
		id := fmt.Sprintf("principal-%02d", i)
		ids = append(ids, id)
		var grants []any
		for g := rng.IntN(3); g > 0; g-- {
			grant := obj{"tenant": fmt.Sprintf("tenant-%04d", rng.IntN(6))}
			if rng.IntN(2) == 0 {
				grant["agent"] = fmt.Sprintf("agent-assistant-%02d", rng.IntN(12))
			}
			grants = append(grants, grant)
		}
		if grants == nil {
			grants = []any{}
		}
		table = append(table, obj{"id": id, "grants": grants})
	}
	pool := make([]randSlot, 400)
	for i := range pool {
		pool[i] = randSlot{parts: []string{fmt.Sprintf("tenant-%04d", rng.IntN(6)), fmt.Sprintf("agent-assistant-%02d", rng.IntN(12)),
			fmt.Sprintf("session-2026-11-%02d-%04d", 1+rng.IntN(30), rng.IntN(40))}, name: fmt.Sprintf("preference.notes.item-%03d", rng.IntN(50))}
	}
	type slot struct {
		live    bool
		version int
	}
	states := make([]slot, len(pool))
	envelope := func() any {
		if rng.IntN(4) == 0 {
			return nil
		}
		e := []any{}
		for n := 1 + rng.IntN(4); n > 0; n-- {
			e = append(e, ids[rng.IntN(len(ids))])
		}
		return e
	}
	var events []any
	for seq := 1; len(events) < EventsCap; seq++ {
		si := rng.IntN(len(pool))
		s := pool[si]
		alias := rng.IntN(4) == 0
		principal := any(ids[rng.IntN(len(ids))])
		if rng.IntN(10) == 0 {
			principal = nil
		}
		switch r := rng.IntN(20); {
		case r < 11:
			states[si] = slot{live: true, version: states[si].version + 1}
			events = append(events, wr(seq, s.raw(rng, dims, alias), principal, states[si].version))
		case r < 16:
			states[si].live = false
			events = append(events, fg(seq, s.raw(rng, dims, alias), principal, envelope()))
		case r < 18:
			events = append(events, ro(seq, s.raw(rng, dims, alias), principal, rng.IntN(2) == 0))
		default:
			session := obj{"tenant": s.parts[0], "agent": s.parts[1], "session": s.parts[2]}
			events = append(events, ra(seq, session, principal, ids[rng.IntN(len(ids))], rng.IntN(2) == 0))
		}
	}
	body := obj{"format": "mutation-log", "forget_mode": mode, "scope_dimensions": dimsAny,
		"principals": table, "events": events, "snapshot": []any{}}
	// The snapshot: one entry per slot the generator meant to leave live (some versions off by
	// one), some slots that are not live, and a few repeated, while the body stays under the cap.
	base, err := json.Marshal(body)
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	total := len(base)
	var entries []any
	add := func(e obj) bool {
		eb, err := json.Marshal(e)
		if err != nil {
			panic(err)
		}
		if total+len(eb)+1 > BodyBytesCap-16 || len(entries) == SnapshotCap {
			return false
		}
		total += len(eb) + 1
		entries = append(entries, e)
		return true
	}
	for si, st := range states {
		if !st.live && rng.IntN(6) != 0 {
			continue
		}
		v := st.version
		if rng.IntN(8) == 0 {
			v++
		}
		if !add(se(pool[si].raw(rng, dims, rng.IntN(5) == 0), v)) {
			break
		}
	}
	for n := len(entries) / 20; n > 0; n-- {
		if !add(entries[rng.IntN(len(entries))].(obj)) {
			break
		}
	}
	body["snapshot"] = entries
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return b
}
