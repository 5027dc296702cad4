// Package jsonlex is a strict pull reader of JSON text for readers that know the shape they expect
// and want to record facts while they read, with no value tree between the bytes and them (the
// mutation-log engine, evaluator/mutlog). Its strictness is the one both rule sets define (R-3,
// FE-R-3) and the tree decoder of evaluator/internal/jsontree applies: UTF-8 JSON text (RFC 8259)
// without a byte-order mark, one value with only whitespace around it, no duplicate member names
// (compared after unescaping), no escape decoding to a lone surrogate, nesting at most a given
// number of levels. The tests hold it to that decoder's verdict on arbitrary bytes.
//
// It is meant to cost less than the bare jsontext token scan of the same bytes, so that an engine
// that reads through it has room for its own work (BenchmarkReaders prints the ratios): strings
// are scanned eight bytes at a time (jsonstr.Plain), member names are checked for duplicates by
// fingerprint, and Skip checks a whole value in one loop that builds nothing. A caller that does
// not want a value should Skip it rather than read it: Skip does not decode escapes and makes no
// call per token.
//
// A Reader never says why it failed: the first failure is sticky, every later read returns a zero
// value, and Done reports it. The caller answers such a body with one static refusal.
package jsonlex

import (
	"bytes"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonstr"
)

// Kind is what the next value is, by its first byte.
type Kind uint8

// The kinds of a value. Invalid is a byte no value starts with, the end of the text, or a reader
// that has failed.
const (
	Invalid Kind = iota
	Null
	String
	Bool
	Number
	Array
	Object
)

// maxLen is the longest text a Reader reads.
const maxLen = math.MaxInt32

// dupScanMax is the member count up to which a duplicate name is looked for by comparing
// fingerprints one by one; a larger object indexes its names.
const dupScanMax = 32

// frame is one open container.
type frame struct {
	obj   bool
	first bool // nothing read in it yet
	names int  // where its member names start in Reader.names
	set   int  // its index in Reader.sets plus one, once it has one (0: none)
	// seen has a bit set for each of its names' fingerprints (fpBit): a name whose bit is clear
	// is new, and the object's names need not be scanned for it.
	seen uint64
}

// nameRef is a member name: src[off:off+n], or escNames[-off-1] when off is negative, with its
// fingerprint (jsonstr.Fingerprint), so that the duplicate check compares a name in full only
// with the names that share it. Offsets rather than strings keep the names' stack free of
// pointers, so that pushing and popping a name costs the collector nothing.
type nameRef struct {
	off, n int32
	fp     uint64
}

// Reader reads one JSON text. The strings it returns alias the text unless they had escapes: the
// caller must not change the text while it uses them. A Reader may be reused by Reset; its stacks
// keep their capacity.
type Reader struct {
	src      string
	i        int
	maxDepth int
	failed   bool
	stack    []frame
	names    []nameRef // the member names of the open objects, innermost last
	escNames []string  // the names among them that had escapes
	sets     []map[string]struct{}
	buf      []byte // unescaping scratch
	// arena holds the unescaped strings of one text, a chunk at a time: written once, never
	// reused for another text (Reset drops it), so the strings cut from it stay as they are.
	arena []byte
}

// Reset starts reading text, refusing it at once when it is not UTF-8 or starts with a byte-order
// mark. The text is aliased, not copied.
func (r *Reader) Reset(text []byte, maxDepth int) {
	clear(r.escNames)
	r.stack, r.names, r.escNames = r.stack[:0], r.names[:0], r.escNames[:0]
	for _, s := range r.sets {
		clear(s) // a text that failed inside a large object left its names
	}
	r.src, r.i, r.maxDepth, r.failed, r.arena = "", 0, maxDepth, false, nil
	if len(text) > maxLen || !utf8.Valid(text) || bytes.HasPrefix(text, []byte("\xef\xbb\xbf")) {
		r.failed = true
		return
	}
	r.src = unsafe.String(unsafe.SliceData(text), len(text))
}

// Release drops what the reader holds of the last text, so that a pooled reader keeps none of it.
func (r *Reader) Release() {
	clear(r.escNames[:cap(r.escNames)])
	r.src, r.names, r.stack, r.escNames, r.arena = "", r.names[:0], r.stack[:0], r.escNames[:0], nil
	for _, s := range r.sets {
		clear(s)
	}
}

// Done reports whether the whole text was read without a failure: every container closed, and
// nothing but whitespace after the value.
func (r *Reader) Done() bool {
	if r.failed || len(r.stack) != 0 {
		return false
	}
	r.space()
	return r.i == len(r.src) && r.i > 0
}

// Failed reports whether the reader has failed.
func (r *Reader) Failed() bool { return r.failed }

func (r *Reader) fail() { r.failed = true }

// isSpace marks the four whitespace bytes of RFC 8259.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// skipSpace returns the index of the first byte of s at or after i that is not whitespace.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace[s[i]] {
		i++
	}
	return i
}

