//go:build !(js && wasm)

// The signing side. It is kept out of the WebAssembly build of the web page, which verifies only
// (Verify, Message), so that the page's module does not carry it.

package sign

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf16"

	"github.com/go-json-experiment/json/jsontext"
)

// canonicalHint sizes the next canonical form's buffer (the last one's length plus an eighth), so
// that a report is written without regrowing and signed in place. It is only a size: shared by
// every Signer (a process has one), and kept out of the Signer type, which the web page's
// WebAssembly build also has.
var canonicalHint atomic.Int64

// docs holds the buffers of signed documents that have been written out (Recycle), so that the
// next report is written and signed in one of them instead of a new one: a max-size report's
// buffer is about 125 KB, a fifth of what a server request allocates, and what a request
// allocates is what paces the garbage collector.
var docs sync.Pool // of *[]byte

// Recycle gives back the buffer of a document Sign returned, once nothing reads it any more (its
// answer has been written: an io.Writer keeps no reference to what it was given). The next
// Canonicaler signed may be written into it. It is cleared first, as an audited body's buffer is:
// an idle buffer holds no report, whose ids and scopes are the export's.
func Recycle(doc []byte) {
	if cap(doc) == 0 {
		return
	}
	clear(doc[:cap(doc)])
	doc = doc[:0]
	docs.Put(&doc)
}

// docBuffer is an empty buffer with room for n bytes, a recycled one when one is that large.
func docBuffer(n int) []byte {
	if p, ok := docs.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// Canonicaler is a result that writes its own JCS form and knows where the signature member goes
// in it (the audit report does, so that signing it neither parses nor scans what it just wrote).
// AppendCanonicalPlaced appends the canonical form and returns the place of a top-level member
// named member: the offset of the comma before the first member sorting after it (or of the
// closing brace), or just after the opening brace when it sorts first; -1 when the result already
// has such a member. Its members are fixed by its type, so writing it cannot fail: the signer
// writes it only when it signs (see Canonicalize).
type Canonicaler interface {
	AppendCanonicalPlaced(b []byte, member string) ([]byte, int)
}

// canonical is Canonical for signing any value: it is marshalled and canonicalized in place
// (RFC 8785 by jsontext: the bytes Canonical gives, which Verify keeps checking with the JCS
// reference).
func canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sign: marshal: %w", err)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("sign: %w", ErrNotJSON)
	}
	out := jsontext.Value(raw)
	if err := out.Canonicalize(); err != nil {
		return nil, errors.New("sign: canonicalize failed") // errors may quote input: keep them out
	}
	return out, nil
}

// Sign returns the signed document of v: JCS(v ∪ {"signature": block}). It is Canonicalize
// followed by Unsigned.Sign.
func (s *Signer) Sign(v any) ([]byte, error) {
	u, err := s.Canonicalize(v)
	if err != nil {
		return nil, err
	}
	return u.Sign(), nil
}

// Unsigned is a result checked and ready to be signed: everything that can fail about signing it
// has been done, so a caller can commit other work (a ledger row) before the signature is
// computed, or while it is.
type Unsigned struct {
	s    *Signer
	c    Canonicaler // written when signed; nil when body holds the canonical form already
	body []byte      // the canonical form of the result, the signed message
	at   int         // where the signature member goes in body
}

// Canonicalize makes v ready to be signed. A Canonicaler cannot fail, so it is only kept: its
// canonical form is written by Sign, on whatever goroutine signs (the server signs while the
// ledger row commits). Any other value is marshalled and canonicalized here, and the signature's
// place found in it: the place JCS orders it (members sorted by their UTF-16 code units), which
// gives the same bytes as canonicalizing the whole signed document again.
func (s *Signer) Canonicalize(v any) (*Unsigned, error) {
	if c, ok := v.(Canonicaler); ok {
		return &Unsigned{s: s, c: c}, nil
	}
	body, err := canonical(v)
	if err != nil {
		return nil, err
	}
	at, err := signatureOffset(body)
	if err != nil {
		return nil, err
	}
	return &Unsigned{s: s, body: body, at: at}, nil
}

// memberLen is the length of the signature member this signer writes: its strings have fixed
// lengths (the key id, the base64 of 64 bytes).
func (s *Signer) memberLen() int {
	return len(s.member(make([]byte, ed25519.SignatureSize)))
}

