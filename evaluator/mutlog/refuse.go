package mutlog

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// Refusal is a free refusal of a malformed or over-cap log: a published rule id and numbers,
// never any part of the export (FE-R-1, FE-R-2).
type Refusal struct {
	Kind string `json:"kind"`
	Rule string `json:"rule"`
	// Index is the 0-based index of the first failing item, for item-level rules.
	Index *int `json:"index,omitempty"`
	// Cap and Observed are given for the cap rules.
	Cap      *int `json:"cap,omitempty"`
	Observed *int `json:"observed,omitempty"`
}

// BodyBytesCap is the rule id of a body over the byte cap, checked before parsing (FE-R-2).
const BodyBytesCap = "body_bytes_cap"

// HTTPStatus is 413 for the body cap and 400 for every other refusal.
func (r *Refusal) HTTPStatus() int {
	if r.Rule == BodyBytesCap {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// Error makes a refusal usable as an error; it holds only the rule id.
func (r *Refusal) Error() string { return "refused: " + r.Rule }

func refusal(rule string) *Refusal { return &Refusal{Kind: "refusal", Rule: rule} }

func intp(n int) *int { return &n }

// CheckBodySize refuses a body over the cap before anything reads it (FE-R-2).
func CheckBodySize(ms *rules.MutLogSet, n int) *Refusal {
	if limit := ms.Criteria().Caps.BodyBytes; n > limit {
		r := refusal(BodyBytesCap)
		r.Cap, r.Observed = intp(limit), intp(n)
		return r
	}
	return nil
}

// maxInt is the largest sequence or version (FE-R-9).
const maxInt = 9007199254740991

var integerText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// integer reads an integer under FE-R-9: a number written without fraction or exponent, within
// [lo, maxInt].
func integer(v *jval, lo int64) (int64, bool) {
	if v.kind != kNumber || !integerText.MatchString(v.str) {
		return 0, false
	}
	n, err := strconv.ParseInt(v.str, 10, 64)
	if err != nil || n < lo || n > maxInt {
		return 0, false
	}
	return n, true
}

func nonEmptyString(v *jval) bool { return v.kind == kString && v.str != "" }

// view is what the checks read of the export. Each check assumes nothing about the ones before
// it, so any order the criteria choose is sound.
type view struct {
	ms   *rules.MutLogSet
	top  *jval
	dims map[string]bool // string entries of scope_dimensions, whatever their validity
	// table holds the principal ids when the table is declared (a non-empty array).
	table map[string]bool
}

func newView(ms *rules.MutLogSet, top *jval) *view {
	v := &view{ms: ms, top: top, dims: map[string]bool{}}
	if d := top.get("scope_dimensions"); d.kind == kArray {
		for _, e := range d.arr {
			if e.kind == kString {
				v.dims[e.str] = true
			}
		}
	}
	if p := top.get("principals"); p.kind == kArray && len(p.arr) > 0 {
		v.table = map[string]bool{}
		for i := range p.arr {
			if id := p.arr[i].get("id"); p.arr[i].kind == kObject && id.kind == kString {
				v.table[id.str] = true
			}
		}
	}
	return v
}

// scopeOK checks a scope object (key.scope, session, a grant): every member names a declared
// dimension and its value is a string or null.
func (v *view) scopeOK(s *jval) bool {
	if s.kind != kObject {
		return false
	}
	for i := range s.obj {
		m := &s.obj[i]
		if !v.dims[m.name] || (m.val.present() && m.val.kind != kString) {
			return false
		}
	}
	return true
}

// keyOK checks a key object (FE-R-11).
func (v *view) keyOK(k *jval) bool {
	return k.kind == kObject && k.get("name").kind == kString && v.scopeOK(k.get("scope"))
}

func (v *view) events() []jval {
	if e := v.top.get("events"); e.kind == kArray {
		return e.arr
	}
	return nil
}

// check is one refusal rule: whether it holds, and the item index (-1: none) or the observed
// count of a cap rule.
type check func(v *view) (failed bool, index int, observed int)

func whole(b bool) (bool, int, int) { return b, -1, 0 }

// eachEvent fails on the first event object for which fails holds.
func eachEvent(fails func(v *view, e *jval, i int) bool) check {
	return func(v *view) (bool, int, int) {
		evs := v.events()
		for i := range evs {
			if evs[i].kind == kObject && fails(v, &evs[i], i) {
				return true, i, 0
			}
		}
		return false, -1, 0
	}
}

func opOf(e *jval) string {
	if op := e.get("op"); op.kind == kString {
		return op.str
	}
	return ""
}

// checks implements every refusal code; the criteria's `refusals` order them.
var checks = map[string]check{
	"export_required": func(v *view) (bool, int, int) { return whole(v.top.kind != kObject) },
	"format_invalid": func(v *view) (bool, int, int) {
		f := v.top.get("format")
		return whole(f.kind != kString || f.str != v.ms.Criteria().Format)
	},
	"forget_mode_invalid": func(v *view) (bool, int, int) {
		m := v.top.get("forget_mode")
		if m.kind != kString {
			return whole(true)
		}
		_, ok := v.ms.Criteria().Replay.Modes[m.str]
		return whole(!ok)
	},
	"scope_dimensions_invalid": func(v *view) (bool, int, int) {
		d := v.top.get("scope_dimensions")
		if d.kind != kArray || len(d.arr) == 0 || len(d.arr) > v.ms.Criteria().Caps.ScopeDimensions {
			return whole(true)
		}
		seen := map[string]bool{}
		for i := range d.arr {
			if !nonEmptyString(&d.arr[i]) || seen[d.arr[i].str] {
				return whole(true)
			}
			seen[d.arr[i].str] = true
		}
		return whole(false)
	},
	"principals_invalid": func(v *view) (bool, int, int) {
		p := v.top.get("principals")
		if !p.present() {
			return whole(false)
		}
		if p.kind != kArray {
			return whole(true)
		}
		seen := map[string]bool{}
		for i := range p.arr {
			e := &p.arr[i]
			if e.kind != kObject {
				return true, i, 0
			}
			id := e.get("id")
			if !nonEmptyString(id) || seen[id.str] {
				return true, i, 0
			}
			seen[id.str] = true
			g := e.get("grants")
			if !g.present() {
				continue
			}
			if g.kind != kArray {
				return true, i, 0
			}
			for j := range g.arr {
				if !v.scopeOK(&g.arr[j]) {
					return true, i, 0
				}
			}
		}
		return whole(false)
	},
	"events_required": func(v *view) (bool, int, int) { return whole(v.top.get("events").kind != kArray) },
	"events_empty": func(v *view) (bool, int, int) {
		e := v.top.get("events")
		return whole(e.kind == kArray && len(e.arr) == 0)
	},
	"event_count_cap": func(v *view) (bool, int, int) {
		n := len(v.events())
		return n > v.ms.Criteria().Caps.EventsPerAudit, -1, n
	},
	"event_not_object": func(v *view) (bool, int, int) {
		for i, e := range v.events() {
			if e.kind != kObject {
				return true, i, 0
			}
		}
		return false, -1, 0
	},
	"event_seq_invalid": eachEvent(func(_ *view, e *jval, _ int) bool {
		_, ok := integer(e.get("seq"), 1)
		return !ok
	}),
	"event_seq_duplicate": func(v *view) (bool, int, int) {
		seen := map[int64]bool{}
		for i := range v.events() {
			e := &v.events()[i]
			if e.kind != kObject {
				continue
			}
			n, ok := integer(e.get("seq"), 1)
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
	"event_op_invalid": eachEvent(func(_ *view, e *jval, _ int) bool {
		_, ok := rules.MutLogOps[opOf(e)]
		return !ok
	}),
	"event_key_invalid": eachEvent(func(v *view, e *jval, _ int) bool {
		switch rules.MutLogOps[opOf(e)] {
		case "key":
			return !v.keyOK(e.get("key"))
		case "session":
			return !v.scopeOK(e.get("session"))
		}
		return false
	}),
	"event_principal_invalid": eachEvent(func(v *view, e *jval, _ int) bool {
		names := []string{"principal"}
		if opOf(e) == "reassign" {
			names = append(names, "to")
		}
		for _, n := range names {
			p := e.get(n)
			if !p.present() {
				continue
			}
			if !nonEmptyString(p) || (v.table != nil && !v.table[p.str]) {
				return true
			}
		}
		return false
	}),
	"event_version_invalid": eachEvent(func(v *view, e *jval, _ int) bool {
		if !v.ms.Criteria().OpsEvents[opOf(e)].Version {
			return false
		}
		_, ok := integer(e.get("version"), 0)
		return !ok
	}),
	"envelope_invalid": eachEvent(func(v *view, e *jval, _ int) bool {
		env := e.get("envelope")
		if !v.ms.Criteria().OpsEvents[opOf(e)].Envelope || !env.present() {
			return false
		}
		if env.kind != kArray {
			return true
		}
		for i := range env.arr {
			if env.arr[i].kind != kString {
				return true
			}
		}
		return false
	}),
	"snapshot_invalid": func(v *view) (bool, int, int) {
		s := v.top.get("snapshot")
		if !s.present() {
			return whole(false)
		}
		if s.kind != kArray {
			return whole(true)
		}
		for i := range s.arr {
			e := &s.arr[i]
			if e.kind != kObject || !v.keyOK(e.get("key")) {
				return true, i, 0
			}
			if _, ok := integer(e.get("version"), 0); !ok {
				return true, i, 0
			}
		}
		return whole(false)
	},
	"snapshot_count_cap": func(v *view) (bool, int, int) {
		s := v.top.get("snapshot")
		if s.kind != kArray {
			return false, -1, 0
		}
		return len(s.arr) > v.ms.Criteria().Caps.SnapshotEntries, -1, len(s.arr)
	},
}

// capRules answer with cap and observed instead of an index.
var capRules = map[string]func(c *rules.MutLogCaps) int{
	"event_count_cap":    func(c *rules.MutLogCaps) int { return c.EventsPerAudit },
	"snapshot_count_cap": func(c *rules.MutLogCaps) int { return c.SnapshotEntries },
}

// validate runs the refusal checks in the criteria's order; the first that holds answers.
func validate(ms *rules.MutLogSet, top *jval) *Refusal {
	v := newView(ms, top)
	for _, code := range ms.Criteria().Refusals {
		if code == "export_required" && top.kind != kObject {
			return refusal(code)
		}
		if top.kind != kObject {
			continue
		}
		failed, index, observed := checks[code](v)
		if !failed {
			continue
		}
		r := refusal(code)
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
