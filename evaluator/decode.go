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
	"sync"
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
	p := parsers.Get().(*parser)
	defer p.release()
	p.d.Reset(bytes.NewReader(body))
	// One copy of the body holds every string of the export: an unescaped string is a slice of
	// it, not an allocation of its own.
	p.src = string(body)
	p.maxDepth = maxDepth
	v, err := p.value(1)
	if err != nil {
		return jval{}, errNotExport
	}
	if _, err := p.d.ReadToken(); err != io.EOF {
		return jval{}, errNotExport
	}
	return v, nil
}

// parser is one decode's state, pooled: the decoder and the scratch stacks that let every array
// and object be allocated once, at its final size.
type parser struct {
	d        *jsontext.Decoder
	src      string // the body
	maxDepth int
	vals     []jval
	mems     []member
}

var parsers = sync.Pool{New: func() any { return &parser{d: jsontext.NewDecoder(bytes.NewReader(nil))} }}

func (p *parser) release() {
	clear(p.vals[:cap(p.vals)])
	clear(p.mems[:cap(p.mems)])
	p.vals, p.mems, p.src = p.vals[:0], p.mems[:0], ""
	p.d.Reset(bytes.NewReader(nil))
	parsers.Put(p)
}

// name reads an object member name.
func (p *parser) name() (string, error) {
	if p.d.PeekKind() != '"' {
		return "", errNotExport
	}
	raw, err := p.d.ReadValue()
	if err != nil {
		return "", errNotExport
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return p.slice(raw), nil
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return "", errNotExport
	}
	return string(s), nil
}

// slice is the text between the quotes of the string just read (raw), taken from the body.
func (p *parser) slice(raw []byte) string {
	end := int(p.d.InputOffset())
	return p.src[end-len(raw)+1 : end-1]
}

// value reads one value whose containers, if it is one, sit at the given level. Depth counts
// arrays and objects only: a scalar adds no level.
func (p *parser) value(level int) (jval, error) {
	d := p.d
	k := d.PeekKind()
	if (k == '[' || k == '{') && level > p.maxDepth {
		return jval{}, errNotExport
	}
	if k == '"' {
		raw, err := d.ReadValue()
		if err != nil {
			return jval{}, errNotExport
		}
		if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 {
			return jval{kind: kString, str: p.slice(raw)}, nil
		}
		s, err := jsontext.AppendUnquote(nil, raw)
		if err != nil {
			return jval{}, errNotExport
		}
		return jval{kind: kString, str: string(s)}, nil
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
	case '0':
		return jval{kind: kNumber, str: t.String()}, nil // the literal, for value identity only
	case '[':
		start := len(p.vals)
		for d.PeekKind() != ']' {
			e, err := p.value(level + 1)
			if err != nil {
				return jval{}, err
			}
			p.vals = append(p.vals, e)
		}
		if _, err := d.ReadToken(); err != nil {
			return jval{}, errNotExport
		}
		v := jval{kind: kArray}
		if n := len(p.vals) - start; n > 0 {
			v.arr = append(make([]jval, 0, n), p.vals[start:]...)
		}
		clear(p.vals[start:])
		p.vals = p.vals[:start]
		return v, nil
	case '{':
		start := len(p.mems)
		for d.PeekKind() != '}' {
			name, err := p.name()
			if err != nil {
				return jval{}, err
			}
			e, err := p.value(level + 1)
			if err != nil {
				return jval{}, err
			}
			p.mems = append(p.mems, member{name: name, val: e})
		}
		if _, err := d.ReadToken(); err != nil {
			return jval{}, errNotExport
		}
		v := jval{kind: kObject}
		if n := len(p.mems) - start; n > 0 {
			v.obj = append(make([]member, 0, n), p.mems[start:]...)
		}
		clear(p.mems[start:])
		p.mems = p.mems[:start]
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
