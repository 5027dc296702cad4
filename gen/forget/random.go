package forget

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The corpus's random logs: their seed and count.
const (
	DefaultSeed        = 16
	DefaultRandomCases = 120
)

// randomCases builds n random mutation logs, deterministic from seed. Each log is
// built in seq order over a small pool of slots, each slot written under several
// raw spellings (aliases); the generator tracks the slots it means so that it can
// offer a matching snapshot, then perturbs it (or not). The expected outcome of each
// log is the oracle's.
func randomCases(seed uint64, n int) ([]Case, error) {
	var out []Case
	for i := 0; i < n; i++ {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		body, rules := randomLog(rng)
		c, err := newCase(fmt.Sprintf("oracle-random-%04d", i+1), ProvenanceGenerated, rules, body)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

var (
	randDims     = []string{"tenant", "agent", "session", "user", "run"}
	randValues   = []string{"A", "B", "7", "s1", "s2", "u-9"}
	randNames    = []string{"pref", "Budget", "tz", "notes", "x"}
	randPrincips = []string{"p1", "p2", "p3", "p4"}
)

// spell returns a raw spelling of a canonical-by-construction value: as is, upper
// case, or padded with ASCII space (all canonicalize alike).
func spell(rng *rand.Rand, v string) string {
	switch rng.IntN(6) {
	case 0:
		return strings.ToUpper(v)
	case 1:
		return " " + v
	case 2:
		return v + "\t"
	default:
		return v
	}
}

type randSlot struct {
	parts []string // "" = omitted; values are lower case
	name  string
}

func (s randSlot) raw(rng *rand.Rand, dims []string, alias bool) obj {
	scope := obj{}
	for i, p := range s.parts {
		if p == "" {
			if rng.IntN(8) == 0 {
				scope[dims[i]] = nil // a null member is an omitted one
			}
			continue
		}
		if alias {
			scope[dims[i]] = spell(rng, p)
		} else {
			scope[dims[i]] = p
		}
	}
	name := s.name
	if alias {
		name = spell(rng, name)
	}
	return k(scope, name)
}

// randLog is one random log under construction: its dimensions, principal ids and
// slot pool, the state the generator means each slot to have, and the rules it shows.
type randLog struct {
	rng    *rand.Rand
	dims   []string
	ids    []string
	pool   []randSlot
	states []randState
	rules  []string
}

// randState is the state the generator means a slot to have after its events.
type randState struct {
	live    bool
	version int
	touched bool
}

// randomLog draws one log. The draws happen in a fixed order (mode, dimensions, table,
// pool, events, shuffle, body flags, snapshot): the corpus pins their outcome.
func randomLog(rng *rand.Rand) (obj, []string) {
	g := &randLog{rng: rng, rules: []string{"FE-R-14", "FE-R-18", "FE-R-21"}}
	mode := ModeTransitional
	if rng.IntN(3) == 0 {
		mode = ModeTerminal
		g.rules = append(g.rules, "FE-R-26")
	}
	nd := 1 + rng.IntN(3)
	g.dims = append([]string{}, randDims[:nd]...)
	dimsAny := make([]any, nd)
	for i, d := range g.dims {
		dimsAny[i] = d
	}
	table := g.principalTable()
	g.slotPool()
	events := g.events()
	// Array order is irrelevant to replay (FE-R-14): shuffle some logs.
	if rng.IntN(3) == 0 {
		rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	}
	body := obj{"format": "mutation-log", "forget_mode": mode, "scope_dimensions": dimsAny, "events": events}
	if table != nil {
		body["principals"] = table
		g.rules = append(g.rules, "FE-R-22", "FE-R-23")
	} else if rng.IntN(2) == 0 {
		body["principals"] = []any{}
	}
	if rng.IntN(10) == 0 {
		body["reinsert_identity"] = "new_key"
		g.rules = append(g.rules, "FE-R-34")
	}
	if rng.IntN(4) != 0 {
		g.rules = append(g.rules, "FE-R-29")
		body["snapshot"] = g.snapshot()
	}
	return body, dedupe(g.rules)
}

// principalTable draws the principal table (or none, with two undeclared ids), each
// principal with 0..2 grants.
func (g *randLog) principalTable() []any {
	rng := g.rng
	if rng.IntN(4) == 0 {
		g.ids = randPrincips[:2]
		return nil
	}
	var table []any
	np := 1 + rng.IntN(len(randPrincips))
	for _, id := range randPrincips[:np] {
		g.ids = append(g.ids, id)
		var grants []any
		for n := rng.IntN(3); n > 0; n-- {
			grant := obj{}
			for _, d := range g.dims {
				if rng.IntN(2) == 0 {
					grant[d] = spell(rng, strings.ToLower(randValues[rng.IntN(3)]))
				}
			}
			grants = append(grants, grant)
		}
		p := obj{"id": id}
		if grants != nil || rng.IntN(2) == 0 {
			if grants == nil {
				grants = []any{}
			}
			p["grants"] = grants
		}
		table = append(table, p)
	}
	return table
}

// slotPool draws the 1..5 slots the events touch.
func (g *randLog) slotPool() {
	rng := g.rng
	g.pool = make([]randSlot, 1+rng.IntN(5))
	for i := range g.pool {
		s := randSlot{parts: make([]string, len(g.dims)), name: strings.ToLower(randNames[rng.IntN(len(randNames))])}
		for d := range s.parts {
			if rng.IntN(5) != 0 {
				s.parts[d] = strings.ToLower(randValues[rng.IntN(3)])
			}
		}
		g.pool[i] = s
	}
	g.states = make([]randState, len(g.pool))
}

func (g *randLog) principal() any {
	if g.rng.IntN(6) == 0 {
		return nil
	}
	return g.ids[g.rng.IntN(len(g.ids))]
}

// events draws 1..40 events in seq order: writes, forgets, reopens and reassigns.
func (g *randLog) events() []any {
	rng := g.rng
	var events []any
	seq := 0
	nev := 1 + rng.IntN(40)
	for i := 0; i < nev; i++ {
		seq += 1 + rng.IntN(3)
		si := rng.IntN(len(g.pool))
		alias := rng.IntN(3) == 0
		switch r := rng.IntN(20); {
		case r < 8:
			events = append(events, g.write(seq, si, alias))
		case r < 14:
			events = append(events, g.forget(seq, si, alias))
		case r < 17:
			events = append(events, g.reopen(seq, si, alias))
		default:
			events = append(events, g.reassign(seq))
		}
	}
	return events
}

func (g *randLog) write(seq, si int, alias bool) obj {
	v := g.rng.IntN(5)
	if g.rng.IntN(2) == 0 {
		v = g.states[si].version + 1
	}
	e := wr(seq, g.pool[si].raw(g.rng, g.dims, alias), g.principal(), v)
	g.states[si] = randState{live: true, version: v, touched: true}
	return e
}

// forget draws a forget that records an envelope two times in three, sometimes naming
// a principal outside the table.
func (g *randLog) forget(seq, si int, alias bool) obj {
	rng := g.rng
	var envelope any
	if rng.IntN(3) != 0 {
		var e []any
		for _, id := range g.ids {
			if rng.IntN(2) == 0 {
				e = append(e, id)
			}
		}
		if rng.IntN(5) == 0 {
			e = append(e, "p-retired")
		}
		if e == nil {
			e = []any{}
		}
		envelope = e
	}
	e := fg(seq, g.pool[si].raw(rng, g.dims, alias), g.principal(), envelope)
	g.states[si].live = false
	g.states[si].touched = true
	return e
}

// reopen draws a reopen whose authority_checked is true, false, a string or absent.
func (g *randLog) reopen(seq, si int, alias bool) obj {
	var checked any
	switch g.rng.IntN(4) {
	case 0:
		checked = true
	case 1:
		checked = false
	case 2:
		checked = "true"
	}
	return ro(seq, g.pool[si].raw(g.rng, g.dims, alias), g.principal(), checked)
}

func (g *randLog) reassign(seq int) obj {
	rng := g.rng
	session := obj{}
	for _, d := range g.dims {
		if rng.IntN(2) == 0 {
			session[d] = randValues[rng.IntN(len(randValues))]
		}
	}
	var to any
	if rng.IntN(2) == 0 {
		to = g.ids[rng.IntN(len(g.ids))]
	}
	var checked any
	if rng.IntN(2) == 0 {
		checked = true
	}
	g.rules = append(g.rules, "FE-R-27")
	return ra(seq, session, g.principal(), to, checked)
}

// snapshot draws the state the generator meant (which is the replayed state only in
// transitional mode: a terminal reopen makes a slot absent), perturbed or not.
func (g *randLog) snapshot() []any {
	rng := g.rng
	var entries []any
	for si, st := range g.states {
		if st.live && rng.IntN(8) != 0 {
			v := st.version
			if rng.IntN(6) == 0 {
				v++
			}
			entries = append(entries, se(g.pool[si].raw(rng, g.dims, rng.IntN(3) == 0), v))
		}
	}
	if rng.IntN(4) == 0 {
		extra := g.pool[rng.IntN(len(g.pool))]
		entries = append(entries, se(extra.raw(rng, g.dims, true), rng.IntN(3)))
	}
	if len(entries) > 0 && rng.IntN(5) == 0 {
		entries = append(entries, entries[rng.IntN(len(entries))])
	}
	rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	if entries == nil {
		entries = []any{}
	}
	return entries
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// RandomLog returns the bytes of one random mutation log, deterministic from (seed, i): the
// same generator as the corpus's random cases, for differential tests that run many more logs
// than the corpus pins.
func RandomLog(seed uint64, i int) ([]byte, error) {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	body, _ := randomLog(rng)
	b, err := json.Marshal(body)
	if err != nil {
		return nil, errMarshal
	}
	return b, nil
}
