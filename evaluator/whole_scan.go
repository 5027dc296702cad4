package evaluator

import (
	"encoding/binary"
	"io"
)

// partScanner is the streaming splitter of the local whole-store check: it finds where each value
// of a part lies without decoding it, through a window over the part's bytes that holds one value
// at a time however large the part is. It checks the text between the values (whitespace, the
// object's names and punctuation) strictly, and nothing inside them: each value it cuts out is
// decoded strictly by jsontree afterwards (a batch of records, or the header), so that the part
// is strict JSON exactly when every cut and every value is. The bytes it returns are the
// window's, valid until the next read.
type partScanner struct {
	r    io.Reader
	err  error  // the first read error that is not io.EOF
	buf  []byte // the window: buf[:n] holds the part's bytes from base on
	n, i int    // bytes in the window, and the read position in it
	mark int    // the start of the value being cut (-1: none): the window keeps it
	base int64  // the part's offset of buf[0]
	eof  bool
}

// scanWindow is the window's first size; it doubles for a value that does not fit.
const scanWindow = 256 << 10

func newPartScanner(r io.Reader, buf []byte) *partScanner {
	if cap(buf) < scanWindow {
		buf = make([]byte, scanWindow)
	}
	return &partScanner{r: r, buf: buf[:cap(buf)], mark: -1}
}

// more reads more of the part into the window, keeping what is from the mark (or the read
// position) on, and the byte before it; false at the end of the part or on a read error.
func (s *partScanner) more() bool {
	if s.eof {
		return false
	}
	keep := s.i
	if s.mark >= 0 && s.mark < keep {
		keep = s.mark
	}
	if keep > 1 {
		// One byte is left before what is kept: the direct read (whole_direct.go) writes an
		// array's opening bracket there, so that the records after it read as an array.
		d := keep - 1
		copy(s.buf[1:], s.buf[keep:s.n])
		s.n, s.i, s.base = s.n-d, s.i-d, s.base+int64(d)
		if s.mark >= 0 {
			s.mark -= d
		}
	}
	if s.n == len(s.buf) {
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
		s.buf = s.buf[:cap(s.buf)]
	}
	for {
		m, err := s.r.Read(s.buf[s.n:])
		s.n += m
		if err != nil {
			if err != io.EOF {
				s.err = err
			}
			s.eof = true
			return m > 0
		}
		if m > 0 {
			return true
		}
	}
}

// peek is the next byte after whitespace (false at the end of the part).
func (s *partScanner) peek() (byte, bool) {
	for {
		for s.i < s.n {
			switch c := s.buf[s.i]; c {
			case ' ', '\t', '\n', '\r':
				s.i++
			default:
				return c, true
			}
		}
		if !s.more() {
			return 0, false
		}
	}
}

// punct reads the byte c after whitespace.
func (s *partScanner) punct(c byte) bool {
	if b, ok := s.peek(); !ok || b != c {
		return false
	}
	s.i++
	return true
}

// value cuts out the next value after whitespace: its bytes and the part's offset of them. A
// string ends at its closing quote, an object or array at the bracket that closes it (brackets in
// strings aside), anything else at the next byte that cannot be in a literal. It fails only on the
// end of the part or a byte no value starts with; the value's own validity is its decoder's.
func (s *partScanner) value() ([]byte, int64, bool) {
	c, ok := s.peek()
	if !ok {
		return nil, 0, false
	}
	s.mark = s.i
	switch c {
	case '"':
		s.i++
		ok = s.str()
	case '{', '[':
		ok = s.container()
	case ']', '}', ',', ':':
		ok = false
	default:
		ok = s.literal()
	}
	start := s.mark
	s.mark = -1
	if !ok {
		return nil, 0, false
	}
	return s.buf[start:s.i], s.base + int64(start), true
}

// str moves past the closing quote of a string whose opening quote has been read, eight bytes at
// a time while none of them is a quote or a backslash; a backslash takes the byte after it along.
func (s *partScanner) str() bool {
	for {
		b, i := s.buf[:s.n], s.i
	scan:
		for i < len(b) {
			for ; i+8 <= len(b); i += 8 {
				w := binary.LittleEndian.Uint64(b[i:])
				if hasZeroByte(w^(ones*'"')) || hasZeroByte(w^(ones*'\\')) {
					break
				}
			}
			for ; i < len(b); i++ {
				switch b[i] {
				case '"':
					s.i = i + 1
					return true
				case '\\':
					if i+1 == len(b) {
						break scan // at the window's end: read on from the backslash
					}
					i += 2
					continue scan
				}
			}
		}
		s.i = min(i, len(b))
		if !s.more() {
			return false
		}
	}
}

// Masks for str's eight bytes at a time.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasZeroByte reports whether a byte of w is zero; a false report of one is possible only above a
// true one, which str's byte loop after it finds.
func hasZeroByte(w uint64) bool { return (w-ones)&^w&highs != 0 }

// container moves past the bracket that closes the object or array at the read position.
func (s *partScanner) container() bool {
	depth := 0
	for {
		for s.i < s.n {
			c := s.buf[s.i]
			s.i++
			switch c {
			case '"':
				if !s.str() {
					return false
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return true
				}
			}
		}
		if !s.more() {
			return false
		}
	}
}

// literal moves past a number, true, false or null (or bytes that pretend to be one).
func (s *partScanner) literal() bool {
	for {
		for s.i < s.n {
			switch s.buf[s.i] {
			case ' ', '\t', '\n', '\r', ',', ']', '}', ':', '[', '{', '"':
				return true
			}
			s.i++
		}
		if !s.more() {
			return true
		}
	}
}

// end reports whether only whitespace is left.
func (s *partScanner) end() bool {
	_, ok := s.peek()
	return !ok && s.err == nil
}
