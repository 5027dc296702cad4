// Package jsonstr decodes the escapes of a JSON string's body, under the strictness both of the
// engines' readers apply (evaluator/internal/jsontree and evaluator/internal/jsonlex): RFC 8259
// escapes only, no control character, and no escape that decodes to a lone surrogate. Both
// readers find the plain run of a string with Plain and call Unescape (or Skip, when they do not
// want the value) at the first escape, and check member names for duplicates by Fingerprint.
package jsonstr

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Masks for Plain's eight bytes at a time.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special has the high bit of each byte of w that a string's body may not hold as it is (below
// 0x20, a quote, a backslash), and possibly of bytes above the lowest such byte, never of one
// below it: its lowest set bit is exact. It is the three tests "x has a byte below n" (x - n
// borrows into bit 7 of such a byte, &^ x drops the bytes at 0x80 and above) of w against 0x20
// and of w with the quote and the backslash cleared to zero against 1; the three x share bit 7
// (0x22 and 0x5C do not touch it), so one &^ w serves all of them.
func special(w uint64) uint64 {
	return ((w - ones*0x20) | (w ^ ones*'"' - ones) | (w ^ ones*'\\' - ones)) &^ w & highs
}

// word is the eight bytes of s from j, little-endian (the first byte lowest).
func word(s string, j int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[j:]), 8))
}

// Plain returns the index of the first byte of s at or after j that a string's body may not hold
// as it is (a quote, a backslash or a control character), or len(s). Bodies are short and plain
// in the exports the readers see, so it reads eight bytes at a time and finds the byte in the
// first word that has one from its lowest flagged bit, with no byte loop except within the last
// eight bytes of s. It does not check UTF-8: both readers check the whole text first.
func Plain(s string, j int) int {
	for j+8 <= len(s) {
		if m := special(word(s, j)); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		j += 8
	}
	for j < len(s) {
		if c := s[j]; c < 0x20 || c == '"' || c == '\\' {
			return j
		}
		j++
	}
	return j
}

// PlainName is Plain for a member name: it also returns Fingerprint(s[j:end]), computed from the
// words Plain reads, so that a name without escapes is fingerprinted without a second read.
func PlainName(s string, j int) (end int, fp uint64) {
	if j+8 > len(s) {
		end = Plain(s, j)
		return end, Fingerprint(s[j:end])
	}
	first := word(s, j)
	if m := special(first); m != 0 {
		n := bits.TrailingZeros64(m) >> 3
		return j + n, first&(1<<(8*n)-1) | uint64(n)<<56
	}
	end = Plain(s, j+8)
	return end, long(first, word(s, end-8), end-j)
}

// long is the fingerprint of a string of n bytes, at least eight, from its first and last eight.
func long(first, last uint64, n int) uint64 {
	return (first ^ bits.RotateLeft64(last, 29)) + uint64(n)*0x9E3779B97F4A7C15
}

// Skip is Unescape for a reader that does not want the value: it checks the rest of the string
// from j (at or before its first escape) under the same rules, builds nothing, and returns the
// index just after the closing quote.
func Skip(src string, j int) (next int, ok bool) {
	for {
		j = Plain(src, j)
		if j >= len(src) || src[j] < 0x20 {
			return 0, false
		}
		if src[j] == '"' {
			return j + 1, true
		}
		if j+1 >= len(src) {
			return 0, false
		}
		switch src[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			_, n, ok := unicode(src, j)
			if !ok {
				return 0, false
			}
			j += n
		default:
			return 0, false
		}
	}
}

// Unescape appends to b the body of the string in src from j (at or before its first escape) up
// to its closing quote, with its escapes decoded. It returns the bytes and the index just after
// the closing quote; ok is false for a control character, a bad or cut escape, a lone surrogate,
// or a string that does not end.
func Unescape(b []byte, src string, j int) (out []byte, next int, ok bool) {
	for j < len(src) {
		k := Plain(src, j)
		b = append(b, src[j:k]...)
		if j = k; j >= len(src) {
			break
		}
		switch c := src[j]; {
		case c == '"':
			return b, j + 1, true
		case c < 0x20:
			return b, 0, false
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

// Fingerprint is a summary of a member name for the readers' duplicate-name check: equal names
// have equal fingerprints, so a name is compared in full only with the names whose fingerprint is
// its own. It reads the first and last eight bytes and the length; a name shorter than eight
// bytes is its own fingerprint, exactly.
func Fingerprint(s string) uint64 {
	n := len(s)
	if n >= 8 {
		return long(word(s, 0), word(s, n-8), n)
	}
	var w uint64
	for k := n - 1; k >= 0; k-- {
		w = w<<8 | uint64(s[k])
	}
	return w | uint64(n)<<56
}
