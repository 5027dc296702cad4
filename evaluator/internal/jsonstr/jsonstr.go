// Package jsonstr decodes the escapes of a JSON string's body, under the strictness both of the
// engines' readers apply (evaluator/internal/jsontree and evaluator/internal/jsonlex): RFC 8259
// escapes only, no control character, and no escape that decodes to a lone surrogate. Both
// readers find the plain run of a string themselves and call it at the first escape.
package jsonstr

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Unescape appends to b the body of the string in src from j (at or before its first escape) up
// to its closing quote, with its escapes decoded. It returns the bytes and the index just after
// the closing quote; ok is false for a control character, a bad or cut escape, a lone surrogate,
// or a string that does not end.
func Unescape(b []byte, src string, j int) (out []byte, next int, ok bool) {
	for j < len(src) {
		c := src[j]
		switch {
		case c == '"':
			return b, j + 1, true
		case c < 0x20:
			return b, 0, false
		case c != '\\':
			b = append(b, c)
			j++
			continue
		}
		if j+1 >= len(src) {
			return b, 0, false
		}
		switch e := src[j+1]; e {
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
			r, n, ok := unicode(src, j)
			if !ok {
				return b, 0, false
			}
			b = utf8.AppendRune(b, r)
			j += n
			continue
		default:
			return b, 0, false
		}
		j += 2
	}
	return b, 0, false
}

// unicode reads the \u escape at src[j:] (and the low half that must follow a high surrogate):
// the rune and the bytes read.
func unicode(src string, j int) (rune, int, bool) {
	c, ok := hex4(src, j+2)
	if !ok {
		return 0, 0, false
	}
	if !utf16.IsSurrogate(c) {
		return c, 6, true
	}
	if c >= 0xDC00 || j+7 >= len(src) || src[j+6] != '\\' || src[j+7] != 'u' {
		return 0, 0, false
	}
	lo, ok := hex4(src, j+8)
	if !ok || lo < 0xDC00 || lo > 0xDFFF {
		return 0, 0, false
	}
	return utf16.DecodeRune(c, lo), 12, true
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var c rune
	for k := i; k < i+4; k++ {
		switch d := s[k]; {
		case '0' <= d && d <= '9':
			c = c<<4 | rune(d-'0')
		case 'a' <= d && d <= 'f':
			c = c<<4 | rune(d-'a'+10)
		case 'A' <= d && d <= 'F':
			c = c<<4 | rune(d-'A'+10)
		default:
			return 0, false
		}
	}
	return c, true
}
