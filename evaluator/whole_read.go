package evaluator

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The part reader of the local whole-store check: a part is cut by partScanner into its top-level
// members and, when records is an array, its records one by one; each cut is read strictly
// afterwards (the records a batch at a time, by the pull reader or else jsontree, whole_lex.go;
// the header once, by jsontree), so a part is read once and only one batch of records is held
// however large it is.

// errSyntax stands for a part that is not strict JSON, or not an object: the service answers
// such a body with export_required.
var errSyntax = errors.New("whole-store check: not an export")

// errRestart is what reading a part says when a member follows its records array: the records
// were read under a header that was not yet whole, and the check starts again knowing every
// part's header (wholeRun.prepass).
var errRestart = errors.New("whole-store check: a member follows the records")

// partHooks receive a part as it is read: at (which says whether the records array is about to
// be read and whether it is empty) once the records array begins, every record's bytes and where
// they lie, and done once the array ends. Before a record is cut out, direct (when set) may read
// records from the scanner's window itself, leaving the scanner after the last and saying how
// many (0: none, the record is cut out and given to record). A hook's error stops the reading.
type partHooks struct {
	at     func(hdr *wholeHeader, empty bool) error
	record func(raw []byte, at int64) error
	direct func(s *partScanner) (int, error)
	done   func() error
}

// readTop reads one part through s: its members into hdr, its records through h (nil: the
// records are cut out and skipped). It returns errSyntax for a part whose text between the values
// is not strict JSON, errRestart when a member follows the records array, or a hook's error.
func readTop(s *partScanner, hdr *wholeHeader, h *partHooks) error {
	if !s.punct('{') {
		return errSyntax
	}
	names := map[string]bool{}
	after := false
	for first := true; ; first = false {
		c, ok := s.peek()
		if !ok {
			return errSyntax
		}
		if c == '}' && first {
			s.i++
			break
		}
		if !first {
			if c == '}' {
				s.i++
				break
			}
			if c != ',' {
				return errSyntax
			}
			s.i++
		}
		if c, ok := s.peek(); !ok || c != '"' {
			return errSyntax
		}
		raw, _, ok := s.value()
		if !ok {
			return errSyntax
		}
		name, err := jsontext.AppendUnquote(nil, raw)
		if err != nil || names[string(name)] {
			return errSyntax
		}
		names[string(name)] = true
		if !s.punct(':') {
			return errSyntax
		}
		if c, ok := s.peek(); ok && c == '[' && string(name) == "records" {
			hdr.array = true
			if err := readRecords(s, hdr, h); err != nil {
				return err
			}
			continue
		}
		v, _, ok := s.value()
		if !ok {
			return errSyntax
		}
		if hdr.array {
			after = true
		}
		hdr.names, hdr.raw[string(name)] = append(hdr.names, string(name)), bytes.Clone(v)
	}
	if !s.end() {
		return errSyntax
	}
	if after {
		return errRestart
	}
	return nil
}

// readRecords reads the records array, one element at a time.
func readRecords(s *partScanner, hdr *wholeHeader, h *partHooks) error {
	s.i++ // '['
	c, ok := s.peek()
	if !ok {
		return errSyntax
	}
	if h != nil {
		if err := h.at(hdr, c == ']'); err != nil {
			return err
		}
	}
	n := 0
	if c == ']' {
		s.i++
	} else {
		for {
			k := 0
			if h != nil && h.direct != nil {
				var err error
				if k, err = h.direct(s); err != nil {
					return err
				}
			}
			if k == 0 {
				raw, at, ok := s.value()
				if !ok {
					return errSyntax
				}
				if h != nil {
					if err := h.record(raw, at); err != nil {
						return err
					}
				}
				k = 1
			}
			n += k
			if c, ok := s.peek(); ok && c == ']' {
				s.i++
				break
			}
			if !s.punct(',') {
				return errSyntax
			}
		}
	}
	hdr.records = n
	if h != nil {
		return h.done()
	}
	return nil
}

// wholeHeader is one part's top-level members but its records: the raw bytes of each, in order,
// and what stands where the records are.
type wholeHeader struct {
	names   []string
	raw     map[string][]byte
	array   bool // records is an array (its elements were streamed)
	records int
}

func newWholeHeader() *wholeHeader { return &wholeHeader{raw: map[string][]byte{}} }

// agreeing are the members whose values must be the same in every part.
var agreeing = []string{"family", "form", "variant", "manifest"}

// differs names the first member of agreeing on which h and o disagree ("" when none): values
// are compared in their canonical form, so member order and spacing do not matter.
func (h *wholeHeader) differs(o *wholeHeader) string {
	for _, m := range agreeing {
		a, aok := h.raw[m]
		b, bok := o.raw[m]
		if aok != bok || (aok && !bytes.Equal(canonicalJSON(a), canonicalJSON(b))) {
			return m
		}
	}
	return ""
}

// same reports whether h and o are the same members with the same bytes (a part read twice).
func (h *wholeHeader) same(o *wholeHeader) bool {
	if !slices.Equal(h.names, o.names) || h.array != o.array {
		return false
	}
	for _, m := range h.names {
		if !bytes.Equal(h.raw[m], o.raw[m]) {
			return false
		}
	}
	return true
}

