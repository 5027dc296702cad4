package jsontree

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonstr"
)

// ErrNotJSON is the single, static outcome of any body that is not strict JSON. A decoder's own
// messages would quote the input, so no detail is given: both rule sets answer such a body with
// export_required and nothing more.
var ErrNotJSON = errors.New("export_required")

// Options are what the engines' strictness leaves to them.
type Options struct {
	// MaxDepth is the deepest nesting accepted. Depth counts arrays and objects only (R-51,
	// FE-R-3): the top-level container is level 1, a scalar adds no level.
	MaxDepth int
	// Owned hands the body over: the tree's strings alias it, and the caller must never change
	// it while they are in use. Without it they alias one copy of the body.
	Owned bool
}

// Decode parses a request body under R-3 and FE-R-3 (the same rule in both): UTF-8 JSON text
// (RFC 8259) without a byte-order mark, one value with only whitespace around it, no duplicate
// member names (compared after unescaping), no escape decoding to a lone surrogate, nesting at most
// opts.MaxDepth levels. It is one pass over the bytes straight into the value tree, whose arrays
// and objects are cut from s; the tests hold it to the jsontext decoder's verdict on every input.
func Decode(body []byte, opts Options, s *Slabs) (Value, error) {
	if len(body) > maxLen || !utf8.Valid(body) || bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
		return Value{}, ErrNotJSON
	}
	p := parsers.Get().(*parser)
	defer p.release()
	// One string holds every string of the export: an unescaped string is a slice of it, not an
	// allocation of its own. It is the body itself when the caller has handed it over.
	var src string
	if opts.Owned {
		src = unsafe.String(unsafe.SliceData(body), len(body))
	} else {
		src = string(body)
	}
	p.src, p.i, p.maxDepth, p.s = src, 0, opts.MaxDepth, s
	p.space()
	v, ok := p.value(1)
	if !ok {
		return Value{}, ErrNotJSON
	}
	if p.space(); p.i != len(p.src) {
		return Value{}, ErrNotJSON
	}
	return v, nil
}

// parser is one decode's state, pooled: the input, and the scratch stacks that let every array and
// object be allocated once, at its final size.
type parser struct {
	src      string // the body
	i        int    // the next byte
	maxDepth int
	s        *Slabs // where the tree's arrays and objects are cut from
	vals     []Value
	mems     []Member
	fps      []uint64 // the fingerprints of the open objects' first dupScanMax member names, a stack as mems is
	buf      []byte
}

var parsers = sync.Pool{New: func() any { return &parser{} }}

func (p *parser) release() {
	clear(p.vals[:cap(p.vals)])
	clear(p.mems[:cap(p.mems)])
	p.vals, p.mems, p.fps, p.src, p.s = p.vals[:0], p.mems[:0], p.fps[:0], "", nil
	parsers.Put(p)
}

// ScratchBytes is what the parser scratch that the next Decode on this P would use keeps between
// decodes, in bytes (a server's idle memory per CPU, with the slabs).
func ScratchBytes() int {
	p := parsers.Get().(*parser)
	defer parsers.Put(p)
	return cap(p.vals)*int(unsafe.Sizeof(Value{})) + cap(p.mems)*int(unsafe.Sizeof(Member{})) + 8*cap(p.fps) + cap(p.buf)
}

// space skips the whitespace at p.i; compact text has none, which it sees from one byte.
func (p *parser) space() {
	if p.i < len(p.src) && p.src[p.i] > ' ' {
		return
	}
	for p.i < len(p.src) && isSpace[p.src[p.i]] {
		p.i++
	}
}

// isSpace marks the four whitespace bytes of RFC 8259.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

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
func (p *parser) value(level int) (Value, bool) {
	if p.i >= len(p.src) {
		return Value{}, false
	}
	switch c := p.src[p.i]; {
	case c == '"':
		s, ok := p.str()
		return textVal(String, s), ok
	case c == '{':
		if level > p.maxDepth {
			return Value{}, false
		}
		return p.object(level)
	case c == '[':
		if level > p.maxDepth {
			return Value{}, false
		}
		return p.array(level)
	case c == 't':
		return boolVal(true), p.literal("true")
	case c == 'f':
		return boolVal(false), p.literal("false")
	case c == 'n':
		return Value{kind: Null}, p.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		start := p.i
		ok := p.number()
		return textVal(Number, p.src[start:p.i]), ok // the literal, for value identity only
	}
	return Value{}, false
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
	j := jsonstr.Plain(p.src, start)
	if j < len(p.src) && p.src[j] == '"' {
		p.i = j + 1
		return p.src[start:j], true
	}
	if j < len(p.src) && p.src[j] == '\\' {
		return p.escaped(start, j)
	}
	return "", false // a control character or the end of the body
}

