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
	g := &maxSizeGen{rng: rand.New(rand.NewPCG(20261201, seed)), dims: []string{"tenant", "agent", "session"}}
	table := g.principals()
	g.slotPool()
	events := g.events()
	body := obj{"format": "mutation-log", "forget_mode": mode, "scope_dimensions": []any{"tenant", "agent", "session"},
		"principals": table, "events": events, "snapshot": []any{}}
	body["snapshot"] = g.snapshot(body)
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return b
}

// maxSizeGen is the state of MaxSizeLog's draws, which happen in a fixed order: principals,
// slots, events, snapshot.
type maxSizeGen struct {
	rng    *rand.Rand
	dims   []string
	ids    []string
	pool   []randSlot
	states []maxSizeSlot
}

// maxSizeSlot is the state the generator means a slot to have.
type maxSizeSlot struct {
	live    bool
	version int
}

// principals draws the table of 24 principals, each with 0..2 grants.
func (g *maxSizeGen) principals() []any {
	rng := g.rng
	var table []any
	for i := 0; i < 24; i++ {
		id := fmt.Sprintf("principal-%02d", i)
		g.ids = append(g.ids, id)
		var grants []any
		for n := rng.IntN(3); n > 0; n-- {
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
	return table
}

// slotPool draws the 400 slots the events touch.
func (g *maxSizeGen) slotPool() {
	rng := g.rng
	g.pool = make([]randSlot, 400)
	for i := range g.pool {
		g.pool[i] = randSlot{parts: []string{fmt.Sprintf("tenant-%04d", rng.IntN(6)), fmt.Sprintf("agent-assistant-%02d", rng.IntN(12)),
			fmt.Sprintf("session-2026-11-%02d-%04d", 1+rng.IntN(30), rng.IntN(40))}, name: fmt.Sprintf("preference.notes.item-%03d", rng.IntN(50))}
	}
	g.states = make([]maxSizeSlot, len(g.pool))
}

// envelope draws a forget's envelope: none one time in four, else 1..4 principals.
func (g *maxSizeGen) envelope() any {
	if g.rng.IntN(4) == 0 {
		return nil
	}
	e := []any{}
	for n := 1 + g.rng.IntN(4); n > 0; n-- {
		e = append(e, g.ids[g.rng.IntN(len(g.ids))])
	}
	return e
}

// events draws EventsCap events in seq order.
func (g *maxSizeGen) events() []any {
	rng, dims := g.rng, g.dims
	var events []any
	for seq := 1; len(events) < EventsCap; seq++ {
		si := rng.IntN(len(g.pool))
		s := g.pool[si]
		alias := rng.IntN(4) == 0
		principal := any(g.ids[rng.IntN(len(g.ids))])
		if rng.IntN(10) == 0 {
			principal = nil
		}
		switch r := rng.IntN(20); {
		case r < 11:
			g.states[si] = maxSizeSlot{live: true, version: g.states[si].version + 1}
			events = append(events, wr(seq, s.raw(rng, dims, alias), principal, g.states[si].version))
		case r < 16:
			g.states[si].live = false
			events = append(events, fg(seq, s.raw(rng, dims, alias), principal, g.envelope()))
		case r < 18:
			events = append(events, ro(seq, s.raw(rng, dims, alias), principal, rng.IntN(2) == 0))
		default:
			session := obj{"tenant": s.parts[0], "agent": s.parts[1], "session": s.parts[2]}
			events = append(events, ra(seq, session, principal, g.ids[rng.IntN(len(g.ids))], rng.IntN(2) == 0))
		}
	}
	return events
}

// snapshot draws one entry per slot the generator meant to leave live (some versions off by
// one), some slots that are not live, and a few repeated, while body stays under the cap.
func (g *maxSizeGen) snapshot(body obj) []any {
	rng := g.rng
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
	for si, st := range g.states {
		if !st.live && rng.IntN(6) != 0 {
			continue
		}
		v := st.version
		if rng.IntN(8) == 0 {
			v++
		}
		if !add(se(g.pool[si].raw(rng, g.dims, rng.IntN(5) == 0), v)) {
			break
		}
	}
	for n := len(entries) / 20; n > 0; n-- {
		if !add(entries[rng.IntN(len(entries))].(obj)) {
			break
		}
	}
	return entries
}
