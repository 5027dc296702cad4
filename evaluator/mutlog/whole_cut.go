package mutlog

import (
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"slices"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The fast reader of the whole-log mode. The reader of whole.go cuts every event out of its part
// with jsontext, a validating pass, and then reads it a second time in its chunk (read), which
// validates it again. This reader cuts the parts with a cutter that only follows strings and
// brackets to find where a value ends and leaves the validating to the chunk's reading. It takes
// only logs the whole mode reports on: at anything else (a byte out of place, a chunk that read
// refuses, a refusal of the mode's own, an error) it stops, and AuditWhole audits the parts
// again with the reader of whole.go, so that every refusal and error is the one that reader
// gives, by construction.
//
// Why a report is the same: the cutter cuts a valid JSON text exactly where a parser would (a
// string ends at the first quote after an even run of backslashes, brackets outside strings
// balance), and the bytes between the values it cuts (whitespace, the colons and commas, the
// braces of the part) it checks here, strictly. So the chunks it gathers are the chunks the
// reference gathers, byte for byte, whenever every chunk reads without a refusal; a chunk whose
// read event count is not the count cut stops it too. Header values it compacts with jsontext
// (validating them) as the reference does.

// errSlow stops the fast reader: the parts are read again by the reference reader.
var errSlow = errors.New("whole log: not for the fast reader")

// cutter finds the ends of JSON values in a part without validating them.
type cutter struct {
	src io.Reader // nil: buf is all there is
	buf []byte    // buf[pos:] is read and not yet taken
	pos int
	// spans are a held part's events as cut (offsets in buf), given to the chunks once its
	// header is known.
	spans []valueSpan
	// failed: the part's reader gave an error other than io.EOF.
	failed bool
}

type valueSpan struct{ from, to int }

// more reads more of the part, keeping buf[keep:] (moved to the front): it returns how far the
// kept bytes moved, and false at the end of the part or on an error (the reference reader then
// meets the same end or error).
func (c *cutter) more(keep int) (int, bool) {
	if c.src == nil {
		return 0, false
	}
	n := copy(c.buf, c.buf[keep:])
	c.buf = c.buf[:n]
	if n == cap(c.buf) {
		c.buf = slices.Grow(c.buf, n)
	}
	for {
		m, err := c.src.Read(c.buf[n:cap(c.buf)])
		c.buf = c.buf[:n+m]
		if m > 0 {
			c.pos -= keep
			return keep, true
		}
		if err != nil {
			c.src = nil
			c.failed = err != io.EOF
			return 0, false
		}
	}
}

// space skips JSON whitespace and returns the next byte; false at the end of the part.
func (c *cutter) space() (byte, bool) {
	for {
		for c.pos < len(c.buf) {
			switch b := c.buf[c.pos]; b {
			case ' ', '\t', '\n', '\r':
				c.pos++
			default:
				return b, true
			}
		}
		if _, ok := c.more(c.pos); !ok {
			return 0, false
		}
	}
}

// expect takes the byte b after whitespace.
func (c *cutter) expect(b byte) bool {
	if x, ok := c.space(); !ok || x != b {
		return false
	}
	c.pos++
	return true
}

// value cuts the next value, after whitespace, and returns its offsets in buf; it stays in buf
// until the next call. A value the buffer does not hold whole is scanned on from where the scan
// stopped as more is read, so that the cost stays linear however small the reads.
func (c *cutter) value() (valueSpan, bool) {
	if _, ok := c.space(); !ok {
		return valueSpan{}, false
	}
	st := scan{str: -1}
	for {
		end, ok := st.end(c.buf[c.pos:])
		if ok {
			s := valueSpan{c.pos, c.pos + end}
			c.pos = s.to
			return s, s.to > s.from
		}
		if _, ok := c.more(c.pos); !ok {
			return valueSpan{}, false
		}
	}
}

// structural are the bytes a scan stops at outside strings.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// scalarEnd are the bytes that end a number or a literal.
var scalarEnd = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, ',': true, ':': true,
	'"': true, '{': true, '[': true, '}': true, ']': true}

