// Package evaluator turns (a compiled criteria revision, one export) into a pre-check result, an
// audit report or a refusal. It is pure: no I/O, no clock (the caller passes the time), no global
// state, and safe for concurrent use. Every decision is made by a program of the rules.ProgramSet;
// this package keeps the mechanics: decoding, refusals in the published order, scope tuples,
// grouping by content key, the M4 pointer walk and arithmetic.
package evaluator

import (
	"bytes"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// kind is a JSON value's type.
type kind uint8

const (
	kAbsent kind = iota
	kNull
	kString
	kBool
	kNumber
	kArray
	kObject
)

var kindNames = [...]string{"absent", "null", "string", "bool", "number", "array", "object"}

// jval is one decoded JSON value. A number keeps its literal in str for value identity (template
// lineage); no rule reads a number's value.
type jval struct {
	kind kind
	str  string
	b    bool
	arr  []jval
	obj  []member
}

type member struct {
	name string
	val  jval
}

var absent = jval{}

// get returns the member's value, or an absent value. Member names are unique.
func (v *jval) get(name string) *jval {
	for i := range v.obj {
		if v.obj[i].name == name {
			return &v.obj[i].val
		}
	}
	return &absent
}

// present is true when the value exists and is not null.
func (v *jval) present() bool { return v.kind != kAbsent && v.kind != kNull }

// errNotExport is the single, static outcome of any body that is not strict JSON. The
// decoder's own messages quote the input, so they are never surfaced.
var errNotExport = errors.New("export_required")

// decode parses a request body under R-3: UTF-8 JSON text without a byte-order mark, no duplicate
// member names, no escape decoding to a lone surrogate, nesting at most maxDepth levels (the
// top-level value is level 1).
func decode(body []byte, maxDepth int) (jval, error) {
	if !utf8.Valid(body) || bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
		return jval{}, errNotExport
	}
	d := jsontext.NewDecoder(bytes.NewReader(body))
	v, err := readValue(d, 1, maxDepth)
	if err != nil {
		return jval{}, errNotExport
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return jval{}, errNotExport
	}
	return v, nil
}

// readValue reads one value whose containers, if it is one, sit at the given level. Depth counts
// arrays and objects only: a scalar adds no level.
func readValue(d *jsontext.Decoder, level, maxDepth int) (jval, error) {
	t, err := d.ReadToken()
	if err != nil {
		return jval{}, errNotExport
	}
	if k := t.Kind(); (k == '[' || k == '{') && level > maxDepth {
		return jval{}, errNotExport
	}
	switch t.Kind() {
	case 'n':
		return jval{kind: kNull}, nil
	case 't':
		return jval{kind: kBool, b: true}, nil
	case 'f':
		return jval{kind: kBool}, nil
	case '"':
		return jval{kind: kString, str: t.String()}, nil
	case '0':
		return jval{kind: kNumber, str: t.String()}, nil // the literal, for value identity only
	case '[':
		v := jval{kind: kArray}
		for d.PeekKind() != ']' {
			e, err := readValue(d, level+1, maxDepth)
			if err != nil {
				return jval{}, err
			}
			v.arr = append(v.arr, e)
		}
		if _, err := d.ReadToken(); err != nil {
			return jval{}, errNotExport
		}
		return v, nil
	case '{':
		v := jval{kind: kObject}
		for d.PeekKind() != '}' {
			nt, err := d.ReadToken()
			if err != nil || nt.Kind() != '"' {
				return jval{}, errNotExport
			}
			name := nt.String() // the token is void after the next read
			e, err := readValue(d, level+1, maxDepth)
			if err != nil {
				return jval{}, err
			}
			v.obj = append(v.obj, member{name: name, val: e})
		}
		if _, err := d.ReadToken(); err != nil {
			return jval{}, errNotExport
		}
		return v, nil
	}
	return jval{}, errNotExport
}

// identity is a canonical text of a value, equal for equal JSON values (numbers by value, object
// members in any order).
func (v *jval) identity() string {
	var b strings.Builder
	v.writeIdentity(&b)
	return b.String()
}

func (v *jval) writeIdentity(b *strings.Builder) {
	switch v.kind {
	case kString:
		b.WriteString(strconv.Quote(v.str))
	case kNumber:
		if f, err := strconv.ParseFloat(v.str, 64); err == nil {
			b.WriteString("n" + strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			b.WriteString("n" + v.str)
		}
	case kBool:
		b.WriteString(strconv.FormatBool(v.b))
	case kArray:
		b.WriteByte('[')
		for i := range v.arr {
			v.arr[i].writeIdentity(b)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case kObject:
		ms := append([]member(nil), v.obj...)
		sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
		b.WriteByte('{')
		for i := range ms {
			b.WriteString(strconv.Quote(ms[i].name) + ":")
			ms[i].val.writeIdentity(b)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		b.WriteString(kindNames[v.kind])
	}
}
