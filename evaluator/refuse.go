package evaluator

import (
	"strings"
	"sync"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/refusal"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// Refusal is a free refusal of a malformed or over-cap submission: a published rule id and numbers,
// never any part of the export.
type Refusal struct {
	refusal.Head
	// RecordIndex is the 0-based index of the first failing record, for record-level rules.
	RecordIndex *int `json:"record_index,omitempty"`
	// Caps are given for the cap rules.
	refusal.Caps
}

// BodyBytesCap is the rule id of a body over the byte cap, checked before parsing.
const BodyBytesCap = refusal.BodyBytesCap

func newRefusal(rule string) *Refusal { return &Refusal{Head: refusal.NewHead(rule)} }

func intp(n int) *int { return &n }

// CheckBodySize refuses a body over the cap before anything reads it. A server calls it
// with the number of bytes it read (at most cap+1) or the declared Content-Length.
func CheckBodySize(ps *rules.ProgramSet, n int) *Refusal {
	if caps, over := refusal.OverCap(ps.Criteria().Caps.BodyBytes, n); over {
		return &Refusal{Head: refusal.NewHead(BodyBytesCap), Caps: caps}
	}
	return nil
}

// check is one refusal rule's mechanics: it reports whether the export fails the rule, and the
// index of the first failing record for record-level rules (-1 otherwise).
type check func(ps *rules.ProgramSet, top *jsontree.Value) (failed bool, index int)

// checks implements every refusal code; criteria.yaml says in which order they run. Each check
// assumes nothing about the ones before it, so any order the criteria choose is sound.
var checks = map[string]check{
	"export_required": func(_ *rules.ProgramSet, top *jsontree.Value) (bool, int) { return top.Kind() != jsontree.Object, -1 },
	"family_required": func(_ *rules.ProgramSet, top *jsontree.Value) (bool, int) { return !top.Get("family").Present(), -1 },
	"family_unknown": func(ps *rules.ProgramSet, top *jsontree.Value) (bool, int) {
		f := top.Get("family")
		if !f.Present() {
			return false, -1
		}
		_, ok := ps.Criteria().Families[f.Str()]
		return f.Kind() != jsontree.String || !ok, -1
	},
	"form_invalid": func(ps *rules.ProgramSet, top *jsontree.Value) (bool, int) {
		f := top.Get("form")
		_, ok := ps.Criteria().Forms[f.Str()]
		return f.Kind() != jsontree.String || !ok, -1
	},
	"records_required": func(_ *rules.ProgramSet, top *jsontree.Value) (bool, int) {
		return top.Get("records").Kind() != jsontree.Array, -1
	},
	"records_empty": func(_ *rules.ProgramSet, top *jsontree.Value) (bool, int) {
		r := top.Get("records")
		return r.Kind() == jsontree.Array && len(r.Arr()) == 0, -1
	},
	"record_count_cap": func(ps *rules.ProgramSet, top *jsontree.Value) (bool, int) {
		return len(top.Get("records").Arr()) > ps.Criteria().Caps.RecordsPerAudit, -1
	},
	"record_not_object": eachRecord(func(_ *rules.ProgramSet, _ *jsontree.Value, r *jsontree.Value, _ map[string]bool) bool {
		return r.Kind() != jsontree.Object
	}),
	"record_id_required": eachRecord(func(_ *rules.ProgramSet, _ *jsontree.Value, r *jsontree.Value, _ map[string]bool) bool {
		return r.Kind() == jsontree.Object && r.Get("id").Kind() != jsontree.String
	}),
	"record_id_duplicate": eachRecord(func(_ *rules.ProgramSet, _ *jsontree.Value, r *jsontree.Value, seen map[string]bool) bool {
		id := r.Get("id")
		if r.Kind() != jsontree.Object || id.Kind() != jsontree.String {
			return false
		}
		dup := seen[id.Str()]
		seen[id.Str()] = true
		return dup
	}),
	"content_text_required": contentCheck("content_text_required"),
	"content_hash_required": contentCheck("content_hash_required"),
	"manifest_invalid": func(_ *rules.ProgramSet, top *jsontree.Value) (bool, int) {
		m := top.Get("manifest")
		return m.Present() && m.Kind() != jsontree.Object, -1
	},
	"declared_scope_keys_invalid": func(ps *rules.ProgramSet, top *jsontree.Value) (bool, int) {
		m := top.Get("manifest")
		if m.Kind() != jsontree.Object {
			return false, -1
		}
		k := m.Get("declared_scope_keys")
		if !k.Present() {
			return false, -1
		}
		if k.Kind() != jsontree.Array {
			return true, -1
		}
		for _, e := range k.Arr() {
			if e.Kind() != jsontree.String {
				return true, -1
			}
			// Names the criteria keep out of every scope, such as the content fields.
			for _, n := range ps.Criteria().NeverScopeKeys {
				if e.Str() == n {
					return true, -1
				}
			}
		}
		return freeTextScopeValue(ps, top, k.Arr())
	},
	"variant_unknown": func(ps *rules.ProgramSet, top *jsontree.Value) (bool, int) {
		v := top.Get("variant")
		if !v.Present() {
			return false, -1
		}
		fam, ok := ps.Criteria().Families[top.Get("family").Str()]
		if v.Kind() != jsontree.String {
			return true, -1
		}
		if !ok {
			return false, -1 // family_unknown decides
		}
		for _, x := range fam.Variants {
			if x == v.Str() {
				return false, -1
			}
		}
		return true, -1
	},
}

// seenPool holds the maps the record checks remember ids in (a max-size export fills one with a
// thousand ids on every request).
var seenPool = sync.Pool{New: func() any { return map[string]bool{} }}

// eachRecord lifts a per-record test into a rule that scans every record in array order.
func eachRecord(fails func(ps *rules.ProgramSet, top, rec *jsontree.Value, seen map[string]bool) bool) check {
	return func(ps *rules.ProgramSet, top *jsontree.Value) (bool, int) {
		recs := top.Get("records")
		seen := seenPool.Get().(map[string]bool)
		defer func() {
			clear(seen)
			seenPool.Put(seen)
		}()
		arr := recs.Arr()
		for i := range arr {
			if fails(ps, top, &arr[i], seen) {
				return true, i
			}
		}
		return false, -1
	}
}

// contentCheck is the content-field rule of the form whose refusal is code.
func contentCheck(code string) check {
	return eachRecord(func(ps *rules.ProgramSet, top, r *jsontree.Value, _ map[string]bool) bool {
		form, ok := ps.Criteria().Forms[top.Get("form").Str()]
		if !ok || form.Refusal != code || r.Kind() != jsontree.Object {
			return false
		}
		c := r.Get(form.ContentField)
		return c.Kind() != jsontree.String || (!form.AllowEmpty && c.Str() == "")
	})
}

// recordScan is the first failing record of each record-level rule, -1 when none fails,
// found in one pass over the records (scanRecords) instead of one pass per rule.
type recordScan map[string]int

// scanRecords runs every record-level rule (record_not_object, record_id_required,
// record_id_duplicate, and the form's content rule) over the records in array order, reading each
// record's members once. It answers exactly what the rules' own checks answer one by one: each
// rule's first failing record, in array order.
func scanRecords(ps *rules.ProgramSet, top *jsontree.Value, into recordScan) {
	notObject, idRequired, idDuplicate, content := -1, -1, -1, -1
	form, formOK := ps.Criteria().Forms[top.Get("form").Str()]
	seen := seenPool.Get().(map[string]bool)
	defer func() {
		clear(seen)
		seenPool.Put(seen)
	}()
	arr := top.Get("records").Arr()
	for i := range arr {
		r := &arr[i]
		if r.Kind() != jsontree.Object {
			if notObject < 0 {
				notObject = i
			}
			continue
		}
		var id, c *jsontree.Value = r.Get("id"), nil
		if formOK {
			c = r.Get(form.ContentField)
		}
		switch {
		case id.Kind() != jsontree.String:
			if idRequired < 0 {
				idRequired = i
			}
		case idDuplicate < 0:
			if seen[id.Str()] {
				idDuplicate = i
			}
			seen[id.Str()] = true
		}
		if content < 0 && c != nil && (c.Kind() != jsontree.String || (!form.AllowEmpty && c.Str() == "")) {
			content = i
		}
	}
	into["record_not_object"], into["record_id_required"], into["record_id_duplicate"] = notObject, idRequired, idDuplicate
	into["content_text_required"], into["content_hash_required"] = -1, -1
	if formOK {
		if _, ok := into[form.Refusal]; ok {
			into[form.Refusal] = content
		}
	}
}

// validate runs the refusal rules in the criteria's order and returns the first that fails.
func validate(ps *rules.ProgramSet, top *jsontree.Value) *Refusal {
	var scan recordScan
	for _, code := range ps.Criteria().Refusals {
		var failed bool
		idx := -1
		switch code {
		case "record_not_object", "record_id_required", "record_id_duplicate", "content_text_required", "content_hash_required":
			if scan == nil {
				scan = make(recordScan, 5)
				scanRecords(ps, top, scan)
			}
			idx = scan[code]
			failed = idx >= 0
		default:
			failed, idx = checks[code](ps, top)
		}
		if !failed {
			continue
		}
		r := newRefusal(code)
		if idx >= 0 {
			r.RecordIndex = intp(idx)
		}
		if code == "record_count_cap" {
			r.Cap, r.Observed = intp(ps.Criteria().Caps.RecordsPerAudit), intp(len(top.Get("records").Arr()))
		}
		return r
	}
	return nil
}

// freeTextScopeValue finds the first record (array order) whose value under a declared scope key
// reads as free text by the criteria's limits. Only keys the manifest declares are read, and
// only for a family whose scope comes from keys: the family defaults are never scanned.
func freeTextScopeValue(ps *rules.ProgramSet, top *jsontree.Value, keys []jsontree.Value) (bool, int) {
	lim := ps.Criteria().FreeTextScopeValue
	fam, ok := ps.Criteria().Families[top.Get("family").Str()]
	if lim == nil || !ok || fam.Scope != rules.ScopeFromKeys || len(keys) == 0 {
		return false, -1
	}
	for i, r := range top.Get("records").Arr() {
		if r.Kind() != jsontree.Object {
			continue
		}
		for _, k := range keys {
			if v := r.Get(k.Str()); v.Kind() == jsontree.String && readsAsFreeText(v.Str(), lim) {
				return true, i
			}
		}
	}
	return false, -1
}

func readsAsFreeText(s string, lim *rules.FreeTextLimits) bool {
	if len(s) > lim.MaxBytes {
		return true
	}
	return len(s) > lim.MaxBytesWithWhitespace && strings.ContainsAny(s, " \t\n\r")
}
