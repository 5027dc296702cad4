package evaluator

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The streaming reader of the local whole-store check: a part is read through jsontext's strict
// decoder (duplicate names and UTF-8 checked, as jsontree.Decode checks them) one top-level member
// at a time, and the records array one element at a time, so that only one record's bytes are
// held however large the part is. Pass 1 alone tokenizes a part: it notes where each record's
// bytes lie, and pass 2 reads them from there without tokenizing again (readSpans).

// errSyntax stands for a part that is not strict JSON, or not an object: the service answers
// such a body with export_required.
var errSyntax = errors.New("whole-store check: not an export")

// ioReader remembers the error of the reader beneath, to tell a read failure from bad JSON.
type ioReader struct {
	r   io.Reader
	err error
}

func (r *ioReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// scanHooks receive a part's top-level members as they come: every member but an array of
// records as its raw bytes (member, which keeps them), and each element of the records array as
// what m read of it and where its bytes lie (record). records is asked, when the records array
// begins, whether to read it; when it says no the array is skipped.
type scanHooks struct {
	member  func(name string, raw []byte)
	records func() bool
	record  func(i int, at int64, size int) error
	m       *recordMembers // reads each element; the records hook sets its content field
	idx     *wholeIndex    // whose seeds m hashes with
}

// scanPart reads one part through h. It returns the records read, errSyntax for a part that is not
// strict JSON or not an object, a read error, or the first error of h.record.
func scanPart(r io.Reader, h scanHooks) (int, error) {
	src := &ioReader{r: r}
	d := jsontext.NewDecoder(src)
	n, err := scanTop(d, h)
	if err != nil && src.err != nil {
		return n, src.err
	}
	return n, err
}

func scanTop(d *jsontext.Decoder, h scanHooks) (int, error) {
	tok, err := d.ReadToken()
	if err != nil || tok.Kind() != '{' {
		return 0, errSyntax
	}
	n := 0
	for {
		tok, err := d.ReadToken()
		if err != nil {
			return n, errSyntax
		}
		if tok.Kind() == '}' {
			break
		}
		name := tok.String()
		if name == "records" && d.PeekKind() == '[' {
			if !h.records() {
				if d.SkipValue() != nil {
					return n, errSyntax
				}
				continue
			}
			if n, err = streamRecords(d, h); err != nil {
				return n, err
			}
			continue
		}
		v, err := d.ReadValue()
		if err != nil {
			return n, errSyntax
		}
		h.member(name, bytes.Clone(v))
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return n, errSyntax
	}
	return n, nil
}

// streamRecords reads the records array, one element at a time.
func streamRecords(d *jsontext.Decoder, h scanHooks) (int, error) {
	if _, err := d.ReadToken(); err != nil {
		return 0, errSyntax
	}
	n := 0
	for d.PeekKind() != ']' {
		at, size, err := h.m.read(d, h.idx)
		if err != nil {
			return n, errSyntax
		}
		if err := h.record(n, at, size); err != nil {
			return n, err
		}
		n++
	}
	if _, err := d.ReadToken(); err != nil {
		return n, errSyntax
	}
	return n, nil
}

// wholeHeader is one part's top-level members but its records: the raw bytes of each, in order,
// and what stands where the records are.
type wholeHeader struct {
	names   []string
	raw     map[string][]byte
	array   bool // records is an array (its elements were streamed)
	records int
}

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

// str is a header member's string value ("" when absent or not a string).
func (h *wholeHeader) str(name string) string {
	raw, ok := h.raw[name]
	if !ok || jsontext.Value(raw).Kind() != '"' {
		return ""
	}
	var s jsontree.Slabs
	v, err := jsontree.Decode(raw, jsontree.Options{MaxDepth: 1}, &s)
	if err != nil {
		return ""
	}
	return v.Str()
}

// indexPart is pass 1 over one part (see whole.go).
func (idx *wholeIndex) indexPart(ps *rules.ProgramSet, p WholePart, i int) (*WholeRefusal, error) {
	hdr := &wholeHeader{raw: map[string][]byte{}}
	pi := partIndex{dupAt: -1, hdr: hdr}
	m := &recordMembers{}
	retry := false
	hooks := scanHooks{
		member: func(name string, raw []byte) {
			hdr.names, hdr.raw[name] = append(hdr.names, name), raw
		},
		records: func() bool {
			hdr.array = true
			if form, ok := ps.Criteria().Forms[hdr.str("form")]; ok {
				m.field = form.ContentField
				return true
			}
			// The form comes after the records (or is not one): read them again once it is known.
			retry = true
			return false
		},
		record: func(n int, at int64, size int) error {
			pi.spans.add(at, size)
			idx.indexRecord(&pi, n, m)
			return nil
		},
		m: m, idx: idx,
	}
	n, ref, err := readPart(p, hooks)
	if ref != nil || err != nil {
		return ref, err
	}
	if retry {
		if form, ok := ps.Criteria().Forms[hdr.str("form")]; ok {
			m.field = form.ContentField
		}
		hooks.member, hooks.records = func(string, []byte) {}, func() bool { return true }
		if n, ref, err = readPart(p, hooks); ref != nil || err != nil {
			return ref, err
		}
	}
	pi.records, hdr.records = n, n
	idx.parts = append(idx.parts, pi)
	if i == 0 {
		idx.header = hdr
	} else if m := idx.header.differs(hdr); m != "" {
		return nil, fmt.Errorf("whole-store check: part %s: member %s differs from the first part's", p.Name, m)
	}
	return nil, nil
}

// spans are where a part's records lie in its bytes, in order: 12 bytes a record, in chunks.
type spans struct {
	at chunked[int64]
	n  chunked[uint32]
}

func (s *spans) add(at int64, n int) {
	s.at.add(at)
	s.n.add(uint32(n))
}

// spanBuffer is how much of a part readSpans reads at a time.
const spanBuffer = 256 << 10

// readSpans opens p and hands each record at the places sp notes to record, in order, reading the
// bytes between them without looking at them: pass 1 has tokenized the part already. A part that
// is shorter than pass 1 read is an error, which readError names.
func readSpans(p WholePart, sp *spans, record func(n int, raw []byte) error) error {
	if sp.at.n == 0 {
		return nil
	}
	rc, err := p.Open()
	if err != nil {
		return err // readError names the part
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, spanBuffer)
	var (
		pos int64
		buf []byte
		k   int
	)
	for c, ats := range sp.at.chunks {
		for j, at := range ats {
			n := sp.n.chunks[c][j]
			if _, err := br.Discard(int(at - pos)); err != nil {
				return errPartChanged
			}
			buf = slices.Grow(buf[:0], int(n))[:n]
			if _, err := io.ReadFull(br, buf); err != nil {
				return errPartChanged
			}
			pos = at + int64(n)
			if err := record(k, buf); err != nil {
				return err
			}
			k++
		}
		// Read: let the chunk go, for the kept records and the batches to reuse.
		sp.at.chunks[c], sp.n.chunks[c] = nil, nil
	}
	return nil
}

// errPartChanged is the error of a part whose bytes are no longer where pass 1 read them.
var errPartChanged = errors.New("the part changed while it was read")

// readPart opens p and reads it through h: a part that is not strict JSON is refused
// (export_required), one that cannot be read is an error.
func readPart(p WholePart, h scanHooks) (int, *WholeRefusal, error) {
	rc, err := p.Open()
	if err != nil {
		return 0, nil, partError(p.Name, err)
	}
	defer rc.Close()
	n, err := scanPart(rc, h)
	if err != nil {
		ref, err := readError(p, err)
		return n, ref, err
	}
	return n, nil, nil
}

// readError turns what reading part p met into a refusal or an error.
func readError(p WholePart, err error) (*WholeRefusal, error) {
	switch {
	case err == nil:
		return nil, nil
	case errors.Is(err, errSyntax):
		return &WholeRefusal{Part: p.Name, Refusal: newRefusal("export_required")}, nil
	case errors.Is(err, rules.ErrRuleFailed):
		return nil, err
	}
	return nil, partError(p.Name, err)
}

// indexRecord adds what pass 1 read of one record to the index. A record that is not an object
// adds nothing; one nested too deep is indexed all the same, and pass 2 refuses its part.
func (idx *wholeIndex) indexRecord(pi *partIndex, n int, m *recordMembers) {
	if !m.object {
		return
	}
	if m.hasID {
		idx.idAt.add(idPlace{k: m.id, part: int32(len(idx.parts)), index: int32(n)})
	}
	if m.field != "" {
		idx.keys.add(m.content)
	}
	for _, k := range m.targets {
		v := idx.targets[k] | 1
		if !m.hasID || k != m.id {
			v |= 2 // a record superseding itself is not a target
		}
		idx.targets[k] = v
	}
	if m.hasOrigin {
		idx.pointers[m.origin] = struct{}{}
	}
}
