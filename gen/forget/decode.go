package forget

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf8"
)

// maxDepth is the deepest nesting allowed (FE-R-3): the top-level value is level 1,
// and every object or array opens one more level.
const maxDepth = 64

// jsonNumber is a JSON number kept as its literal text; the oracle never does
// arithmetic on submitted numbers, it only needs to know that a value is a number.
type jsonNumber string

var errNotStrictJSON = errors.New("forget: body is not strict JSON")

// decodeStrict parses body as strict I-JSON (FE-R-3): valid UTF-8, no byte-order mark,
// no duplicate member name in any object, no string escape that decodes to a lone
// surrogate, nesting no deeper than 64 levels, and nothing after the value.
// Objects decode to map[string]any, arrays to []any, strings to string, numbers to
// jsonNumber, true/false to bool and null to nil.
func decodeStrict(body []byte) (any, error) {
	if !utf8.Valid(body) {
		return nil, errNotStrictJSON
	}
	if bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}) {
		return nil, errNotStrictJSON
	}
	p := &parser{b: body}
	p.skipSpace()
	v, err := p.value(1)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.b) {
		return nil, errNotStrictJSON
	}
	return v, nil
}

type parser struct {
	b []byte
	i int
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
		return nil, errNotStrictJSON
	}
	switch c := p.b[p.i]; {
	case c == '{':
		if level > maxDepth {
			return nil, errNotStrictJSON
		}
		return p.object(level)
	case c == '[':
		if level > maxDepth {
			return nil, errNotStrictJSON
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
		return nil, errNotStrictJSON
	}
}

func (p *parser) literal(word string) error {
	if !bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		return errNotStrictJSON
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
			return nil, errNotStrictJSON
		}
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, errNotStrictJSON
		}
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, errNotStrictJSON
		}
		p.i++
		p.skipSpace()
		v, err := p.value(level + 1)
		if err != nil {
			return nil, err
		}
		out[name] = v
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, errNotStrictJSON
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return out, nil
		default:
			return nil, errNotStrictJSON
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
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, errNotStrictJSON
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return out, nil
		default:
			return nil, errNotStrictJSON
		}
	}
}

// str parses a JSON string starting at the opening quote.
func (p *parser) str() (string, error) {
	p.i++ // opening quote
	var sb []byte
	for {
		if p.i >= len(p.b) {
			return "", errNotStrictJSON
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(sb), nil
		case c < 0x20:
			return "", errNotStrictJSON
		case c == '\\':
			p.i++
			if p.i >= len(p.b) {
				return "", errNotStrictJSON
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
						return "", errNotStrictJSON
					}
					p.i += 2
					lo, err := p.hex4()
					if err != nil {
						return "", err
					}
					if lo < 0xDC00 || lo > 0xDFFF {
						return "", errNotStrictJSON
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				case r >= 0xDC00 && r <= 0xDFFF:
					return "", errNotStrictJSON // lone low surrogate
				}
				sb = utf8.AppendRune(sb, r)
			default:
				return "", errNotStrictJSON
			}
		default:
			sb = append(sb, c)
			p.i++
		}
	}
}

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.b) {
		return 0, errNotStrictJSON
	}
	h := string(p.b[p.i : p.i+4])
	for _, c := range []byte(h) {
		if !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) {
			return 0, errNotStrictJSON
		}
	}
	n, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return 0, errNotStrictJSON
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
		return nil, errNotStrictJSON
	}
	switch {
	case p.b[p.i] == '0':
		p.i++
	case p.b[p.i] >= '1' && p.b[p.i] <= '9':
		for p.i < len(p.b) && isDigit(p.b[p.i]) {
			p.i++
		}
	default:
		return nil, errNotStrictJSON
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.i >= len(p.b) || !isDigit(p.b[p.i]) {
			return nil, errNotStrictJSON
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
			return nil, errNotStrictJSON
		}
		for p.i < len(p.b) && isDigit(p.b[p.i]) {
			p.i++
		}
	}
	return jsonNumber(p.b[start:p.i]), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
