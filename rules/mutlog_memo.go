package rules

import (
	"encoding/binary"
	"reflect"
	"slices"
	"unsafe"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// Memoization of the per-event decisions within one log, as memo.go does for the per-record
// programs of v1. A subject's predicates are a pure function of the event and forget fields they
// select (and of one another), so two events that agree on exactly those fields get the same
// values, and the second evaluation is a map lookup. The fields are read off the checked ASTs at
// load; a subject that uses `event` or `forget` other than to select a field is not memoized.
// When every string is only compared for equality (equalityOnly), strings are keyed by their
// equality pattern, string literals verbatim: a reinsert by another principal under another
// forget with the same pattern of names shares one evaluation.

// eventField is one LogEvent or LogForget field a subject reads.
type eventField struct {
	forget bool
	off    uintptr
	kind   reflect.Kind
	// set: a list of strings used only as the right side of `in`. Its order, its repeats and any
	// element equal to no other input string and no literal cannot change a result.
	set bool
}

// eventUse is what one subject's predicates read.
type eventUse struct {
	ok       bool // memoizable
	fields   []eventField
	canon    bool
	literals map[string]bool
	// sets: canon, and every list is a set (eventField.set): a list is then keyed by which of the
	// other strings it holds, not element by element.
	sets bool
}

var (
	logEventStruct  = reflect.TypeOf(LogEvent{})
	logForgetStruct = reflect.TypeOf(LogForget{})
)

func structField(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("cel") == tag {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// eventUseOf reads the inputs of one subject's compiled predicates.
func eventUseOf(subject string, progs []*Program) eventUse {
	u := eventUse{ok: true, canon: true, literals: map[string]bool{}}
	seen := map[[2]uintptr]bool{}
	for _, p := range progs {
		if p == nil || p.checked == nil {
			return eventUse{}
		}
		idents, selects := 0, 0
		for _, e := range celast.MatchDescendants(celast.NavigateAST(p.checked.NativeRep()), celast.AllMatcher()) {
			switch e.Kind() {
			case celast.SelectKind:
				sel := e.AsSelect()
				op := sel.Operand()
				if op.Kind() != celast.IdentKind || (op.AsIdent() != "event" && op.AsIdent() != "forget") {
					break
				}
				selects++
				forget := op.AsIdent() == "forget"
				t := logEventStruct
				if forget {
					t = logForgetStruct
				}
				f, ok := structField(t, sel.FieldName())
				if !ok || sel.IsTestOnly() {
					return eventUse{}
				}
				k := [2]uintptr{f.Offset, uintptr(boolByte(forget))}
				if !seen[k] {
					seen[k] = true
					u.fields = append(u.fields, eventField{forget: forget, off: f.Offset, kind: f.Type.Kind(), set: true})
				}
				if f.Type.Kind() == reflect.Slice && !inRight(e) {
					for i := range u.fields {
						if u.fields[i].off == f.Offset && u.fields[i].forget == forget {
							u.fields[i].set = false
						}
					}
				}
			case celast.IdentKind:
				if n := e.AsIdent(); n == "event" || n == "forget" {
					idents++
				}
			case celast.LiteralKind:
				if s, ok := e.AsLiteral().(types.String); ok {
					u.literals[string(s)] = true
				}
			}
			if !equalityOnly(e) {
				u.canon = false
			}
		}
		if idents != selects {
			return eventUse{}
		}
	}
	u.sets = u.canon
	for _, f := range u.fields {
		switch f.kind {
		case reflect.Bool, reflect.Int64, reflect.String:
		case reflect.Slice:
			u.sets = u.sets && f.set
		default:
			return eventUse{}
		}
	}
	return u
}

// inRight reports whether e is the right side of `in`.
func inRight(e celast.NavigableExpr) bool {
	parent, ok := e.Parent()
	if !ok || parent.Kind() != celast.CallKind || parent.AsCall().FunctionName() != "@in" {
		return false
	}
	args := parent.AsCall().Args()
	return len(args) == 2 && args[1].ID() == e.ID()
}

// key writes the subject's inputs of the activation's event into a.buf.
func (u *eventUse) key(subject string, a *EventActivation) []byte {
	// The subject first, ended by a byte no subject name has: one memo serves every subject.
	a.buf, a.seen = append(append(a.buf[:0], subject...), 0), a.seen[:0]
	for _, f := range u.fields {
		base := unsafe.Pointer(a.Event)
		if f.forget {
			base = unsafe.Pointer(a.Forget)
		}
		if base == nil {
			a.buf = append(a.buf, 'N')
			continue
		}
		at := unsafe.Add(base, f.off)
		switch f.kind {
		case reflect.Bool:
			a.buf = append(a.buf, boolByte(*(*bool)(at)))
		case reflect.Int64:
			a.buf = binary.AppendVarint(a.buf, *(*int64)(at))
		case reflect.String:
			u.str(a, *(*string)(at))
		case reflect.Slice:
			if u.sets {
				continue // after every other string, below
			}
			ss := *(*[]string)(at)
			a.buf = append(a.buf, boolByte(ss != nil))
			a.buf = binary.AppendUvarint(a.buf, uint64(len(ss)))
			for _, s := range ss {
				u.str(a, s)
			}
		}
	}
	if u.sets {
		u.setKeys(a)
	}
	return a.buf
}

// setKeys writes each list as the set of the other strings (by their order of first occurrence)
// and of the literals it holds: `x in list` is true exactly when x is one of them.
func (u *eventUse) setKeys(a *EventActivation) {
	others := len(a.seen)
	for _, f := range u.fields {
		if f.kind != reflect.Slice {
			continue
		}
		base := unsafe.Pointer(a.Event)
		if f.forget {
			base = unsafe.Pointer(a.Forget)
		}
		if base == nil {
			a.buf = append(a.buf, 'N')
			continue
		}
		a.buf = append(a.buf, 'S')
		for i := 0; i < others; i++ {
			if slices.Contains(*(*[]string)(unsafe.Add(base, f.off)), a.seen[i]) {
				a.buf = binary.AppendUvarint(a.buf, uint64(i))
			}
		}
		a.buf = append(a.buf, '|')
		for _, s := range *(*[]string)(unsafe.Add(base, f.off)) {
			if u.literals[s] {
				a.buf = appendString(append(a.buf, 'L'), s)
			}
		}
		a.buf = append(a.buf, '|')
	}
}

// str writes one string of the key: verbatim, or by the order of its first occurrence (canon).
func (u *eventUse) str(a *EventActivation, s string) {
	if !u.canon || u.literals[s] {
		a.buf = appendString(append(a.buf, 'L'), s)
		return
	}
	i := 0
	for i < len(a.seen) && a.seen[i] != s {
		i++
	}
	if i == len(a.seen) {
		a.seen = append(a.seen, s)
	}
	a.buf = binary.AppendUvarint(append(a.buf, 'O'), uint64(i))
}

// ReadsKeys reports whether a subject's predicates may read what a key's identity gives an event
// (raw_key, grants_cover): a pre-check whose forget decisions read neither need not resolve keys.
func (ms *MutLogSet) ReadsKeys(subject string) bool {
	u := ms.uses[subject]
	if u == nil || !u.ok {
		return true
	}
	for _, tag := range []string{"raw_key", "grants_cover"} {
		ev, _ := structField(logEventStruct, tag)
		fg, fgOK := structField(logForgetStruct, tag)
		for _, f := range u.fields {
			if (!f.forget && f.off == ev.Offset) || (f.forget && fgOK && f.off == fg.Offset) {
				return true
			}
		}
	}
	return false
}