// space skips the whitespace at r.i; compact text has none, which it sees from one byte.
func (r *Reader) space() {
	if r.i < len(r.src) && r.src[r.i] > ' ' {
		return
	}
	r.i = skipSpace(r.src, r.i)
}

// kinds is the kind of value each byte starts.
var kinds = func() (t [256]Kind) {
	t['"'], t['{'], t['['], t['t'], t['f'], t['n'], t['-'] = String, Object, Array, Bool, Bool, Null, Number
	for c := '0'; c <= '9'; c++ {
		t[c] = Number
	}
	return t
}()

// Peek is the kind of the next value, read from its first byte.
func (r *Reader) Peek() Kind {
	if r.failed {
		return Invalid
	}
	r.space()
	if r.i >= len(r.src) {
		return Invalid
	}
	return kinds[r.src[r.i]]
}

// Skip reads the next value, whatever it is, and discards it. Its containers are checked as
// strictly as the rest (duplicate names, depth, strings and numbers), in one pass with no value
// built: an escaped string that is not a member name is checked, not decoded.
func (r *Reader) Skip() {
	if r.failed {
		return
	}
	if i, ok := r.skip(r.i); ok {
		r.i = i
		return
	}
	r.fail()
}

// skip reads the value at or after i (whitespace before it included) and returns where it ends.
// Its containers are pushed on the reader's stack as it opens them and popped as they close, so
// that the depth cap and the duplicate check are the ones Array, Object and Member apply.
func (r *Reader) skip(i int) (int, bool) {
	src, base := r.src, len(r.stack)
	for {
		// A value starts at i.
		if i < len(src) && src[i] <= ' ' {
			i = skipSpace(src, i)
		}
		if i >= len(src) {
			return 0, false
		}
		switch c := src[i]; c {
		case '"':
			j := jsonstr.Plain(src, i+1)
			switch {
			case j < len(src) && src[j] == '"':
				i = j + 1
			case j < len(src) && src[j] == '\\':
				var ok bool
				if i, ok = jsonstr.Skip(src, j); !ok {
					return 0, false
				}
			default:
				return 0, false
			}
		case '{', '[':
			if len(r.stack) >= r.maxDepth {
				return 0, false
			}
			r.stack = append(r.stack, frame{obj: c == '{', names: len(r.names)})
			i = skipSpace(src, i+1)
			if i < len(src) && src[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				i++
				r.pop()
				break
			}
			if c == '{' {
				var ok bool
				if _, _, i, ok = r.name(i); !ok {
					return 0, false
				}
			}
			continue
		case 't':
			if len(src)-i < 4 || src[i:i+4] != "true" {
				return 0, false
			}
			i += 4
		case 'f':
			if len(src)-i < 5 || src[i:i+5] != "false" {
				return 0, false
			}
			i += 5
		case 'n':
			if len(src)-i < 4 || src[i:i+4] != "null" {
				return 0, false
			}
			i += 4
		default:
			var ok bool
			if i, ok = number(src, i); !ok {
				return 0, false
			}
		}
		// A value ended at i: what follows it in its container, until one has a next value.
		for {
			if len(r.stack) == base {
				return i, true
			}
			if i < len(src) && src[i] <= ' ' {
				i = skipSpace(src, i)
			}
			if i >= len(src) {
				return 0, false
			}
			obj := r.stack[len(r.stack)-1].obj
			if c := src[i]; c == ',' {
				i++
				if obj {
					var ok bool
					if _, _, i, ok = r.name(skipSpace(src, i)); !ok {
						return 0, false
					}
				}
				break
			} else if c == ']' && !obj || c == '}' && obj {
				i++
				r.pop()
				continue
			}
			return 0, false
		}
	}
}

func (r *Reader) literal(word string) {
	if len(r.src)-r.i >= len(word) && r.src[r.i:r.i+len(word)] == word {
		r.i += len(word)
		return
	}
	r.fail()
}

// Null reads null.
func (r *Reader) Null() {
	if r.Peek() != Null {
		r.fail()
		return
	}
	r.literal("null")
}

// Bool reads true or false.
func (r *Reader) Bool() bool {
	if r.Peek() != Bool {
		r.fail()
		return false
	}
	if r.src[r.i] == 't' {
		r.literal("true")
		return !r.failed
	}
	r.literal("false")
	return false
}

