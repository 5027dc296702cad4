// Package jsontree is the strict JSON decoder both engines share (package evaluator for the v1
// rules, evaluator/mutlog for mutation logs): one pass over a request body straight into a compact
// value tree cut from pooled slabs. Both rule sets define the same strictness (R-3, FE-R-3), so
// one parser keeps them from drifting apart; what differs between the engines (the depth cap,
// whether the body may be aliased) is a parameter of Decode.
package jsontree

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// Kind is a JSON value's type. Absent is the value of a member an object does not have.
type Kind uint8

const (
	Absent Kind = iota
	Null
	String
	Bool
	Number
	Array
	Object
)

var kindNames = [...]string{"absent", "null", "string", "bool", "number", "array", "object"}

// String is the kind's name as the rules see it (rules.Value.Kind).
func (k Kind) String() string { return kindNames[k] }

// Value is one decoded JSON value. A max-size export decodes to about 8,500 members and up to
// 4,000 elements, kept in pooled slabs between exports, so it is 16 bytes instead of a string and
// two slice headers: one pointer and a count whose meaning the kind gives. A string (and a
// number, whose literal is kept: v1 reads it for value identity in template lineage, the
// mutation-log rules for integers, FE-R-9) points at its bytes in the body or in its unescaped
// copy; an array at its first element and an object at its first member, both in the slabs; a
// bool is true when n is 1. The pointer is nil when n is 0. Pointers rather than slab indices keep
// every reader free of the slabs: a *Value is read alone.
type Value struct {
	p    unsafe.Pointer
	n    uint32
	kind Kind
}

// Member is one member of an object.
type Member struct {
	Name string
	Val  Value
}

var absent = Value{}

// maxLen is the longest body Decode reads: every count and string length fits n.
const maxLen = math.MaxUint32

// textVal is a string or a number spelled s.
func textVal(k Kind, s string) Value {
	if s == "" {
		return Value{kind: k}
	}
	return Value{kind: k, p: unsafe.Pointer(unsafe.StringData(s)), n: uint32(len(s))}
}

// arrVal is an array of the elements es (which it aliases).
func arrVal(es []Value) Value {
	if len(es) == 0 {
		return Value{kind: Array}
	}
	return Value{kind: Array, p: unsafe.Pointer(&es[0]), n: uint32(len(es))}
}

// objVal is an object of the members ms (which it aliases).
func objVal(ms []Member) Value {
	if len(ms) == 0 {
		return Value{kind: Object}
	}
	return Value{kind: Object, p: unsafe.Pointer(&ms[0]), n: uint32(len(ms))}
}

func boolVal(b bool) Value {
	if b {
		return Value{kind: Bool, n: 1}
	}
	return Value{kind: Bool}
}

// Kind is the value's type.
func (v *Value) Kind() Kind { return v.kind }

// Str is a string's value or a number's literal, "" for every other kind.
func (v *Value) Str() string {
	if (v.kind != String && v.kind != Number) || v.n == 0 {
		return ""
	}
	return unsafe.String((*byte)(v.p), v.n)
}

// Arr is an array's elements, nil for every other kind. The slice is in the slabs: it must not
// outlive them.
func (v *Value) Arr() []Value {
	if v.kind != Array || v.n == 0 {
		return nil
	}
	return unsafe.Slice((*Value)(v.p), v.n)
}

// Obj is an object's members, nil for every other kind. The slice is in the slabs: it must not
// outlive them.
func (v *Value) Obj() []Member {
	if v.kind != Object || v.n == 0 {
		return nil
	}
	return unsafe.Slice((*Member)(v.p), v.n)
}

// Bool is a bool's value, false for every other kind.
func (v *Value) Bool() bool { return v.kind == Bool && v.n != 0 }

// Get returns the member's value, or an absent value. Member names are unique (Decode refuses a
// duplicate), so the first match is the only one.
func (v *Value) Get(name string) *Value {
	obj := v.Obj()
	for i := range obj {
		if obj[i].Name == name {
			return &obj[i].Val
		}
	}
	return &absent
}

// Present is true when the value exists and is not null: both rule sets read null as absent
// (R-4, FE-R-4).
func (v *Value) Present() bool { return v.kind != Absent && v.kind != Null }

// Identity is a canonical text of a value, equal for equal JSON values (numbers by value, object
// members in any order).
func (v *Value) Identity() string {
	var b strings.Builder
	v.writeIdentity(&b)
	return b.String()
}

func (v *Value) writeIdentity(b *strings.Builder) {
	switch v.kind {
	case String:
		b.WriteString(strconv.Quote(v.Str()))
	case Number:
		if f, err := strconv.ParseFloat(v.Str(), 64); err == nil {
			b.WriteString("n" + strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			b.WriteString("n" + v.Str())
		}
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case Array:
		b.WriteByte('[')
		arr := v.Arr()
		for i := range arr {
			arr[i].writeIdentity(b)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case Object:
		ms := append([]Member(nil), v.Obj()...)
		sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
		b.WriteByte('{')
		for i := range ms {
			b.WriteString(strconv.Quote(ms[i].Name) + ":")
			ms[i].Val.writeIdentity(b)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		b.WriteString(kindNames[v.kind])
	}
}