// scan is where the scan of one value stands, in offsets from the value's first byte.
type scan struct {
	at    int // the next byte to look at
	depth int // brackets open
	str   int // the first byte of the text of the string being scanned; -1 outside strings
}

// fastPart reads one part with the cutter; errSlow (or any error) sends the audit to the
// reference reader.
func (w *wholeRead) fastPart(open PartSource) error {
	rc, err := open()
	if err != nil {
		return err
	}
	defer rc.Close()
	c := &w.cut
	c.src, c.pos, c.spans, c.failed = rc, 0, c.spans[:0], false
	if c.buf == nil {
		c.buf = make([]byte, 0, max(w.cutBuf, 1))
	}
	c.buf = c.buf[:0]
	// Read up to the body cap and one byte more: within the cap the part is held whole.
	for len(c.buf) <= w.holdBytes && c.src != nil {
		if len(c.buf) == cap(c.buf) {
			c.buf = slices.Grow(c.buf, len(c.buf))
		}
		m, err := c.src.Read(c.buf[len(c.buf):min(cap(c.buf), w.holdBytes+1)])
		c.buf = c.buf[:len(c.buf)+m]
		if err != nil {
			c.src = nil
			c.failed = err != io.EOF
		}
	}
	w.hdr, w.hdrDone = w.hdr[:0], false
	w.held = len(c.buf) <= w.holdBytes
	if err := w.fastMembers(); err != nil {
		return err
	}
	if w.best != nil || w.slow || c.failed {
		return errSlow
	}
	return nil
}

// fastMembers reads a part's top-level object. A held part's events are cut first and gathered
// once its header is known, as the reference reads a held part's header first.
func (w *wholeRead) fastMembers() error {
	c := &w.cut
	if !c.expect('{') {
		return errSlow
	}
	var names []string
	sawEvents, snapAt := false, -1
	if b, ok := c.space(); ok && b == '}' {
		c.pos++
	} else {
		for {
			if b, ok := c.space(); !ok || b != '"' {
				return errSlow
			}
			s, ok := c.value()
			if !ok {
				return errSlow
			}
			name, err := jsontext.AppendUnquote(nil, c.buf[s.from:s.to])
			if err != nil || !utf8.Valid(name) || slices.Contains(names, string(name)) {
				return errSlow // not a string, or a name twice: the reference refuses the log
			}
			names = append(names, string(name))
			if !c.expect(':') {
				return errSlow
			}
			switch string(name) {
			case "events":
				sawEvents = true
				if !w.held {
					w.headerDone()
				}
				if err := w.fastEvents(); err != nil {
					return err
				}
			case "snapshot":
				if w.part != w.parts || w.held && !sawEvents {
					return errSlow // the reference refuses it, or reads it before the events
				}
				if !w.held {
					w.headerDone()
					if err := w.fastSnapshot(); err != nil {
						return err
					}
					break
				}
				// Held: gathered after the events, once the header is known.
				if _, ok := c.space(); !ok {
					return errSlow
				}
				snapAt = c.pos
				s, ok := c.value()
				if !ok {
					return errSlow
				}
				c.pos = s.to
			default:
				if w.hdrDone {
					return errSlow // the reference refuses a header member after a streamed part's events
				}
				s, ok := c.value()
				if !ok {
					return errSlow
				}
				v := jsontext.Value(slices.Clone(c.buf[s.from:s.to]))
				if !v.IsValid() || v.Compact() != nil {
					return errSlow
				}
				w.hdr = append(w.hdr, member{name: string(name), raw: v})
			}
			b, ok := c.space()
			if !ok {
				return errSlow
			}
			c.pos++
			if b == '}' {
				break
			}
			if b != ',' {
				return errSlow
			}
		}
	}
	if _, ok := c.space(); ok {
		return errSlow // something after the object
	}
	if !sawEvents {
		return errSlow // events_required
	}
	w.headerDone()
	if w.held {
		for _, s := range c.spans {
			if err := w.addEvent(c.buf[s.from:s.to]); err != nil {
				return err
			}
		}
		if snapAt >= 0 {
			c.pos = snapAt
			if err := w.fastSnapshot(); err != nil {
				return err
			}
		}
	}
	return nil
}

