// Package evaluator turns (a compiled criteria revision, one export) into a pre-check result, an
// audit report or a refusal. It is pure: no I/O, no clock (the caller passes the time), no global
// state, and safe for concurrent use. Every decision is made by a program of the rules.ProgramSet;
// this package keeps the mechanics: decoding, refusals in the published order, scope tuples,
// grouping by content key, the M4 pointer walk and arithmetic.
package evaluator

import (
	"bytes"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
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

// jval is one decoded JSON value. A max-size export decodes to about 8,500 members and up to
// 4,000 elements, kept in pooled slabs between exports, so it is 16 bytes instead of a string and
// two slice headers: one pointer and a count whose meaning the kind gives. A string (and a
// number, whose literal is kept for value identity in template lineage; no rule reads a number's
// value) points at its bytes in the body or in its unescaped copy; an array at its first element
// and an object at its first member, both in the buffers' slabs; a bool is true when n is 1. The
// pointer is nil when n is 0. Pointers rather than slab indices keep every reader free of the
// slabs: a *jval is read alone.
type jval struct {
	p    unsafe.Pointer
	n    uint32
	kind kind
}

type member struct {
	name string
	val  jval
}

var absent = jval{}

// maxLen is the longest body decode reads: every count and string length fits n.
const maxLen = math.MaxUint32

// textVal is a string or a number spelled s.
func textVal(k kind, s string) jval {
	if s == "" {
		return jval{kind: k}
	}
	return jval{kind: k, p: unsafe.Pointer(unsafe.StringData(s)), n: uint32(len(s))}
}

// arrVal is an array of the elements es (which it aliases).
func arrVal(es []jval) jval {
	if len(es) == 0 {
		return jval{kind: kArray}
	}
	return jval{kind: kArray, p: unsafe.Pointer(&es[0]), n: uint32(len(es))}
}

// objVal is an object of the members ms (which it aliases).
func objVal(ms []member) jval {
	if len(ms) == 0 {
		return jval{kind: kObject}
	}
	return jval{kind: kObject, p: unsafe.Pointer(&ms[0]), n: uint32(len(ms))}
}

func boolVal(b bool) jval {
	if b {
		return jval{kind: kBool, n: 1}
	}
	return jval{kind: kBool}
}

// str is a string's value or a number's literal, "" for every other kind.
func (v *jval) str() string {
	if (v.kind != kString && v.kind != kNumber) || v.n == 0 {
		return ""
	}
	return unsafe.String((*byte)(v.p), v.n)
}

// arr is an array's elements, nil for every other kind.
func (v *jval) arr() []jval {
	if v.kind != kArray || v.n == 0 {
		return nil
	}
	return unsafe.Slice((*jval)(v.p), v.n)
}

// obj is an object's members, nil for every other kind.
func (v *jval) obj() []member {
	if v.kind != kObject || v.n == 0 {
		return nil
	}
	return unsafe.Slice((*member)(v.p), v.n)
}

// boolean is a bool's value, false for every other kind.
func (v *jval) boolean() bool { return v.kind == kBool && v.n != 0 }

// get returns the member's value, or an absent value. Member names are unique.
func (v *jval) get(name string) *jval {
	obj := v.obj()
	for i := range obj {
		if obj[i].name == name {
			return &obj[i].val
		}
	}
	return &absent
}

// present is true when the value exists and is not null.
func (v *jval) present() bool { return v.kind != kAbsent && v.kind != kNull }

// errNotExport is the single, static outcome of any body that is not strict JSON. The
// decoder's own messages quote the input, so they are never surfaced.
var errNotExport = errors.New("export_required")

// decode parses a request body under R-3: UTF-8 JSON text (RFC 8259) without a byte-order mark, no
// duplicate member names (compared after unescaping), no escape decoding to a lone surrogate,
// nesting at most maxDepth levels (the top-level value is level 1). It is one pass over the bytes
// straight into the value tree; the tests hold it to the jsontext decoder's verdict on every input.
// With owned the tree's strings alias body (see Options.OwnedBody), else a copy of it.
func decode(body []byte, owned bool, maxDepth int, b *buffers) (jval, error) {
	if len(body) > maxLen || !utf8.Valid(body) || bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
		return jval{}, errNotExport
	}
	p := parsers.Get().(*parser)
	defer p.release()
	// One string holds every string of the export: an unescaped string is a slice of it, not an
	// allocation of its own. It is the body itself when the caller has handed it over.
	var src string
	if owned {
		src = unsafe.String(unsafe.SliceData(body), len(body))
	} else {
		src = string(body)
	}
	p.src, p.i, p.maxDepth, p.b = src, 0, maxDepth, b
	p.space()
	v, ok := p.value(1)
	if !ok {
		return jval{}, errNotExport
	}
	if p.space(); p.i != len(p.src) {
		return jval{}, errNotExport
	}
	return v, nil
}

// parser is one decode's state, pooled: the input, and the scratch stacks that let every array and
// object be allocated once, at its final size.
type parser struct {
	src      string // the body
	i        int    // the next byte
	maxDepth int
	b        *buffers // where the tree's arrays and objects are cut from
	vals     []jval
	mems     []member
	buf      []byte
}

var parsers = sync.Pool{New: func() any { return &parser{} }}

func (p *parser) release() {
	clear(p.vals[:cap(p.vals)])
	clear(p.mems[:cap(p.mems)])
	p.vals, p.mems, p.src, p.b = p.vals[:0], p.mems[:0], "", nil
	parsers.Put(p)
}

func (p *parser) space() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// literal consumes word (true, false, null).
func (p *parser) literal(word string) bool {
	if strings.HasPrefix(p.src[p.i:], word) {
		p.i += len(word)
		return true
	}
	return false
}

