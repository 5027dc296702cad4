// Package mutlog is the evaluator mechanics of criteria of kind mutation-log
// (docs/forget-envelope.md): it turns (a compiled rules.MutLogSet, one mutation-log export) into a
// pre-check result, an audit report or a refusal. It is pure: no I/O, no clock (the caller passes
// the time), safe for concurrent use. Go keeps the mechanics only: strict decoding, the refusal
// checks in the criteria's order, canonicalizing keys by the criteria's steps, ordering events by
// sequence, replaying the log through the criteria's transition table, matching grants, and
// arithmetic. Every decision (per-event predicates, assessability gates) is a CEL program of the
// criteria.
package mutlog

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

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

// jval is one decoded JSON value; a number keeps its literal text (FE-R-9 reads it).
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

// get returns the member's value, or an absent value. Member names are unique (FE-R-3).
func (v *jval) get(name string) *jval {
	for i := range v.obj {
		if v.obj[i].name == name {
			return &v.obj[i].val
		}
	}
	return &absent
}

// present is true when the value exists and is not null (FE-R-4).
func (v *jval) present() bool { return v.kind != kAbsent && v.kind != kNull }

var errNotExport = errors.New("export_required")

// decode parses a body under FE-R-3: UTF-8 JSON text without a byte-order mark, one value, no
// duplicate member names, no escape decoding to a lone surrogate, nesting at most maxDepth levels.
// The decoder's own messages quote the input, so they are never surfaced.
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
		return jval{kind: kNumber, str: t.String()}, nil
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
			name := nt.String()
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
