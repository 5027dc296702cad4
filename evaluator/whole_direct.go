package evaluator

import (
	"unicode/utf8"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonlex"
)

// The direct read: while a part's batches take the fast read (wholeFold.fast), the pull reader
// reads a run of records straight from the splitter's window, where they lie, instead of the
// splitter first cutting each record out and copying it into a batch that the pull reader then
// reads again. Each byte of such a record is read once, by the strict reader.
//
// A run is at most lexBatchRecords records that lie whole in a slice of the window: the byte
// before the run's first record is overwritten with '[' for the time of the read (the splitter
// always keeps one byte there), so that the records and the commas between them read as an
// array, checked as strictly as the batch's. The slice ends where the window's bytes end, or
// sooner; a record that crosses its end fails to read, and the run ends with the record before
// it: the next run starts at that record, with the window refilled. Only the records that read
// whole and pass every record-level rule the fast read checks are recorded (flushLex, as a
// batch); the splitter then goes on after the last of them, checking the comma or the bracket
// after it itself. When not even the run's first record reads (a record the rules may refuse,
// a text that is not strict JSON, a record larger than the window), the direct read gives up:
// the splitter cuts the records as before, and the batch they form takes the fast read or the
// tree path, whose answer is the one it always was.

// directBytes bounds the slice of the window one run is read from: about a batch of the
// benchmark's records, so that the UTF-8 check of the slice (jsonlex.Reader.Reset) reads few
// bytes beyond the run's. A variable, so that the tests can make records cross its end often.
var directBytes = lexBatchRecords * 320

// direct reads a run of part i's records from the window at the splitter's read position, records
// them, and leaves the splitter after the last; it returns how many it read (0: none, the
// splitter cuts the next record itself).
func (f *wholeFold) direct(i int, s *partScanner) (int, error) {
	st := &f.parts[i]
	if !f.fast || st.mode != evaluate || len(st.fails) > 0 || len(f.b.ends) > 0 {
		return 0, nil
	}
	if _, ok := s.peek(); !ok {
		return 0, nil
	}
	for s.n-s.i < directBytes && s.more() {
	}
	n, end := f.fromWindow(s, min(s.n, s.i+directBytes))
	if n == 0 && (s.i+directBytes < s.n || !s.eof) {
		// The first record may be longer than the slice: once more over a full window.
		for !s.eof && s.n < len(s.buf) && s.more() {
		}
		n, end = f.fromWindow(s, s.n)
	}
	if n == 0 || int(f.ord)+n > maxOrdinals {
		return 0, nil
	}
	w, from := &f.lex, s.i-1
	for k := range w.recs {
		lr := &w.recs[k]
		f.idx.at.add(s.base + int64(from+lr.from))
		f.idx.size.add(uint32(lr.to - lr.from))
	}
	f.b.first, f.b.ord = int(f.ord-f.idx.firsts[i]), f.ord
	f.ord += uint32(n)
	if err := f.flushLex(st); err != nil {
		return 0, err
	}
	s.i = from + end
	return n, nil
}

// fromWindow reads the records of the window from the read position up to about end (cut back to a
// character's start), as an array whose opening bracket stands in the byte before them. It
// returns how many records read whole and passed (f.lex.recs holds them), and where the last of
// them ends in the text read.
func (f *wholeFold) fromWindow(s *partScanner, end int) (int, int) {
	from := s.i - 1
	if from < 0 {
		return 0, 0
	}
	end = runeStart(s.buf[:end], end)
	keep := s.buf[from]
	s.buf[from] = '['
	n, last := f.lex.readRun(s.buf[from:end], f.depth-1)
	s.buf[from] = keep
	return n, last
}

// readRun reads the records of text, an array's opening bracket and then records separated by
// commas, up to lexBatchRecords of them, stopping before the first that does not read whole or
// does not pass; it returns how many read, and where the last ends. The depth is one less than
// the batch's, whose records lie in an object's array.
func (w *wholeLex) readRun(text []byte, depth int) (int, int) {
	r := &w.r
	w.reset(text, depth)
	r.Array()
	end := 0
	for len(w.recs) < lexBatchRecords && r.More() && r.Peek() == jsonlex.Object {
		w.recs = append(w.recs, lexRec{})
		lr := &w.recs[len(w.recs)-1]
		if !w.record(lr) {
			w.recs = w.recs[:len(w.recs)-1]
			break
		}
		end = lr.to
	}
	return len(w.recs), end
}

// runeStart is end, or the start of the character that b[:end] ends inside of.
func runeStart(b []byte, end int) int {
	for k := end - 1; k >= 0 && k >= end-utf8.UTFMax+1; k-- {
		c := b[k]
		switch {
		case c < utf8.RuneSelf:
			return end
		case c >= 0xC0: // a leading byte
			need := 2
			if c >= 0xF0 {
				need = 4
			} else if c >= 0xE0 {
				need = 3
			}
			if end-k < need {
				return k
			}
			return end
		}
	}
	return end
}
