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

// jval is one decoded JSON value. Numbers keep no value: no rule reads one.
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

func readValue(d *jsontext.Decoder, level, maxDepth int) (jval, error) {
	if level > maxDepth {
		return jval{}, errNotExport
	}
	t, err := d.ReadToken()
	if err != nil {
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
		return jval{kind: kNumber}, nil
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
