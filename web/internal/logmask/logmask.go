// Package logmask prepares a mutation log (memory-forget-envelope/v1, docs/forget-envelope.md)
// for the page's private pre-check: every key name, scope value, principal id, envelope entry and
// grant value becomes a salted pseudonym on the visitor's machine, and members the audit never
// reads are dropped, so no identifier leaves it.
//
// The pseudonyms keep exactly the relations the rule set reads, so the masked log gets the same
// refusal, pre-check and audit as the original: equal strings stay equal and different strings
// different (principal ids and raw keys compare exactly); strings whose canonical forms
// (trim_ascii_space, ascii_lower: FE-R-12) are equal keep equal canonical forms and strings whose
// canonical forms differ keep different ones (slots, grants, aliases: FE-R-13, FE-R-23); the empty
// string stays empty and a string that trims to empty is kept as is (it carries only blanks).
// A pseudonym is 52 letters: its lower-case form is keyed by the canonical form, its upper-case
// pattern by the exact string. Number text, booleans, nulls, member order, the scope dimension
// names (printed in the report) and the published words (format, forget_mode, op,
// reinsert_identity, forget_semantics) pass through unchanged.
//
// A log the service would refuse under export_required (FE-R-3: not one JSON object, a byte-order
// mark, trailing data, a duplicate member name, a lone-surrogate escape, deeper than 64) is refused
// here, before anything is prepared, because masking would hide what makes it malformed.
package logmask

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxDepth is the published nesting limit (caps.json_depth; arrays and objects, top level 1).
const MaxDepth = 64

// Summary says what was masked: counts only.
type Summary struct {
	Events      int // entries of events (when it is an array)
	Masked      int // distinct strings replaced by pseudonyms
	Dropped     int // members the audit does not read, dropped (caller and unknown members)
	ScopeLabels int // scope dimension names kept (they are printed in the report)
}

// node is one JSON value with its member order and number text kept.
type node struct {
	kind    byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	str     string
	num     json.Number
	boolean bool
	keys    []string
	vals    []*node
}

// ErrNotJSON and the errors below are the local refusals, each the reason the service would
// refuse the log under export_required.
var (
	ErrNotJSON   = errors.New("the log is not one JSON value (export_required)")
	ErrBOM       = errors.New("the log starts with a byte-order mark (export_required)")
	ErrNotObject = errors.New("the log is not a JSON object (export_required)")
	ErrDuplicate = errors.New("an object of the log has a duplicate member name (export_required)")
	ErrSurrogate = errors.New("a string of the log has a lone-surrogate escape (export_required)")
	ErrNotUTF8   = errors.New("the log is not UTF-8 text (export_required)")
)

// Mask returns the masked log and what was masked. The salt keys the pseudonyms: the page draws a
// fresh one for each preparation and keeps it in the tab.
func Mask(data, salt []byte) ([]byte, Summary, error) {
	var sum Summary
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, sum, ErrBOM
	}
	if !utf8.Valid(data) {
		return nil, sum, ErrNotUTF8
	}
	if loneSurrogate(data) {
		return nil, sum, ErrSurrogate
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := parse(dec, 1)
	if err != nil {
		return nil, sum, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, sum, ErrNotJSON
	}
	if root.kind != 'o' {
		return nil, sum, ErrNotObject
	}
	m := &masker{salt: salt, seen: map[string]bool{}}
	out := m.top(root)
	sum.Masked, sum.Dropped, sum.ScopeLabels = len(m.seen), m.dropped, m.labels
	if ev := root.get("events"); ev != nil && ev.kind == 'a' {
		sum.Events = len(ev.vals)
	}
	var buf bytes.Buffer
	write(&buf, out)
	return buf.Bytes(), sum, nil
}

func parse(dec *json.Decoder, depth int) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, ErrNotJSON
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth > MaxDepth {
			return nil, fmt.Errorf("the log nests deeper than %d levels (export_required)", MaxDepth)
		}
		n := &node{kind: 'a'}
		if t == '{' {
			n.kind = 'o'
		}
		seen := map[string]bool{}
		for dec.More() {
			if n.kind == 'o' {
				k, err := dec.Token()
				if err != nil {
					return nil, ErrNotJSON
				}
				name, _ := k.(string)
				if seen[name] {
					return nil, ErrDuplicate
				}
				seen[name] = true
				n.keys = append(n.keys, name)
			}
			v, err := parse(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, ErrNotJSON
		}
		return n, nil
	case string:
		return &node{kind: 's', str: t}, nil
	case json.Number:
		return &node{kind: 'n', num: t}, nil
	case bool:
		return &node{kind: 'b', boolean: t}, nil
	case nil:
		return &node{kind: 'z'}, nil
	}
	return nil, ErrNotJSON
}

func (n *node) get(name string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for i, k := range n.keys {
		if k == name {
			return n.vals[i]
		}
	}
	return nil
}

// loneSurrogate reports a \uD800–\uDFFF escape that is not half of a pair (encoding/json would
// silently turn it into U+FFFD, and the pseudonym would hide it).
func loneSurrogate(data []byte) bool {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range data[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' || i+1 >= len(data) {
			continue
		}
		if data[i+1] != 'u' {
			i++ // an escaped character (\\, \", ...) never starts an escape
			continue
		}
		r, ok := hex4(i)
		if !ok {
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := hex4(i + 6); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				i += 11
				continue
			}
			return true
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		}
		i += 5
	}
	return false
}

type masker struct {
	salt    []byte
	seen    map[string]bool
	dropped int
	labels  int
}