// digits returns the index of the first byte of s at or after i that is not a digit.
func digits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// number reads the number at s[i:], -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, and returns
// where it ends.
func number(s string, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch j := digits(s, i); {
	case i < len(s) && s[i] == '0':
		i++
	case j == i:
		return 0, false
	default:
		i = j
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

// Num reads a number, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, and returns its literal.
func (r *Reader) Num() string {
	if r.Peek() != Number {
		r.fail()
		return ""
	}
	start := r.i
	end, ok := number(r.src, start)
	if !ok {
		r.fail()
		return ""
	}
	r.i = end
	return r.src[start:end]
}

// Str reads a string and returns its value: a part of the text when it has no escape, else a
// string of its own.
func (r *Reader) Str() string {
	if r.failed {
		return ""
	}
	r.space()
	if r.i >= len(r.src) || r.src[r.i] != '"' {
		r.fail()
		return ""
	}
	return r.str()
}

// str reads the string whose opening quote is at r.i.
func (r *Reader) str() string {
	start := r.i + 1
	j := jsonstr.Plain(r.src, start)
	if j < len(r.src) && r.src[j] == '"' {
		r.i = j + 1
		return r.src[start:j]
	}
	if j < len(r.src) && r.src[j] == '\\' {
		s, next, ok := r.escaped(start, j)
		if ok {
			r.i = next
			return s
		}
	}
	r.fail() // a control character, a bad escape or the end of the text
	return ""
}

// escaped reads the rest of a string that has an escape at j: its value and where it ends.
func (r *Reader) escaped(start, j int) (string, int, bool) {
	b, next, ok := jsonstr.Unescape(append(r.buf[:0], r.src[start:j]...), r.src, j)
	r.buf = b[:0]
	if !ok {
		return "", 0, false
	}
	return r.keep(b), next, true
}

// keep copies an unescaped string into the arena.
func (r *Reader) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(r.arena)-len(r.arena) < len(b) {
		r.arena = make([]byte, 0, max(len(b), 4096))
	}
	at := len(r.arena)
	r.arena = append(r.arena, b...)
	return unsafe.String(&r.arena[at], len(b))
}

// open consumes the opening byte of a container one level deeper than the open ones.
func (r *Reader) open(k Kind, c byte) bool {
	if r.Peek() != k || len(r.stack) >= r.maxDepth {
		r.fail()
		return false
	}
	r.i++
	r.stack = append(r.stack, frame{obj: c == '{', first: true, names: len(r.names)})
	return true
}

// Array reads the opening of an array; More then says whether an element follows.
func (r *Reader) Array() { r.open(Array, '[') }

// Object reads the opening of an object; Member then reads each member's name.
func (r *Reader) Object() { r.open(Object, '{') }

// next reads what comes before an element or member, or the container's closing byte: it reports
// whether one follows, and where it starts (after the comma and the whitespace around it). The
// container is popped when it closes.
func (r *Reader) next(obj bool) (int, bool) {
	n := len(r.stack)
	if r.failed || n == 0 || r.stack[n-1].obj != obj {
		r.fail()
		return 0, false
	}
	src, i := r.src, r.i
	if i < len(src) && src[i] <= ' ' {
		i = skipSpace(src, i)
	}
	if i >= len(src) {
		r.fail()
		return 0, false
	}
	f := &r.stack[n-1]
	switch c := src[i]; {
	case c == ']' && !obj || c == '}' && obj:
		r.i = i + 1
		r.pop()
		return 0, false
	case f.first:
		f.first = false
		return i, true
	case c == ',':
		if i++; i < len(src) && src[i] <= ' ' {
			i = skipSpace(src, i)
		}
		return i, true
	}
	r.fail()
	return 0, false
}

func (r *Reader) pop() {
	f := r.stack[len(r.stack)-1]
	r.names = r.names[:f.names]
	if f.set > 0 {
		clear(r.sets[f.set-1])
	}
	r.stack = r.stack[:len(r.stack)-1]
}

// More reports whether another element of the open array follows; it reads the closing bracket
// when none does.
func (r *Reader) More() bool {
	i, ok := r.next(false)
	if ok {
		r.i = i
	}
	return ok
}

// Member reads the next member's name and its colon, or the closing brace of the open object
// (ok false). A name the object already has fails the reader.
func (r *Reader) Member() (name string, ok bool) {
	name, _, ok = r.MemberFingerprint()
	return name, ok
}

// MemberFingerprint is Member with the name's jsonstr.Fingerprint, which the duplicate-name
// check has computed already: a caller that dispatches on names can look them up by it.
func (r *Reader) MemberFingerprint() (name string, fp uint64, ok bool) {
	i, ok := r.next(true)
	if !ok {
		return "", 0, false
	}
	name, fp, i, ok = r.name(i)
	if !ok {
		r.fail()
		return "", 0, false
	}
	r.i = i
	return name, fp, true
}

// Remaining is how many bytes of the text are not read yet.
func (r *Reader) Remaining() int { return len(r.src) - r.i }

// Offset is where the next value starts in the text, once Peek has skipped the whitespace
// before it; after a value, where it ended.
func (r *Reader) Offset() int { return r.i }

// Text is the text between two offsets, as written (escapes and all).
func (r *Reader) Text(from, to int) string { return r.src[from:to] }