// name reads a member name at p.i (its opening quote), as str does, and returns its fingerprint
// (jsonstr.Fingerprint) too.
func (p *parser) name() (string, uint64, bool) {
	start := p.i + 1
	j, fp := jsonstr.PlainName(p.src, start)
	if j < len(p.src) && p.src[j] == '"' {
		p.i = j + 1
		return p.src[start:j], fp, true
	}
	if j < len(p.src) && p.src[j] == '\\' {
		s, ok := p.escaped(start, j)
		return s, jsonstr.Fingerprint(s), ok
	}
	return "", 0, false
}

// escaped reads the rest of a string that has an escape at j.
func (p *parser) escaped(start, j int) (string, bool) {
	b, next, ok := jsonstr.Unescape(append(p.buf[:0], p.src[start:j]...), p.src, j)
	p.buf = b[:0]
	if !ok {
		return "", false
	}
	p.i = next
	return string(b), true
}

// array reads an array at p.i. Its elements are gathered on the parser's stack and copied to the
// slabs at its close; a stack entry past the length is overwritten before it is read, and the
// pooled parser clears them all when the decode ends, so nothing is cleared per array.
func (p *parser) array(level int) (Value, bool) {
	p.i++ // [
	start := len(p.vals)
	p.space()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return Value{kind: Array}, true
	}
	for {
		e, ok := p.value(level + 1)
		if !ok {
			return Value{}, false
		}
		p.vals = append(p.vals, e)
		more, ok := p.next(']')
		if !ok {
			return Value{}, false
		}
		if !more {
			arr := p.s.newVals(len(p.vals) - start)
			copy(arr, p.vals[start:])
			p.vals = p.vals[:start]
			return arrVal(arr), true
		}
	}
}

// next reads what follows an element or a member: a comma, after which more follow, or the
// container's closing byte. ok is false for anything else or the end of the text.
func (p *parser) next(closing byte) (more, ok bool) {
	p.space()
	if p.i >= len(p.src) {
		return false, false
	}
	switch p.src[p.i] {
	case ',':
		p.i++
		p.space()
		return true, true
	case closing:
		p.i++
		return false, true
	}
	return false, false
}

// dupScanMax is the member count up to which a duplicate name is looked for by comparing
// fingerprints one by one; a larger object indexes its names.
const dupScanMax = 32

// object reads an object at p.i, gathering its members on the parser's stack as array does its
// elements, and the fingerprints of their names on a stack of their own (jsonstr.Fingerprint), so
// that the duplicate check compares a name in full only with the names that share it.
func (p *parser) object(level int) (Value, bool) {
	p.i++ // {
	start, fstart := len(p.mems), len(p.fps)
	var names map[string]struct{}
	p.space()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return Value{kind: Object}, true
	}
	for {
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return Value{}, false
		}
		name, fp, ok := p.name()
		if !ok {
			return Value{}, false
		}
		// R-3, FE-R-3: no duplicate member name.
		if n := len(p.mems) - start; n < dupScanMax {
			for k, f := range p.fps[fstart:] {
				if f == fp && p.mems[start+k].Name == name {
					return Value{}, false
				}
			}
			p.fps = append(p.fps, fp)
		} else {
			if names == nil {
				names = make(map[string]struct{}, 2*n)
				for k := start; k < len(p.mems); k++ {
					names[p.mems[k].Name] = struct{}{}
				}
			}
			if _, dup := names[name]; dup {
				return Value{}, false
			}
			names[name] = struct{}{}
		}
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return Value{}, false
		}
		p.i++
		p.space()
		v, ok := p.value(level + 1)
		if !ok {
			return Value{}, false
		}
		p.mems = append(p.mems, Member{Name: name, Val: v})
		more, ok := p.next('}')
		if !ok {
			return Value{}, false
		}
		if !more {
			obj := p.s.newMems(len(p.mems) - start)
			copy(obj, p.mems[start:])
			p.mems, p.fps = p.mems[:start], p.fps[:fstart]
			return objVal(obj), true
		}
	}
}
