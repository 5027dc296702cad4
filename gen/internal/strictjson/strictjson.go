// Package strictjson is the oracles' own strict I-JSON reader, shared by the v1 oracle (gen) and
// the forget-envelope oracle (gen/forget) so that both read a body the same way the criteria say
// (valid UTF-8, no byte-order mark, no duplicate member name, no lone surrogate, a depth cap,
// nothing after the value). It is written apart from the engine's decoder on purpose: the
// oracles import nothing of the engine.
package strictjson

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf8"
)

// Number is a JSON number kept as its literal text; the oracles never do arithmetic on submitted
// numbers, they only need to know that a value is a number and how it was written.
type Number string

// ErrNotStrict is the one error of Decode: the body is not strict JSON.
var ErrNotStrict = errors.New("strictjson: body is not strict JSON")

// Decode parses body as strict I-JSON with nesting no deeper than maxDepth levels (the top-level
// value is level 1; every object or array opens one more). Objects decode to map[string]any,
// arrays to []any, strings to string, numbers to Number, true/false to bool and null to nil.
func Decode(body []byte, maxDepth int) (any, error) {
	if !utf8.Valid(body) {
		return nil, ErrNotStrict
	}
	if bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}) {
		return nil, ErrNotStrict
	}
	p := &parser{b: body, maxDepth: maxDepth}
	p.skipSpace()
	v, err := p.value(1)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.b) {
		return nil, ErrNotStrict
	}
	return v, nil
}

type parser struct {
	b        []byte
	i        int
	maxDepth int
}

func (p *parser) skipSpace() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value parses one JSON value sitting at nesting level `level`.
func (p *parser) value(level int) (any, error) {
	if p.i >= len(p.b) {
		return nil, ErrNotStrict
	}
	switch c := p.b[p.i]; {
	case c == '{':
		if level > p.maxDepth {
			return nil, ErrNotStrict
		}
		return p.object(level)
	case c == '[':
		if level > p.maxDepth {
			return nil, ErrNotStrict
		}
		return p.array(level)
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, ErrNotStrict
	}
}

func (p *parser) literal(word string) error {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		return ErrNotStrict
	}
	p.i += len(word)
	return nil
}

func (p *parser) object(level int) (any, error) {
	p.i++ // '{'
	out := map[string]any{}
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, ErrNotStrict
		}
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, ErrNotStrict
		}
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, ErrNotStrict
		}
		p.i++
		p.skipSpace()
		v, err := p.value(level + 1)
		if err != nil {
			return nil, err
		}
		out[name] = v
		done, err := p.afterMember('}')
		if err != nil {
			return nil, err
		}
		if done {
			return out, nil
		}
	}
}

func (p *parser) array(level int) (any, error) {
	p.i++ // '['
	out := []any{}
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return out, nil
	}
	for {
		p.skipSpace()
		v, err := p.value(level + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		done, err := p.afterMember(']')
		if err != nil {
			return nil, err
		}
		if done {
			return out, nil
		}
	}
}

// afterMember reads what follows an object member or array element: a comma (done is false), the
// closing byte end (done is true), or anything else, which is ErrNotStrict.
func (p *parser) afterMember(end byte) (done bool, err error) {
	p.skipSpace()
	if p.i >= len(p.b) {
		return false, ErrNotStrict
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return false, nil
	case end:
		p.i++
		return true, nil
	default:
		return false, ErrNotStrict
	}
}

// str parses a JSON string starting at the opening quote.
func (p *parser) str() (string, error) {
	p.i++ // opening quote
	var sb []byte
	for {
		if p.i >= len(p.b) {
			return "", ErrNotStrict
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(sb), nil
		case c < 0x20:
			return "", ErrNotStrict
		case c == '\\':
			p.i++
			if p.i >= len(p.b) {
				return "", ErrNotStrict
			}
			e := p.b[p.i]
			p.i++
			switch e {
			case '"', '\\', '/':
				sb = append(sb, e)
			case 'b':
				sb = append(sb, '\b')
			case 'f':
				sb = append(sb, '\f')
			case 'n':
				sb = append(sb, '\n')
			case 'r':
				sb = append(sb, '\r')
			case 't':
				sb = append(sb, '\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				switch {
				case r >= 0xD800 && r <= 0xDBFF:
					// A high surrogate must be followed by an escaped low surrogate.
					if p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
						return "", ErrNotStrict
					}
					p.i += 2
					lo, err := p.hex4()
					if err != nil {
						return "", err
					}
					if lo < 0xDC00 || lo > 0xDFFF {
						return "", ErrNotStrict
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				case r >= 0xDC00 && r <= 0xDFFF:
					return "", ErrNotStrict // lone low surrogate
				}
				sb = utf8.AppendRune(sb, r)
			default:
				return "", ErrNotStrict
			}
		default:
			sb = append(sb, c)
			p.i++
		}
	}
}

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.b) {
		return 0, ErrNotStrict
	}
	h := string(p.b[p.i : p.i+4])
	for _, c := range []byte(h) {
		if !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) {
			return 0, ErrNotStrict
		}
	}
	n, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return 0, ErrNotStrict
	}
	p.i += 4
	return rune(n), nil
}

func (p *parser) number() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.i >= len(p.b) {
		return nil, ErrNotStrict
	}
	switch {
	case p.b[p.i] == '0':
		p.i++
	case p.b[p.i] >= '1' && p.b[p.i] <= '9':
		for p.i < len(p.b) && isDigit(p.b[p.i]) {
			p.i++
		}
	default:
		return nil, ErrNotStrict
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.i >= len(p.b) || !isDigit(p.b[p.i]) {
			return nil, ErrNotStrict
		}
		for p.i < len(p.b) && isDigit(p.b[p.i]) {
			p.i++
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.i >= len(p.b) || !isDigit(p.b[p.i]) {
			return nil, ErrNotStrict
		}
		for p.i < len(p.b) && isDigit(p.b[p.i]) {
			p.i++
		}
	}
	return Number(p.b[start:p.i]), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
