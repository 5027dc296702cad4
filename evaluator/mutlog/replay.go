package mutlog

import (
	"sort"
	"strconv"
	"strings"

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
func identities(steps, dims []string, scope *jval, name string) (raw, slot string, canon map[string]string) {
	var r, s strings.Builder
	canon = map[string]string{}
	for _, d := range dims {
		v := scope.get(d)
		if !v.present() {
			r.WriteString("-")
			s.WriteString("-")
			continue
		}
		c := canonical(steps, v.str)
		canon[d] = c
		r.WriteString("+")
		writeLP(&r, v.str)
		s.WriteString("+")
		writeLP(&s, c)
	}
	writeLP(&r, name)
	writeLP(&s, canonical(steps, name))
	return r.String(), s.String(), canon
}

// readLog turns a validated export into a log.
func readLog(ms *rules.MutLogSet, top *jval) *log {
	crit := ms.Criteria()
	steps := crit.Canonicalization
	l := &log{mode: top.get("forget_mode").str}
	if ri := top.get("reinsert_identity"); ri.kind == kString && ri.str == "new_key" {
		l.newKeys = true
	}
	for _, d := range top.get("scope_dimensions").arr {
		l.dims = append(l.dims, d.str)
	}
	if p := top.get("principals"); p.kind == kArray && len(p.arr) > 0 {
		l.table = map[string]*principal{}
		l.principals = len(p.arr)
		for i := range p.arr {
			pr := &principal{}
			g := p.arr[i].get("grants")
			for j := range g.arr {
				m := map[string]string{}
				for _, mem := range g.arr[j].obj {
					if mem.val.present() {
						m[mem.name] = canonical(steps, mem.val.str)
					}
				}
				pr.grants = append(pr.grants, m)
			}
			l.table[p.arr[i].get("id").str] = pr
		}
	}
	for _, e := range top.get("events").arr {
		ev := event{op: e.get("op").str}
		ev.seq, _ = integer(e.get("seq"), 1)
		if p := e.get("principal"); p.present() {
			s := p.str
			ev.principal = &s
		}
		spec := crit.OpsEvents[ev.op]
		if spec.Target == "key" {
			k := e.get("key")
			ev.raw, ev.slot, ev.scope = identities(steps, l.dims, k.get("scope"), k.get("name").str)
		}
		if spec.Version {
			ev.version, _ = integer(e.get("version"), 0)
		}
		if env := e.get("envelope"); spec.Envelope && env.kind == kArray {
			ev.envelope = make([]string, 0, len(env.arr))
			for _, s := range env.arr {
				ev.envelope = append(ev.envelope, s.str)
			}
		}
		if spec.AuthorityCheck {
			a := e.get("authority_checked")
			ev.checked = a.kind == kBool && a.b
		}
		l.events = append(l.events, ev)
	}
	sort.Slice(l.events, func(i, j int) bool { return l.events[i].seq < l.events[j].seq })
	if s := top.get("snapshot"); s.kind == kArray {
		l.hasSnap = true
		for _, e := range s.arr {
			k := e.get("key")
			_, slot, _ := identities(steps, l.dims, k.get("scope"), k.get("name").str)
			v, _ := integer(e.get("version"), 0)
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
