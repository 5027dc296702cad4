package mutlog

import (
	"sort"
	"strconv"
	"strings"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// event is one validated event.
type event struct {
	seq       int64
	op        string
	principal *string
	raw, slot string // opaque identities (FE-R-13); never printed
	scope     map[string]string
	version   int64
	envelope  []string // nil: no envelope recorded
	checked   bool     // authority_checked exactly true
}

type principal struct {
	grants []map[string]string // canonical values of the present members
}

// log is a validated export, its events in seq order.
type log struct {
	mode       string
	dims       []string
	table      map[string]*principal // nil when not declared
	principals int
	events     []event // seq order
	snapshot   []snapEntry
	hasSnap    bool
	newKeys    bool // reinsert_identity "new_key" (FE-R-34)
}

type snapEntry struct {
	slot    string
	version int64
}

// canonical applies the criteria's steps in order (FE-R-12).
func canonical(steps []string, s string) string {
	for _, st := range steps {
		switch st {
		case "trim_ascii_space":
			s = strings.Trim(s, " \t\n\r")
		case "ascii_lower":
			b := []byte(s)
			for i, c := range b {
				if 'A' <= c && c <= 'Z' {
					b[i] = c + ('a' - 'A')
				}
			}
			s = string(b)
		}
	}
	return s
}

func writeLP(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}

// identities builds a key's raw and slot identities and its canonical scope (FE-R-13).
func identities(steps, dims []string, scope *jsontree.Value, name string) (raw, slot string, canon map[string]string) {
	var r, s strings.Builder
	canon = map[string]string{}
	for _, d := range dims {
		v := scope.Get(d)
		if !v.Present() {
			r.WriteString("-")
			s.WriteString("-")
			continue
		}
		c := canonical(steps, v.Str())
		canon[d] = c
		r.WriteString("+")
		writeLP(&r, v.Str())
		s.WriteString("+")
		writeLP(&s, c)
	}
	writeLP(&r, name)
	writeLP(&s, canonical(steps, name))
	return r.String(), s.String(), canon
}

// readLog turns a validated export into a log.
func readLog(ms *rules.MutLogSet, top *jsontree.Value) *log {
	crit := ms.Criteria()
	steps := crit.Canonicalization
	l := &log{mode: top.Get("forget_mode").Str()}
	if ri := top.Get("reinsert_identity"); ri.Kind() == jsontree.String && ri.Str() == "new_key" {
		l.newKeys = true
	}
	for _, d := range top.Get("scope_dimensions").Arr() {
		l.dims = append(l.dims, d.Str())
	}
	if ps := top.Get("principals").Arr(); len(ps) > 0 {
		l.table = map[string]*principal{}
		l.principals = len(ps)
		for i := range ps {
			pr := &principal{}
			gs := ps[i].Get("grants").Arr()
			for j := range gs {
				m := map[string]string{}
				for _, mem := range gs[j].Obj() {
					if mem.Val.Present() {
						m[mem.Name] = canonical(steps, mem.Val.Str())
					}
				}
				pr.grants = append(pr.grants, m)
			}
			l.table[ps[i].Get("id").Str()] = pr
		}
	}
	for _, e := range top.Get("events").Arr() {
		ev := event{op: e.Get("op").Str()}
		ev.seq, _ = integer(e.Get("seq"), 1)
		if p := e.Get("principal"); p.Present() {
			s := p.Str()
			ev.principal = &s
		}
		spec := crit.OpsEvents[ev.op]
		if spec.Target == "key" {
			k := e.Get("key")
			ev.raw, ev.slot, ev.scope = identities(steps, l.dims, k.Get("scope"), k.Get("name").Str())
		}
		if spec.Version {
			ev.version, _ = integer(e.Get("version"), 0)
		}
		if env := e.Get("envelope"); spec.Envelope && env.Kind() == jsontree.Array {
			es := env.Arr()
			ev.envelope = make([]string, 0, len(es))
			for _, s := range es {
				ev.envelope = append(ev.envelope, s.Str())
			}
		}
		if spec.AuthorityCheck {
			a := e.Get("authority_checked")
			ev.checked = a.Kind() == jsontree.Bool && a.Bool()
		}
		l.events = append(l.events, ev)
	}
	sort.Slice(l.events, func(i, j int) bool { return l.events[i].seq < l.events[j].seq })
	if s := top.Get("snapshot"); s.Kind() == jsontree.Array {
		l.hasSnap = true
		for _, e := range s.Arr() {
			k := e.Get("key")
			_, slot, _ := identities(steps, l.dims, k.Get("scope"), k.Get("name").Str())
			v, _ := integer(e.Get("version"), 0)
			l.snapshot = append(l.snapshot, snapEntry{slot: slot, version: v})
		}
	}
	return l
}

// covers reports whether a principal's grants cover a slot's canonical scope (FE-R-23).
func (p *principal) covers(scope map[string]string) bool {
	for _, g := range p.grants {
		ok := true
		for d, v := range g {
			if sv, has := scope[d]; !has || sv != v {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// slotState is one slot during replay.
type slotState struct {
	status    string
	version   int64
	lastWrite int64
	forget    *event // the latest forget on the slot (the governing forget of a reinsert)
	raws      map[string]bool
}

// replayed is the outcome of the replay: the events that are judged, in seq order.
type replayed struct {
	slots       map[string]*slotState
	order       []string // slots in first-seen order
	reinserts   []reinsert
	reopens     []*event // effective reopens
	forgotNotLv int
	reopenNoop  int
}

type reinsert struct {
	ev     *event
	forget *event
}

// replay moves every slot through the criteria's transition table (FE-R-14..FE-R-19).
func replay(ms *rules.MutLogSet, l *log) *replayed {
	rp := ms.Criteria().Replay
	table := rp.Modes[l.mode]
	r := &replayed{slots: map[string]*slotState{}}
	for i := range l.events {
		ev := &l.events[i]
		if ev.op == "reassign" {
			continue
		}
		s := r.slots[ev.slot]
		if s == nil {
			s = &slotState{status: rp.Initial, raws: map[string]bool{}}
			r.slots[ev.slot] = s
			r.order = append(r.order, ev.slot)
		}
		s.raws[ev.raw] = true
		from := s.status
		to, moves := table[ev.op][from]
		switch ev.op {
		case "write":
			if contains(rp.ReinsertFrom, from) {
				r.reinserts = append(r.reinserts, reinsert{ev: ev, forget: s.forget})
			}
			s.version, s.lastWrite = ev.version, ev.seq
		case "forget":
			if from != rp.Live {
				r.forgotNotLv++
			}
			s.forget = ev
		case "reopen":
			if moves {
				r.reopens = append(r.reopens, ev)
			} else {
				r.reopenNoop++
			}
		}
		if moves {
			s.status = to
		}
	}
	return r
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
