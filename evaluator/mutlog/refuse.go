package mutlog

import (
	"strconv"
	"strings"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/refusal"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// Refusal is a free refusal of a malformed or over-cap log: a published rule id and numbers,
// never any part of the export (FE-R-1, FE-R-2).
type Refusal struct {
	refusal.Head
	// Index is the 0-based index of the first failing item, for item-level rules.
	Index *int `json:"index,omitempty"`
	// Caps are given for the cap rules.
	refusal.Caps
}

// BodyBytesCap is the rule id of a body over the byte cap, checked before parsing (FE-R-2).
const BodyBytesCap = refusal.BodyBytesCap

func newRefusal(rule string) *Refusal { return &Refusal{Head: refusal.NewHead(rule)} }

func intp(n int) *int { return &n }

// CheckBodySize refuses a body over the cap before anything reads it (FE-R-2).
func CheckBodySize(ms *rules.MutLogSet, n int) *Refusal {
	if caps, over := refusal.OverCap(ms.Criteria().Caps.BodyBytes, n); over {
		return &Refusal{Head: refusal.NewHead(BodyBytesCap), Caps: caps}
	}
	return nil
}

// maxInt is the largest sequence or version (FE-R-9).
const maxInt = 9007199254740991

// integer reads an integer under FE-R-9: a number written without fraction or exponent, within
// [lo, maxInt].
func integer(v *jsontree.Value, lo int64) (int64, bool) {
	if v.Kind() != jsontree.Number {
		return 0, false
	}
	return integerLit(v.Str(), lo)
}

// integerLit reads a number's literal under FE-R-9.
func integerLit(s string, lo int64) (int64, bool) {
	if !integerText(s) {
		return 0, false
	}
	var n int64
	if d := strings.TrimPrefix(s, "-"); len(d) <= 18 {
		// Eighteen digits cannot overflow an int64: the value is summed here, as ParseInt would
		// find it, at a fifth of its cost (every event's seq and version come through here).
		for i := 0; i < len(d); i++ {
			n = n*10 + int64(d[i]-'0')
		}
		if len(d) < len(s) {
			n = -n
		}
	} else {
		var err error
		if n, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, false
		}
	}
	if n < lo || n > maxInt {
		return 0, false
	}
	return n, true
}