// member is the signature member for sig. The block's strings (the algorithm, a key id of hex
// digits, standard base64) need no escaping in JCS, and its members are written in their
// canonical order.
func (s *Signer) member(sig []byte) string {
	return `"` + Member + `":{"alg":"` + Alg + `","key_id":"` + s.id + `","value":"` +
		base64.StdEncoding.EncodeToString(sig) + `"}`
}

// Sign signs the canonical form and returns the signed document, spliced in place into the
// canonical form's buffer (which it owns from here). It is called once, from any goroutine.
//
// A Canonicaler is written here, into a buffer of about the size hint with room for the member
// (a recycled one when there is one that large), so that the signature is spliced in place. A
// Canonicaler that already has a member named "signature" is a defect of its type, never of an
// input: Sign panics.
func (u *Unsigned) Sign() []byte {
	body, at := u.body, u.at
	if u.c != nil {
		body, at = u.c.AppendCanonicalPlaced(docBuffer(int(canonicalHint.Load())+u.s.memberLen()+1), Member)
		if at < 1 || len(body) < 2 || body[0] != '{' {
			panic("sign: a result type writes no object, or a member named signature")
		}
		canonicalHint.Store(int64(len(body) + len(body)/8))
	}
	u.body, u.c = nil, nil
	sig := ed25519.Sign(u.s.priv, body)
	member := u.s.member(sig)
	var head, tail string  // what goes before and after the member at body[at]
	if body[at-1] == '{' { // the signature sorts first
		if body[at] != '}' {
			tail = ","
		}
	} else { // after a member; body[at] is the ',' before the next one or the closing '}'
		head = ","
	}
	n := len(head) + len(member) + len(tail)
	out := slices.Grow(body, n)[:len(body)+n] // in place when the hint left room
	copy(out[at+n:], body[at:])
	copy(out[at:], head)
	copy(out[at+len(head):], member)
	copy(out[at+len(head)+len(member):], tail)
	return out
}

// signatureOffset returns where the signature member goes in a canonical object: just after the
// opening brace when it sorts first, else just after the last member that sorts before it. It
// fails when the object already has a signature member. Canonical text has no whitespace, so the
// top-level members are found by a scan that skips strings and nested values; a member name with
// an escape is left to the decoder.
func signatureOffset(canon []byte) (int, error) {
	if len(canon) < 2 || canon[0] != '{' {
		return 0, fmt.Errorf("sign: %w", ErrNotJSON)
	}
	at, i := 1, 1
	for i < len(canon) && canon[i] != '}' {
		if canon[i] == ',' {
			i++
		}
		end := skipString(canon, i)
		if end < 0 || end >= len(canon) || canon[end] != ':' {
			return signatureOffsetDecoded(canon)
		}
		raw := canon[i+1 : end-1]
		if bytes.IndexByte(raw, '\\') >= 0 {
			return signatureOffsetDecoded(canon)
		}
		if string(raw) == Member {
			return 0, errors.New("sign: result already has a signature member")
		}
		if i = skipValue(canon, end+1); i < 0 {
			return signatureOffsetDecoded(canon)
		}
		if !utf16Less(string(raw), Member) {
			break
		}
		at = i
	}
	return at, nil
}

// skipString returns the index just after the string starting at b[i], or -1.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			if i = skipString(b, i); i < 0 {
				return -1
			}
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a scalar at the container's close
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	if depth == 0 {
		return i
	}
	return -1
}

// signatureOffsetDecoded is signatureOffset by the JSON decoder.
func signatureOffsetDecoded(canon []byte) (int, error) {
	d := jsontext.NewDecoder(bytes.NewReader(canon))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return 0, fmt.Errorf("sign: %w", ErrNotJSON)
	}
	at := int(d.InputOffset()) // after '{'
	for d.PeekKind() != '}' {
		t, err := d.ReadToken()
		if err != nil {
			return 0, fmt.Errorf("sign: %w", ErrNotJSON)
		}
		name := t.String()
		if name == Member {
			return 0, errors.New("sign: result already has a signature member")
		}
		if err := d.SkipValue(); err != nil {
			return 0, fmt.Errorf("sign: %w", ErrNotJSON)
		}
		if !utf16Less(name, Member) {
			break
		}
		at = int(d.InputOffset()) // after this member's value
	}
	return at, nil
}

// utf16Less orders member names as JCS does: by their UTF-16 code units.
func utf16Less(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}