func canonicalJSON(raw []byte) []byte {
	v := jsontext.Value(bytes.Clone(raw))
	if v.Canonicalize() != nil {
		return raw
	}
	return v
}

// top writes the header as an export whose records member is the concatenation of recs (no
// records member when recs is empty, unless the part's was not an array, which is then written as
// it was).
func (h *wholeHeader) top(recs ...[]byte) []byte {
	n := 2
	for _, r := range recs {
		n += len(r)
	}
	for _, m := range h.names {
		n += len(m) + len(h.raw[m]) + 8
	}
	b := make([]byte, 1, n+16)
	b[0] = '{'
	for _, m := range h.names {
		b = appendMember(b, m, h.raw[m])
	}
	if h.array && len(recs) > 0 {
		b, _ = jsontext.AppendQuote(b, "records")
		b = append(b, ':')
		for _, r := range recs {
			b = append(b, r...)
		}
		b = append(b, ',')
	}
	if len(b) == 1 {
		return append(b, '}')
	}
	b[len(b)-1] = '}'
	return b
}

func appendMember(b []byte, name string, raw []byte) []byte {
	b, _ = jsontext.AppendQuote(b, name)
	b = append(b, ':')
	b = append(b, raw...)
	return append(b, ',')
}

// jsontextDepth is the nesting depth jsontext's decoder accepts: a value nested deeper is not
// JSON to it, while one within it but deeper than the criteria's limit is an export the service
// refuses for its depth. The check tells the two apart the way its first reader did.
const jsontextDepth = 10000

// decodeFailure sorts out why body did not decode under the criteria's depth limit: errSyntax
// when it is not JSON at all, errTooDeep when it is only too deep.
func decodeFailure(body []byte) error {
	var s jsontree.Slabs
	if _, err := jsontree.Decode(body, jsontree.Options{MaxDepth: jsontextDepth}, &s); err != nil {
		return errSyntax
	}
	return errTooDeep
}

// errTooDeep is a part nested deeper than the criteria allow: refused with export_required, but
// in its turn among the parts' refusals rather than at once like a part that is not JSON.
var errTooDeep = errors.New("whole-store check: nested too deep")

// errPartChanged is the error of a part whose bytes are no longer where the first read found them.
var errPartChanged = errors.New("the part changed while it was read")

// partError is the static error of a part that cannot be read.
func partError(name string, err error) error {
	return fmt.Errorf("whole-store check: part %s: %w", name, err)
}

// readError turns what reading part p met into a refusal or an error.
func readError(p WholePart, err error) (*WholeRefusal, error) {
	switch {
	case err == nil:
		return nil, nil
	case errors.Is(err, errSyntax), errors.Is(err, errTooDeep):
		return &WholeRefusal{Part: p.Name, Refusal: newRefusal("export_required")}, nil
	case errors.Is(err, rules.ErrRuleFailed):
		return nil, err
	}
	return nil, partError(p.Name, err)
}

// readPart opens p and reads it through h into hdr, with buf as the scanner's window. size, when
// not nil, is told the part's size in bytes when the reader knows it (a regular file, or a reader
// with a Size method such as io.SectionReader), -1 otherwise.
func readPart(p WholePart, hdr *wholeHeader, h *partHooks, buf []byte, size *int64) ([]byte, error) {
	rc, err := p.Open()
	if err != nil {
		return buf, partError(p.Name, err)
	}
	defer rc.Close()
	if size != nil {
		*size = -1
		switch r := rc.(type) {
		case interface{ Stat() (fs.FileInfo, error) }:
			if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
				*size = fi.Size()
			}
		case interface{ Size() int64 }:
			*size = r.Size()
		}
	}
	s := newPartScanner(rc, buf)
	err = readTop(s, hdr, h)
	if s.err != nil && (err == nil || errors.Is(err, errSyntax)) {
		return s.buf, partError(p.Name, s.err)
	}
	return s.buf, err
}

// reread hands the records of part p at the places at (sorted, with their lengths n) to record,
// in order: by ReadAt when the part can, otherwise by reading it through once more. Bytes that
// are not there any more are errPartChanged.
func reread(p WholePart, at []int64, n []uint32, record func(k int, raw []byte) error) error {
	rc, err := p.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	var buf []byte
	ra, _ := rc.(io.ReaderAt)
	var pos int64
	for k := range at {
		buf = slices.Grow(buf[:0], int(n[k]))[:n[k]]
		if ra != nil {
			if _, err := ra.ReadAt(buf, at[k]); err != nil {
				return errPartChanged
			}
		} else {
			if _, err := io.CopyN(io.Discard, rc, at[k]-pos); err != nil {
				return errPartChanged
			}
			if _, err := io.ReadFull(rc, buf); err != nil {
				return errPartChanged
			}
			pos = at[k] + int64(n[k])
		}
		if err := record(k, buf); err != nil {
			return err
		}
	}
	return nil
}