// canonical is FE-R-12: trim ASCII blanks, then map A-Z to a-z only.
func canonical(s string) string {
	s = strings.Trim(s, " \t\n\r")
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// pseudonym is 52 letters: lower-case letters keyed by the canonical form, upper-cased where the
// exact string's key says so.
func (m *masker) pseudonym(s string) string {
	c := canonical(s)
	if s == "" || c == "" {
		return s
	}
	m.seen[s] = true
	mac := func(tag, v string) []byte {
		h := hmac.New(sha256.New, m.salt)
		h.Write([]byte(tag))
		h.Write([]byte(v))
		return h.Sum(nil)
	}
	letters := append(mac("canonical/1\x00", c), mac("canonical/2\x00", c)...)
	upper := mac("exact\x00", s)
	out := make([]byte, 52)
	for i := range out {
		out[i] = 'a' + letters[i]%26
		if upper[i/8]>>(i%8)&1 == 1 {
			out[i] -= 'a' - 'A'
		}
	}
	return string(out)
}

func (m *masker) str(n *node, keep ...string) *node {
	if n.kind != 's' {
		return m.any(n)
	}
	for _, k := range keep {
		if n.str == k {
			return n
		}
	}
	return &node{kind: 's', str: m.pseudonym(n.str)}
}

// any masks a value in a place whose shape the rule set does not define (it will be refused, or
// it is a member's value of the wrong type): every string and member name becomes a pseudonym.
func (m *masker) any(n *node) *node {
	switch n.kind {
	case 's':
		return &node{kind: 's', str: m.pseudonym(n.str)}
	case 'a':
		out := &node{kind: 'a'}
		for _, v := range n.vals {
			out.vals = append(out.vals, m.any(v))
		}
		return out
	case 'o':
		out := &node{kind: 'o'}
		for i, k := range n.keys {
			out.keys = append(out.keys, m.pseudonym(k))
			out.vals = append(out.vals, m.any(n.vals[i]))
		}
		return out
	}
	return n
}

// object keeps the named members, masked by their function, and drops every other member.
func (m *masker) object(n *node, members map[string]func(*node) *node) *node {
	if n.kind != 'o' {
		return m.any(n)
	}
	out := &node{kind: 'o'}
	for i, k := range n.keys {
		f, ok := members[k]
		if !ok {
			m.dropped++
			continue
		}
		out.keys = append(out.keys, k)
		out.vals = append(out.vals, f(n.vals[i]))
	}
	return out
}

func (m *masker) array(n *node, each func(*node) *node) *node {
	if n.kind != 'a' {
		return m.any(n)
	}
	out := &node{kind: 'a'}
	for _, v := range n.vals {
		out.vals = append(out.vals, each(v))
	}
	return out
}

// scope masks a scope object or a grant: its member names are dimension names (kept, as the
// report prints them; an undeclared one is refused either way), its values are masked.
func (m *masker) scope(n *node) *node {
	if n.kind != 'o' {
		return m.any(n)
	}
	out := &node{kind: 'o', keys: n.keys}
	for _, v := range n.vals {
		out.vals = append(out.vals, m.str(v))
	}
	return out
}

func keep(n *node) *node { return n }

func (m *masker) top(root *node) *node {
	key := func(n *node) *node {
		return m.object(n, map[string]func(*node) *node{"scope": m.scope, "name": func(v *node) *node { return m.str(v) }})
	}
	text := func(v *node) *node { return m.str(v) }
	event := func(n *node) *node {
		return m.object(n, map[string]func(*node) *node{
			"seq": keep, "version": keep, "authority_checked": keep,
			"op":  func(v *node) *node { return m.str(v, "write", "forget", "reopen", "reassign") },
			"key": key, "session": m.scope, "principal": text, "to": text,
			"envelope": func(v *node) *node { return m.array(v, text) },
		})
	}
	principal := func(n *node) *node {
		return m.object(n, map[string]func(*node) *node{"id": text, "grants": func(v *node) *node { return m.array(v, m.scope) }})
	}
	return m.object(root, map[string]func(*node) *node{
		"format":      func(v *node) *node { return m.str(v, "mutation-log") },
		"forget_mode": func(v *node) *node { return m.str(v, "transitional", "terminal") },
		"scope_dimensions": func(v *node) *node {
			if v.kind == 'a' {
				m.labels += len(v.vals)
				return v // the labels of the scope parts: printed in the report, never masked
			}
			return m.any(v)
		},
		"reinsert_identity": func(v *node) *node { return m.str(v, "new_key") },
		"forget_semantics":  func(v *node) *node { return m.str(v, "tombstone_only") },
		"principals":        func(v *node) *node { return m.array(v, principal) },
		"events":            func(v *node) *node { return m.array(v, event) },
		"snapshot": func(v *node) *node {
			return m.array(v, func(n *node) *node { return m.object(n, map[string]func(*node) *node{"key": key, "version": keep}) })
		},
	})
}

func write(buf *bytes.Buffer, n *node) {
	switch n.kind {
	case 'o':
		buf.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			b, _ := json.Marshal(k)
			buf.Write(b)
			buf.WriteByte(':')
			write(buf, n.vals[i])
		}
		buf.WriteByte('}')
	case 'a':
		buf.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				buf.WriteByte(',')
			}
			write(buf, v)
		}
		buf.WriteByte(']')
	case 's':
		b, _ := json.Marshal(n.str)
		buf.Write(b)
	case 'n':
		buf.WriteString(n.num.String())
	case 'b':
		if n.boolean {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	default:
		buf.WriteString("null")
	}
}
