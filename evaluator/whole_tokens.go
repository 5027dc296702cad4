package evaluator

import (
	"bytes"
	"hash/maphash"

	"github.com/go-json-experiment/json/jsontext"
)

// recordMembers is what pass 1 reads of one record, from jsontext's own tokens as the decoder
// reads them: the record is tokenized once, and neither copied nor lexed again. The members are
// held as keyed hashes, taken while their bytes are still the decoder's.
type recordMembers struct {
	field string // the form's content field ("" when the form is not known)

	object, hasID, hasOrigin bool
	id, content, origin      key128
	targets                  []key128 // supersedes, a string or an array's strings
	buf                      []byte   // unescaping scratch
}

// keyBytes is key for bytes: maphash hashes bytes and the string of the same bytes alike.
func (idx *wholeIndex) keyBytes(b []byte) key128 {
	return key128{maphash.Bytes(idx.s1, b), maphash.Bytes(idx.s2, b)}
}

// str is the value of a string token read as a raw value: its bytes between the quotes, or, when
// it has escapes, unescaped into m.buf.
func (m *recordMembers) str(v jsontext.Value) []byte {
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	out, err := jsontext.AppendUnquote(m.buf[:0], v)
	if err != nil {
		return nil // cannot be: the decoder has checked the string
	}
	m.buf = out
	return out
}

// read reads the next element of the records array through d: an object member by member (the
// members the index needs hashed, the rest skipped), anything else as one value. It returns where
// the element's bytes lie.
func (m *recordMembers) read(d *jsontext.Decoder, idx *wholeIndex) (int64, int, error) {
	m.object, m.hasID, m.hasOrigin, m.content, m.targets = false, false, false, idx.keyBytes(nil), m.targets[:0]
	if d.PeekKind() != '{' {
		v, err := d.ReadValue()
		if err != nil {
			return 0, 0, errSyntax
		}
		// InputOffset is just past the value, which is exactly v's bytes.
		return d.InputOffset() - int64(len(v)), len(v), nil
	}
	if _, err := d.ReadToken(); err != nil {
		return 0, 0, errSyntax
	}
	start := d.InputOffset() - 1 // just past the one-byte '{'
	m.object = true
	for d.PeekKind() != '}' {
		nv, err := d.ReadValue() // the member's name, as a string value
		if err != nil {
			return 0, 0, errSyntax
		}
		if err := m.member(d, idx, m.which(m.str(nv))); err != nil {
			return 0, 0, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return 0, 0, errSyntax
	}
	return start, int(d.InputOffset() - start), nil
}

// The members the index reads.
const (
	otherMember = iota
	idMember
	originMember
	supersedesMember
	contentMember
)

// which names a member (the name's bytes are not kept: the next read may overwrite them).
func (m *recordMembers) which(name []byte) int {
	switch string(name) {
	case "id":
		return idMember
	case "origin_claim_id":
		return originMember
	case "supersedes":
		return supersedesMember
	}
	if m.field != "" && string(name) == m.field {
		return contentMember
	}
	return otherMember
}

// member reads one member's value, hashing it when the index needs it.
func (m *recordMembers) member(d *jsontext.Decoder, idx *wholeIndex, which int) error {
	k := d.PeekKind()
	if which == supersedesMember && k == '[' {
		if _, err := d.ReadToken(); err != nil {
			return errSyntax
		}
		for d.PeekKind() != ']' {
			if d.PeekKind() != '"' {
				if d.SkipValue() != nil {
					return errSyntax
				}
				continue
			}
			v, err := d.ReadValue()
			if err != nil {
				return errSyntax
			}
			m.targets = append(m.targets, idx.keyBytes(m.str(v)))
		}
		if _, err := d.ReadToken(); err != nil {
			return errSyntax
		}
		return nil
	}
	if which == otherMember || k != '"' {
		if d.SkipValue() != nil {
			return errSyntax
		}
		return nil
	}
	v, err := d.ReadValue()
	if err != nil {
		return errSyntax
	}
	key := idx.keyBytes(m.str(v))
	switch which {
	case idMember:
		m.id, m.hasID = key, true
	case originMember:
		m.origin, m.hasOrigin = key, true
	case supersedesMember:
		m.targets = append(m.targets, key)
	default:
		m.content = key
	}
	return nil
}
