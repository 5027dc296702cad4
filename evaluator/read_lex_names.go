package evaluator

import (
	"math/bits"
	"unsafe"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonstr"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// memberRole is what the read-once path does with a record member of one name: the fact it fills
// (factField's, as an offset in rules.Record) and which of the record's other readings it feeds.
// Every record member used to be compared with each of those names in turn; the roles are settled
// once an export's keys are known and each member is then looked up once, by the fingerprint
// the reader computed for its duplicate-name check.
type memberRole struct {
	name                                           string
	fp                                             uint64
	used                                           bool
	fact                                           uintptr // offset of the field in rules.Record + 1; 0: none
	keyed, id, content, attached, supersedes, meta bool
	origin, template, baseTemplate                 bool
}

// other reports whether the member is read for anything but its fact.
func (m *memberRole) other() bool {
	return m.keyed || m.id || m.content || m.attached || m.supersedes || m.origin
}

// factOf is the field of facts the member fills, nil when none.
func (m *memberRole) factOf(facts *rules.Record) **rules.Value {
	if m.fact == 0 {
		return nil
	}
	return (**rules.Value)(unsafe.Add(unsafe.Pointer(facts), m.fact-1))
}

// memberRoles is an open-addressing table of the names a record member can have a role under.
type memberRoles struct {
	slots []memberRole
	shift uint
}

// settleRoles builds the table for the export's keys, content field and family, from the same
// predicates record applied to each member.
func (l *lexReader) settleRoles() {
	t := &l.roles
	names := l.roleNames[:0]
	names = append(names, factNames...)
	for _, k := range l.keyed {
		names = append(names, k.name)
	}
	names = append(names, "id", l.contentField, "supersedes", "metadata", "origin_claim_id")
	if l.x.letta {
		names = append(names, "attached_to")
	}
	l.roleNames = names
	size := 16
	for size < 4*len(names) {
		size *= 2
	}
	if cap(t.slots) >= size {
		t.slots = t.slots[:size]
		clear(t.slots)
	} else {
		t.slots = make([]memberRole, size)
	}
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	var probe rules.Record
	for _, name := range names {
		m := memberRole{name: name, fp: jsonstr.Fingerprint(name), used: true}
		if at := factField(&probe, name); at != nil {
			m.fact = uintptr(unsafe.Pointer(at)) - uintptr(unsafe.Pointer(&probe)) + 1
		}
		for _, k := range l.keyed {
			m.keyed = m.keyed || k.name == name
		}
		m.id, m.content = name == "id", name == l.contentField
		m.attached, m.supersedes = l.x.letta && name == "attached_to", name == "supersedes"
		m.meta, m.origin = name == "metadata", name == "origin_claim_id"
		m.template, m.baseTemplate = name == "template_id", name == "base_template_id"
		t.put(m)
	}
}

// slot is where the search for fingerprint fp starts.
func (t *memberRoles) slot(fp uint64) int {
	return int((fp * 0x9e3779b97f4a7c15) >> t.shift)
}

func (t *memberRoles) put(m memberRole) {
	mask := len(t.slots) - 1
	for i := t.slot(m.fp); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			*s = m
			return
		}
		if s.fp == m.fp && s.name == m.name {
			return // a name listed twice (a key that is also a fact name): one role has it all
		}
	}
}

// find is the role of the member name whose fingerprint is fp, nil when it has none.
func (t *memberRoles) find(name string, fp uint64) *memberRole {
	mask := len(t.slots) - 1
	for i := t.slot(fp); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			return nil
		}
		if s.fp == fp && s.name == name {
			return s
		}
	}
}
