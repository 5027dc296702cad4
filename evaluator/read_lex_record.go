package evaluator

import (
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonlex"
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// lexVal is one member's value as read: its kind, a string's or a bool's value, an array's
// element count (n) with its string entries at ar.strs[at:at+strs] and its non-string, non-null
// entries (other), an object's member count, and where its text starts and ends.
type lexVal struct {
	kind        jsontree.Kind
	str         string
	b           bool
	n, at, strs int
	other       int
	from, to    int
}

// value reads the next value. Strings in an array go to the arena (a fact's Strs are cut from
// it); the elements of nested containers are skipped.
func (l *lexReader) value() lexVal {
	r := l.r
	k := lexKinds[r.Peek()]
	v := lexVal{kind: k, from: r.Offset()}
	switch k {
	case jsontree.String:
		v.str = r.Str()
	case jsontree.Bool:
		v.b = r.Bool()
	case jsontree.Number:
		r.Num()
	case jsontree.Null:
		r.Null()
	case jsontree.Array:
		v.at = len(l.ar.strs)
		r.Array()
		for r.More() {
			v.n++
			switch r.Peek() {
			case jsonlex.String:
				l.ar.strs = append(l.ar.strs, r.Str())
				v.strs++
			case jsonlex.Null:
				r.Null()
			default:
				r.Skip()
				v.other++
			}
		}
	case jsontree.Object:
		r.Object()
		for {
			if _, ok := r.Member(); !ok {
				break
			}
			r.Skip()
			v.n++
		}
	default:
		r.Skip() // fails the reader
	}
	v.to = r.Offset()
	return v
}

// fact adds v to the arena as a rules.Value (put's reduction).
func (l *lexReader) fact(v *lexVal) *rules.Value {
	at := v.at
	if v.kind == jsontree.String {
		at = len(l.ar.strs)
		l.ar.strs = append(l.ar.strs, v.str)
	}
	return l.ar.value(v.kind, v.str, v.b, v.n, at)
}

// record reads record i: its id, content key, facts, scope values and supersedes targets.
func (l *lexReader) record(i int) bool {
	x := l.x
	rec := &x.records[i]
	rec.facts = absentRecord
	for j := range l.slots {
		l.slots[j] = scopeVal{alt: l.slots[j].alt}
	}
	var got recordRead
	if !l.members(rec, l.slots, &got) {
		return false
	}
	id := got.id.str
	if l.ownIDs {
		id = x.keepString(id)
	}
	if _, dup := x.byID.add(id, int32(i)); dup {
		return false // record_id_duplicate
	}
	rec.id, rec.content = id, got.content.str
	rec.cid, _ = x.contents.add(rec.content, int32(x.contents.len()))
	l.supersedes(i, &got.supersedes)
	if x.letta {
		l.lettaScope(rec, &got.attached)
	} else {
		x.scopeFromKeys(rec, l.slots, l.global)
	}
	return true
}

// recordRead is what a record's members give besides its facts and scope values.
type recordRead struct {
	id, content, attached, supersedes, origin lexVal
}

// members reads the record object at the reader: its facts into rec, its scope keys' values into
// slots (two a key: the key's, its stand-in's) and the rest into got. It reports false for a
// record the tree path must read: one it would refuse, or may (a free-text scope value).
// The request path's read and the whole-store check's batch read both read records with it.
func (l *lexReader) members(rec *record, slots []scopeVal, got *recordRead) bool {
	r := l.r
	r.Object()
	for {
		name, fp, ok := r.MemberFingerprint()
		if !ok {
			break
		}
		role := l.roles.find(name, fp)
		if role == nil {
			r.Skip()
			continue
		}
		at, other := role.factOf(&rec.facts), role.other()
		var v lexVal
		switch {
		case role.meta && r.Peek() == jsonlex.Object:
			v = l.metadata(rec)
			if !other {
				continue
			}
		case at == nil && !other:
			r.Skip()
			continue
		case r.Peek() == jsonlex.String:
			// Most members are strings: read in place rather than through value's copy.
			v.kind, v.from = jsontree.String, r.Offset()
			v.str, v.to = r.Str(), r.Offset()
		default:
			v = l.value()
		}
		if r.Failed() {
			return false
		}
		if at != nil {
			*at = l.fact(&v)
			switch {
			case l.wholeBatch: // the batch's bytes are reused: no text of them is kept
			case role.template:
				rec.tmplText = r.Text(v.from, v.to)
			case role.baseTemplate:
				rec.baseText = r.Text(v.from, v.to)
			}
		}
		if role.keyed {
			for _, k := range l.keyed {
				if k.name != name {
					continue
				}
				slots[k.slot].kind, slots[k.slot].str = v.kind, v.str
				if k.free && v.kind == jsontree.String && readsAsFreeText(v.str, l.freeText) {
					return false // declared_scope_keys_invalid
				}
			}
		}
		switch {
		case role.id:
			got.id = v
		case role.content:
			got.content = v
		}
		switch {
		case role.attached:
			got.attached = v
		case role.supersedes:
			got.supersedes = v
		case role.origin:
			got.origin = v
		}
	}
	return !r.Failed() && got.id.kind == jsontree.String && got.content.kind == jsontree.String &&
		(l.form.AllowEmpty || got.content.str != "") // record_id_required, the form's content rule
}

// metadata reads a record's metadata object: its shared and sharing members are facts (M1 at
// metadata level). It returns the object as value reads it.
func (l *lexReader) metadata(rec *record) lexVal {
	r := l.r
	v := lexVal{kind: jsontree.Object, from: r.Offset()}
	r.Object()
	for {
		name, ok := r.Member()
		if !ok {
			break
		}
		v.n++
		if at := metaField(&rec.facts, name); at != nil {
			mv := l.value()
			*at = l.fact(&mv)
			continue
		}
		r.Skip()
	}
	v.to = r.Offset()
	return v
}

// supersedes keeps the string targets of record i's supersedes: a lone string or the strings
// of an array.
func (l *lexReader) supersedes(i int, v *lexVal) {
	b := l.x.b
	switch v.kind {
	case jsontree.String:
		b.supers = append(b.supers, superRef{rec: int32(i), id: v.str})
	case jsontree.Array:
		for _, s := range l.ar.strs[v.at : v.at+v.strs] {
			b.supers = append(b.supers, superRef{rec: int32(i), id: s})
		}
	}
}

// lettaScope resolves a Letta record's scope from its attached_to as read (lettaScope's reading).
func (l *lexReader) lettaScope(rec *record, at *lexVal) {
	x := l.x
	if at.kind != jsontree.Absent && at.kind != jsontree.Null && at.kind != jsontree.Array {
		x.cov.NonStringScopeValues++
	}
	set := x.b.sets[len(x.b.sets):]
	if at.kind == jsontree.Array {
		x.cov.NonStringScopeValues += at.other
		for _, s := range l.ar.strs[at.at : at.at+at.strs] {
			if s != "" {
				set = append(set, s)
			}
		}
	}
	x.lettaSet(rec, set, l.global)
}

// lexSupersedes marks the targets of every record's supersedes (supersedes' rule, R-14).