// value reads one value whose containers, if it is one, sit at the given level. Depth counts
// arrays and objects only: a scalar adds no level.
func (p *parser) value(level int) (jval, bool) {
	if p.i >= len(p.src) {
		return jval{}, false
	}
	switch c := p.src[p.i]; {
	case c == '"':
		s, ok := p.str()
		return textVal(kString, s), ok
	case c == '{':
		if level > p.maxDepth {
			return jval{}, false
		}
		return p.object(level)
	case c == '[':
		if level > p.maxDepth {
			return jval{}, false
		}
		return p.array(level)
	case c == 't':
		return boolVal(true), p.literal("true")
	case c == 'f':
		return boolVal(false), p.literal("false")
	case c == 'n':
		return jval{kind: kNull}, p.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		start := p.i
		ok := p.number()
		return textVal(kNumber, p.src[start:p.i]), ok // the literal, for value identity only
	}
	return jval{}, false
}

func (p *parser) digits() int {
	n := 0
	for p.i < len(p.src) && '0' <= p.src[p.i] && p.src[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() bool {
	if p.src[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.src) && p.src[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return false
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return false
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return false
		}
	}
	return true
}

// str reads a string at p.i (its opening quote). Without escapes it is a slice of the body.
func (p *parser) str() (string, bool) {
	start := p.i + 1
	for j := start; j < len(p.src); j++ {
		switch c := p.src[j]; {
		case c == '"':
			p.i = j + 1
			return p.src[start:j], true
		case c == '\\':
			return p.escaped(start, j)
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

// escaped reads the rest of a string that has an escape at j.
func (p *parser) escaped(start, j int) (string, bool) {
	b := append(p.buf[:0], p.src[start:j]...)
	defer func() { p.buf = b[:0] }()
	for j < len(p.src) {
		c := p.src[j]
		switch {
		case c == '"':
			p.i = j + 1
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			j++
			continue
		}
		if j+1 >= len(p.src) {
			return "", false
		}
		switch e := p.src[j+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(p.src, j+2)
			if !ok {
				return "", false
			}
			j += 6
			switch {
			case utf16.IsSurrogate(r):
				// A high surrogate must be followed by an escaped low one (no lone surrogate).
				if r >= 0xDC00 || j+1 >= len(p.src) || p.src[j] != '\\' || p.src[j+1] != 'u' {
					return "", false
				}
				lo, ok := hex4(p.src, j+2)
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return "", false
				}
				j += 6
				b = utf8.AppendRune(b, utf16.DecodeRune(r, lo))
			default:
				b = utf8.AppendRune(b, r)
			}
			continue
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (p *parser) array(level int) (jval, bool) {
	p.i++ // [
	start := len(p.vals)
	defer func() {
		clear(p.vals[start:])
		p.vals = p.vals[:start]
	}()
	p.space()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return jval{kind: kArray}, true
	}
	for {
		e, ok := p.value(level + 1)
		if !ok {
			return jval{}, false
		}
		p.vals = append(p.vals, e)
		p.space()
		if p.i >= len(p.src) {
			return jval{}, false
		}
		switch p.src[p.i] {
		case ',':
			p.i++
			p.space()
			continue
		case ']':
			p.i++
			arr := p.b.newVals(len(p.vals) - start)
			copy(arr, p.vals[start:])
			return arrVal(arr), true
		}
		return jval{}, false
	}
}

// dupScanMax is the member count up to which a duplicate name is looked for by scanning; a
// larger object indexes its names.
const dupScanMax = 16

func (p *parser) object(level int) (jval, bool) {
	p.i++ // {
	start := len(p.mems)
	defer func() {
		clear(p.mems[start:])
		p.mems = p.mems[:start]
	}()
	var names map[string]struct{}
	p.space()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return jval{kind: kObject}, true
	}
	for {
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return jval{}, false
		}
		name, ok := p.str()
		if !ok {
			return jval{}, false
		}
		// no duplicate member name.
		if n := len(p.mems) - start; n < dupScanMax {
			for k := start; k < len(p.mems); k++ {
				if p.mems[k].name == name {
					return jval{}, false
				}
			}
		} else {
			if names == nil {
				names = make(map[string]struct{}, 2*n)
				for k := start; k < len(p.mems); k++ {
					names[p.mems[k].name] = struct{}{}
				}
			}
			if _, dup := names[name]; dup {
				return jval{}, false
			}
			names[name] = struct{}{}
		}
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return jval{}, false
		}
		p.i++
		p.space()
		v, ok := p.value(level + 1)
		if !ok {
			return jval{}, false
		}
		p.mems = append(p.mems, member{name: name, val: v})
		p.space()
		if p.i >= len(p.src) {
			return jval{}, false
		}
		switch p.src[p.i] {
		case ',':
			p.i++
			p.space()
			continue
		case '}':
			p.i++
			obj := p.b.newMems(len(p.mems) - start)
			copy(obj, p.mems[start:])
			return objVal(obj), true
		}
		return jval{}, false
	}
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
		b.WriteString(strconv.Quote(v.str()))
	case kNumber:
		if f, err := strconv.ParseFloat(v.str(), 64); err == nil {
			b.WriteString("n" + strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			b.WriteString("n" + v.str())
		}
	case kBool:
		b.WriteString(strconv.FormatBool(v.boolean()))
	case kArray:
		b.WriteByte('[')
		arr := v.arr()
		for i := range arr {
			arr[i].writeIdentity(b)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case kObject:
		ms := append([]member(nil), v.obj()...)
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