// integerText is whether s is -?(0|[1-9][0-9]*): read by hand rather than by a regular
// expression because every event's seq and version go through it, twice.
func integerText(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func nonEmptyString(v *jsontree.Value) bool { return v.Kind() == jsontree.String && v.Str() != "" }

// view is what the checks read of the export. Each check assumes nothing about the ones before
// it, so any order the criteria choose is sound.
type view struct {
	ms   *rules.MutLogSet
	top  *jsontree.Value
	dims map[string]bool // string entries of scope_dimensions, whatever their validity
	// table holds the principal ids when the table is declared (a non-empty array).
	table map[string]bool
}

func newView(ms *rules.MutLogSet, top *jsontree.Value) *view {
	v := &view{ms: ms, top: top, dims: map[string]bool{}}
	if d := top.Get("scope_dimensions"); d.Kind() == jsontree.Array {
		for _, e := range d.Arr() {
			if e.Kind() == jsontree.String {
				v.dims[e.Str()] = true
			}
		}
	}
	if p := top.Get("principals"); p.Kind() == jsontree.Array && len(p.Arr()) > 0 {
		v.table = map[string]bool{}
		ps := p.Arr()
		for i := range ps {
			if id := ps[i].Get("id"); ps[i].Kind() == jsontree.Object && id.Kind() == jsontree.String {
				v.table[id.Str()] = true
			}
		}
	}
	return v
}

// scopeOK checks a scope object (key.scope, session, a grant): every member names a declared
// dimension and its value is a string or null.
func (v *view) scopeOK(s *jsontree.Value) bool {
	if s.Kind() != jsontree.Object {
		return false
	}
	ms := s.Obj()
	for i := range ms {
		m := &ms[i]
		if !v.dims[m.Name] || (m.Val.Present() && m.Val.Kind() != jsontree.String) {
			return false
		}
	}
	return true
}

// keyOK checks a key object (FE-R-11).
func (v *view) keyOK(k *jsontree.Value) bool {
	return k.Kind() == jsontree.Object && k.Get("name").Kind() == jsontree.String && v.scopeOK(k.Get("scope"))
}

func (v *view) events() []jsontree.Value {
	if e := v.top.Get("events"); e.Kind() == jsontree.Array {
		return e.Arr()
	}
	return nil
}

// check is one refusal rule: whether it holds, and the item index (-1: none) or the observed
// count of a cap rule.
type check func(v *view) (failed bool, index int, observed int)

func whole(b bool) (bool, int, int) { return b, -1, 0 }

// eachEvent fails on the first event object for which fails holds.
func eachEvent(fails func(v *view, e *jsontree.Value, i int) bool) check {
	return func(v *view) (bool, int, int) {
		evs := v.events()
		for i := range evs {
			if evs[i].Kind() == jsontree.Object && fails(v, &evs[i], i) {
				return true, i, 0
			}
		}
		return false, -1, 0
	}
}

func opOf(e *jsontree.Value) string {
	if op := e.Get("op"); op.Kind() == jsontree.String {
		return op.Str()
	}
	return ""
}

// checks implements every refusal code; the criteria's `refusals` order them.
var checks = map[string]check{
	"export_required": func(v *view) (bool, int, int) { return whole(v.top.Kind() != jsontree.Object) },
	"format_invalid": func(v *view) (bool, int, int) {
		f := v.top.Get("format")
		return whole(f.Kind() != jsontree.String || f.Str() != v.ms.Criteria().Format)
	},
	"forget_mode_invalid": func(v *view) (bool, int, int) {
		m := v.top.Get("forget_mode")
		if m.Kind() != jsontree.String {
			return whole(true)
		}
		_, ok := v.ms.Criteria().Replay.Modes[m.Str()]
		return whole(!ok)
	},
	"scope_dimensions_invalid": func(v *view) (bool, int, int) {
		d := v.top.Get("scope_dimensions")
		ds := d.Arr()
		if d.Kind() != jsontree.Array || len(ds) == 0 || len(ds) > v.ms.Criteria().Caps.ScopeDimensions {
			return whole(true)
		}
		seen := map[string]bool{}
		for i := range ds {
			if !nonEmptyString(&ds[i]) || seen[ds[i].Str()] {
				return whole(true)
			}
			seen[ds[i].Str()] = true
		}
		return whole(false)
	},
	"principals_invalid": func(v *view) (bool, int, int) {
		p := v.top.Get("principals")
		if !p.Present() {
			return whole(false)
		}
		if p.Kind() != jsontree.Array {
			return whole(true)
		}
		seen := map[string]bool{}
		ps := p.Arr()
		for i := range ps {
			e := &ps[i]
			if e.Kind() != jsontree.Object {
				return true, i, 0
			}
			id := e.Get("id")
			if !nonEmptyString(id) || seen[id.Str()] {
				return true, i, 0
			}
			seen[id.Str()] = true
			g := e.Get("grants")
			if !g.Present() {
				continue
			}
			if g.Kind() != jsontree.Array {
				return true, i, 0
			}
			gs := g.Arr()
			for j := range gs {
				if !v.scopeOK(&gs[j]) {
					return true, i, 0
				}
			}
		}
		return whole(false)
	},
	"events_required": func(v *view) (bool, int, int) { return whole(v.top.Get("events").Kind() != jsontree.Array) },
	"events_empty": func(v *view) (bool, int, int) {
		e := v.top.Get("events")
		return whole(e.Kind() == jsontree.Array && len(e.Arr()) == 0)
	},
	"event_count_cap": func(v *view) (bool, int, int) {
		n := len(v.events())
		return n > v.ms.Criteria().Caps.EventsPerAudit, -1, n
	},
	"event_not_object": func(v *view) (bool, int, int) {
		for i, e := range v.events() {
			if e.Kind() != jsontree.Object {
				return true, i, 0
			}
		}
		return false, -1, 0
	},
	"event_seq_invalid": eachEvent(func(_ *view, e *jsontree.Value, _ int) bool {
		_, ok := integer(e.Get("seq"), 1)
		return !ok
	}),
	"event_seq_duplicate": func(v *view) (bool, int, int) {
		seen := make(map[int64]bool, len(v.events()))
		for i := range v.events() {
			e := &v.events()[i]
			if e.Kind() != jsontree.Object {
				continue
			}
			n, ok := integer(e.Get("seq"), 1)
			if !ok {
				continue
			}
			if seen[n] {
				return true, i, 0
			}
			seen[n] = true
		}
		return false, -1, 0
	},
	"event_op_invalid": eachEvent(func(_ *view, e *jsontree.Value, _ int) bool {
		_, ok := rules.MutLogOps[opOf(e)]
		return !ok
	}),
	"event_key_invalid": eachEvent(func(v *view, e *jsontree.Value, _ int) bool {
		switch rules.MutLogOps[opOf(e)] {
		case "key":
			return !v.keyOK(e.Get("key"))
		case "session":
			return !v.scopeOK(e.Get("session"))
		}
		return false
	}),
	"event_principal_invalid": eachEvent(func(v *view, e *jsontree.Value, _ int) bool {
		names := [...]string{"principal", "to"}
		read := 1 // an array, not an append: this runs for every event
		if opOf(e) == "reassign" {
			read = 2
		}
		for _, n := range names[:read] {
			p := e.Get(n)
			if !p.Present() {
				continue
			}
			if !nonEmptyString(p) || (v.table != nil && !v.table[p.Str()]) {
				return true
			}
		}
		return false
	}),
	"event_version_invalid": eachEvent(func(v *view, e *jsontree.Value, _ int) bool {
		if !v.ms.Criteria().OpsEvents[opOf(e)].Version {
			return false
		}
		_, ok := integer(e.Get("version"), 0)
		return !ok
	}),
	"envelope_invalid": eachEvent(func(v *view, e *jsontree.Value, _ int) bool {
		env := e.Get("envelope")
		if !v.ms.Criteria().OpsEvents[opOf(e)].Envelope || !env.Present() {
			return false
		}
		if env.Kind() != jsontree.Array {
			return true
		}
		es := env.Arr()
		for i := range es {
			if es[i].Kind() != jsontree.String {
				return true
			}
		}
		return false
	}),
	"snapshot_invalid": func(v *view) (bool, int, int) {
		s := v.top.Get("snapshot")
		if !s.Present() {
			return whole(false)
		}
		if s.Kind() != jsontree.Array {
			return whole(true)
		}
		es := s.Arr()
		for i := range es {
			e := &es[i]
			if e.Kind() != jsontree.Object || !v.keyOK(e.Get("key")) {
				return true, i, 0
			}
			if _, ok := integer(e.Get("version"), 0); !ok {
				return true, i, 0
			}
		}
		return whole(false)
	},
	"snapshot_count_cap": func(v *view) (bool, int, int) {
		s := v.top.Get("snapshot")
		if s.Kind() != jsontree.Array {
			return false, -1, 0
		}
		n := len(s.Arr())
		return n > v.ms.Criteria().Caps.SnapshotEntries, -1, n
	},
}

// capRules answer with cap and observed instead of an index.
var capRules = map[string]func(c *rules.MutLogCaps) int{
	"event_count_cap":    func(c *rules.MutLogCaps) int { return c.EventsPerAudit },
	"snapshot_count_cap": func(c *rules.MutLogCaps) int { return c.SnapshotEntries },
}

// validate runs the refusal checks in the criteria's order; the first that holds answers.
func validate(ms *rules.MutLogSet, top *jsontree.Value) *Refusal {
	v := newView(ms, top)
	for _, code := range ms.Criteria().Refusals {
		if code == "export_required" && top.Kind() != jsontree.Object {
			return newRefusal(code)
		}
		if top.Kind() != jsontree.Object {
			continue
		}
		failed, index, observed := checks[code](v)
		if !failed {
			continue
		}
		r := newRefusal(code)
		if capOf, ok := capRules[code]; ok {
			caps := ms.Criteria().Caps
			r.Cap, r.Observed = intp(capOf(&caps)), intp(observed)
		} else if index >= 0 {
			r.Index = intp(index)
		}
		return r
	}
	return nil
}