// fastEvents cuts the events array: a held part's into spans, a streamed part's into the chunks.
func (w *wholeRead) fastEvents() error {
	c := &w.cut
	if !c.expect('[') {
		return errSlow
	}
	if b, ok := c.space(); ok && b == ']' {
		c.pos++
		return nil
	}
	for {
		s, ok := c.value()
		if !ok {
			return errSlow
		}
		if w.held {
			c.spans = append(c.spans, s)
		} else if err := w.addEvent(c.buf[s.from:s.to]); err != nil {
			return err
		}
		if w.best != nil || w.slow {
			return errSlow
		}
		b, ok := c.space()
		if !ok {
			return errSlow
		}
		c.pos++
		if b == ']' {
			return nil
		}
		if b != ',' {
			return errSlow
		}
	}
}

// fastSnapshot cuts the snapshot array into its chunks.
func (w *wholeRead) fastSnapshot() error {
	c := &w.cut
	if !c.expect('[') {
		return errSlow
	}
	w.snapBegin()
	if b, ok := c.space(); ok && b == ']' {
		c.pos++
		w.snapEnd()
		return nil
	}
	for {
		s, ok := c.value()
		if !ok {
			return errSlow
		}
		w.snapAdd(c.buf[s.from:s.to])
		if w.best != nil || w.slow {
			return errSlow
		}
		b, ok := c.space()
		if !ok {
			return errSlow
		}
		c.pos++
		if b == ']' {
			w.snapEnd()
			return nil
		}
		if b != ',' {
			return errSlow
		}
	}
}

// strStop are the bytes that stop a scan in a string.
var strStop = [256]bool{'"': true, '\\': true}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// strStopAt is the first quote or backslash at or after j, or len(b): eight bytes at a time, the
// strings of a log being mostly longer than that. A byte of the word is flagged when it equals
// either (the zero-byte test on the word xor each); the flag of a byte after a flagged one may
// be wrong, so only the first is read.
func strStopAt(b []byte, j int) int {
	for ; j+8 <= len(b); j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		q := x ^ (lo8 * '"')
		s := x ^ (lo8 * '\\')
		m := ((q-lo8)&^q | (s-lo8)&^s) & hi8
		if m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
	}
	for j < len(b) && !strStop[b[j]] {
		j++
	}
	return j
}

// end is the end of the value b starts with, and false when b ends before it does (the scan
// then goes on from there on a longer b). A number or literal ends at the first byte that cannot
// be in one; an empty one ends at 0. In a string, a quote ends it and a backslash escapes the
// byte after it.
func (st *scan) end(b []byte) (int, bool) {
	switch b[0] {
	case '{', '[', '"':
	default:
		for j := st.at; j < len(b); j++ {
			if scalarEnd[b[j]] {
				return j, true
			}
		}
		st.at = len(b)
		return 0, false
	}
	j := st.at
	for {
		if st.str >= 0 {
			for {
				j = strStopAt(b, j)
				if j >= len(b) {
					st.at = j // past len(b) when b ends with a backslash: its byte is skipped
					return 0, false
				}
				if b[j] == '"' {
					break
				}
				j += 2
			}
			j++
			st.str = -1
			if st.depth == 0 {
				return j, true // the value is a string
			}
		}
		for j < len(b) && !structural[b[j]] {
			j++
		}
		if j == len(b) {
			st.at = j
			return 0, false
		}
		c := b[j]
		j++
		switch c {
		case '"':
			st.str = j
		case '{', '[':
			st.depth++
		default:
			if st.depth--; st.depth == 0 {
				return j, true
			}
		}
	}
}
