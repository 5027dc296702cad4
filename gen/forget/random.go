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

func randomLog(rng *rand.Rand) (obj, []string) {
	rules := []string{"FE-R-14", "FE-R-18", "FE-R-21"}
	mode := ModeTransitional
	if rng.IntN(3) == 0 {
		mode = ModeTerminal
		rules = append(rules, "FE-R-26")
	}
	nd := 1 + rng.IntN(3)
	dims := append([]string{}, randDims[:nd]...)
	dimsAny := make([]any, nd)
	for i, d := range dims {
		dimsAny[i] = d
	}

	// The principal table (or none), each principal with 0..2 grants.
	var table []any
	var ids []string
	if rng.IntN(4) != 0 {
		np := 1 + rng.IntN(len(randPrincips))
		for _, id := range randPrincips[:np] {
			ids = append(ids, id)
			var grants []any
			for g := rng.IntN(3); g > 0; g-- {
				grant := obj{}
				for _, d := range dims {
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
	} else {
		ids = randPrincips[:2]
	}

	// The slot pool.
	pool := make([]randSlot, 1+rng.IntN(5))
	for i := range pool {
		s := randSlot{parts: make([]string, nd), name: strings.ToLower(randNames[rng.IntN(len(randNames))])}
		for d := range s.parts {
			if rng.IntN(5) != 0 {
				s.parts[d] = strings.ToLower(randValues[rng.IntN(3)])
			}
		}
		pool[i] = s
	}

	principal := func() any {
		if rng.IntN(6) == 0 {
			return nil
		}
		return ids[rng.IntN(len(ids))]
	}
	type state struct {
		live    bool
		version int
		touched bool
	}
	states := make([]state, len(pool))
	var events []any
	seq := 0
	nev := 1 + rng.IntN(40)
	for i := 0; i < nev; i++ {
		seq += 1 + rng.IntN(3)
		si := rng.IntN(len(pool))
		s := pool[si]
		alias := rng.IntN(3) == 0
		switch r := rng.IntN(20); {
		case r < 8:
			v := rng.IntN(5)
			if rng.IntN(2) == 0 {
				v = states[si].version + 1
			}
			events = append(events, wr(seq, s.raw(rng, dims, alias), principal(), v))
			states[si] = state{live: true, version: v, touched: true}
		case r < 14:
			var envelope any
			if rng.IntN(3) != 0 {
				var e []any
				for _, id := range ids {
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
			events = append(events, fg(seq, s.raw(rng, dims, alias), principal(), envelope))
			states[si].live = false
			states[si].touched = true
		case r < 17:
			var checked any
			switch rng.IntN(4) {
			case 0:
				checked = true
			case 1:
				checked = false
			case 2:
				checked = "true"
			}
			events = append(events, ro(seq, s.raw(rng, dims, alias), principal(), checked))
		default:
			session := obj{}
			for _, d := range dims {
				if rng.IntN(2) == 0 {
					session[d] = randValues[rng.IntN(len(randValues))]
				}
			}
			var to any
			if rng.IntN(2) == 0 {
				to = ids[rng.IntN(len(ids))]
			}
			var checked any
			if rng.IntN(2) == 0 {
				checked = true
			}
			events = append(events, ra(seq, session, principal(), to, checked))
			rules = append(rules, "FE-R-27")
		}
	}
	// Array order is irrelevant to replay (FE-R-14): shuffle some logs.
	if rng.IntN(3) == 0 {
		rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	}
	body := obj{"format": "mutation-log", "forget_mode": mode, "scope_dimensions": dimsAny, "events": events}
	if table != nil {
		body["principals"] = table
		rules = append(rules, "FE-R-22", "FE-R-23")
	} else if rng.IntN(2) == 0 {
		body["principals"] = []any{}
	}
	if rng.IntN(10) == 0 {
		body["reinsert_identity"] = "new_key"
		rules = append(rules, "FE-R-34")
	}

	// A snapshot: none, the state the generator meant (which is the replayed state
	// only in transitional mode: a terminal reopen makes a slot absent), or that
	// state perturbed.
	if rng.IntN(4) != 0 {
		rules = append(rules, "FE-R-29")
		var entries []any
		for si, st := range states {
			if st.live && rng.IntN(8) != 0 {
				v := st.version
				if rng.IntN(6) == 0 {
					v++
				}
				entries = append(entries, se(pool[si].raw(rng, dims, rng.IntN(3) == 0), v))
			}
		}
		if rng.IntN(4) == 0 {
			extra := pool[rng.IntN(len(pool))]
			entries = append(entries, se(extra.raw(rng, dims, true), rng.IntN(3)))
		}
		if len(entries) > 0 && rng.IntN(5) == 0 {
			entries = append(entries, entries[rng.IntN(len(entries))])
		}
		rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		if entries == nil {
			entries = []any{}
		}
		body["snapshot"] = entries
	}
	return body, dedupe(rules)
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
