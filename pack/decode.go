package pack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// envelope describes the paging facts of one dump file, when it had an envelope.
type envelope struct {
	Key      string // the member that held the items ("" for a bare array or JSON Lines)
	HasCount bool
	Count    int64
	HasNext  bool // the envelope carried a "next" member
	NextNull bool // ... and it was null (last page)
	// Locs holds, per item, where it sits in the file: a JSON pointer ("/3", "/results/3"),
	// "jsonl:N" for the N-th value (1-based) of a JSON Lines file, or "" for a lone object.
	Locs []string
	// Other counts, per member, the items of the envelope's members other than the list and
	// the paging members (count, next, previous): parts of the file not read.
	Other map[string]int
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// decodeValue decodes one JSON document (numbers kept exact). Trailing data is an error.
func decodeValue(data []byte) (any, error) {
	data = bytes.TrimPrefix(data, bom)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errors.New("not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON document")
	}
	return v, nil
}

// readItems reads a dump file as a list of JSON objects. Accepted shapes: a JSON array of
// objects; JSON Lines (one object per line); an object whose member named in keys holds the
// array (a pagination envelope such as {"count", "next", "results"}).
func readItems(f File, keys ...string) ([]map[string]any, envelope, error) {
	var env envelope
	data := bytes.TrimPrefix(f.Data, bom)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var vals []any
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(vals) > 0 {
				return nil, env, fmt.Errorf("pack: %s: line/value %d is not valid JSON", f.Name, len(vals)+1)
			}
			return nil, env, fmt.Errorf("pack: %s: not valid JSON", f.Name)
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil, env, fmt.Errorf("pack: %s: empty file", f.Name)
	}
	if len(vals) > 1 { // JSON Lines
		items, _, err := objects(f.Name, vals)
		env.Locs = locs("jsonl:", 1, len(items))
		return items, env, err
	}
	switch t := vals[0].(type) {
	case []any:
		items, _, err := objects(f.Name, t)
		env.Locs = locs("/", 0, len(items))
		return items, env, err
	case map[string]any:
		for _, k := range keys {
			arr, ok := t[k].([]any)
			if !ok {
				continue
			}
			env.Key = k
			if c, ok := t["count"].(json.Number); ok {
				if n, err := c.Int64(); err == nil {
					env.HasCount, env.Count = true, n
				}
			}
			if nx, ok := t["next"]; ok {
				env.HasNext, env.NextNull = true, nx == nil
			}
			for m, v := range t {
				switch m {
				case k, "count", "next", "previous":
				default:
					if env.Other == nil {
						env.Other = map[string]int{}
					}
					env.Other[m] = max(itemCount(v), 1)
				}
			}
			items, _, err := objects(f.Name, arr)
			env.Locs = locs("/"+pointerToken(k)+"/", 0, len(items))
			return items, env, err
		}
		// One object none of whose envelope members holds an array: JSON Lines of one line.
		// An envelope member holding something else (not a text) is a malformed envelope.
		malformed := false
		for _, k := range keys {
			v, has := t[k]
			_, text := v.(string)
			malformed = malformed || (has && !text)
		}
		if !malformed {
			env.Locs = []string{""}
			return []map[string]any{t}, env, nil
		}
		return nil, env, fmt.Errorf("pack: %s: expected an array, JSON Lines, or an object with one of the members %v holding an array", f.Name, keys)
	}
	return nil, env, fmt.Errorf("pack: %s: expected an array of objects, JSON Lines, or an envelope object", f.Name)
}

// locs returns n locations prefix+(first+i).
func locs(prefix string, first, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(first+i)
	}
	return out
}

// pointerToken escapes one RFC 6901 reference token.
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// SourceBytes returns the exact bytes of the item at loc in a dump file (see envelope.Locs): a
// JSON pointer into the document (into the inner document of a double-encoded file), "jsonl:N",
// or "" for the whole document. ok is false when loc names nothing.
func SourceBytes(data []byte, loc string) (out []byte, ok bool) {
	return NewSourceCache(data).At(loc)
}

// SourceCache finds items in one file by location, splitting each container once however many
// items are looked up (a package looks up every record of a file).
type SourceCache struct {
	data     []byte
	lines    []json.RawMessage
	linesErr bool
	arrays   map[string][]json.RawMessage
	objects  map[string]map[string]json.RawMessage
}

// NewSourceCache is the cache of one dump file's bytes.
func NewSourceCache(data []byte) *SourceCache {
	return &SourceCache{data: bytes.TrimPrefix(data, bom), arrays: map[string][]json.RawMessage{}, objects: map[string]map[string]json.RawMessage{}}
}

// At returns the exact bytes of the item at loc, as SourceBytes does.
func (c *SourceCache) At(loc string) ([]byte, bool) {
	if n, isLine := strings.CutPrefix(loc, "jsonl:"); isLine {
		k, err := strconv.Atoi(n)
		if err != nil || k < 1 {
			return nil, false
		}
		if c.lines == nil && !c.linesErr {
			dec := json.NewDecoder(bytes.NewReader(c.data))
			for {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					break
				}
				c.lines = append(c.lines, raw)
			}
			c.linesErr = c.lines == nil
		}
		if k > len(c.lines) {
			return nil, false
		}
		return c.lines[k-1], true
	}
	cur := json.RawMessage(bytes.TrimSpace(c.data))
	if len(cur) > 0 && cur[0] == '"' && loc != "" {
		if _, ok := c.objects["\x00inner"]; !ok {
			var inner string
			if json.Unmarshal(cur, &inner) != nil {
				return nil, false
			}
			c.objects["\x00inner"] = map[string]json.RawMessage{"": json.RawMessage(bytes.TrimSpace([]byte(inner)))}
		}
		cur = c.objects["\x00inner"][""]
	}
	if loc == "" {
		return cur, true
	}
	if !strings.HasPrefix(loc, "/") {
		return nil, false
	}
	prefix := ""
	for _, raw := range strings.Split(loc[1:], "/") {
		tok := strings.ReplaceAll(strings.ReplaceAll(raw, "~1", "/"), "~0", "~")
		switch {
		case len(cur) > 0 && cur[0] == '[':
			arr, ok := c.arrays[prefix]
			if !ok {
				if json.Unmarshal(cur, &arr) != nil {
					return nil, false
				}
				c.arrays[prefix] = arr
			}
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(arr) {
				return nil, false
			}
			cur = arr[i]
		case len(cur) > 0 && cur[0] == '{':
			obj, ok := c.objects[prefix]
			if !ok {
				if json.Unmarshal(cur, &obj) != nil {
					return nil, false
				}
				c.objects[prefix] = obj
			}
			v, ok := obj[tok]
			if !ok {
				return nil, false
			}
			cur = v
		default:
			return nil, false
		}
		prefix += "/" + raw
	}
	return cur, true
}

func objects(name string, vals []any) ([]map[string]any, envelope, error) {
	out := make([]map[string]any, 0, len(vals))
	for i, v := range vals {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, envelope{}, fmt.Errorf("pack: %s: item %d is not a JSON object", name, i)
		}
		out = append(out, m)
	}
	return out, envelope{}, nil
}

// str returns m[k] when it is a string.
func str(m map[string]any, k string) (string, bool) {
	s, ok := m[k].(string)
	return s, ok
}

// set reports whether v is present and none of null, false, "", [] or {}.
func isSet(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	return true
}

// stringList returns the string members of a JSON array (non-strings are skipped and counted).
func stringList(v any) (out []string, skipped int) {
	arr, ok := v.([]any)
	if !ok {
		return nil, 0
	}
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		} else {
			skipped++
		}
	}
	return out, skipped
}

// splitNative moves every member of item not in mapped and not in dropped into native, and
// counts dropped members in the inventory.
func splitNative(item map[string]any, mapped map[string]bool, dropped map[string]bool, inv *Inventory) map[string]any {
	native := map[string]any{}
	for k, v := range item {
		switch {
		case mapped[k], v == nil:
		case dropped[k]:
			inv.drop(k)
		default:
			native[k] = v
		}
	}
	return native
}

// withMetadata sets rec["metadata"] from the native metadata object plus the other native
// members under "_native". A non-object native metadata goes under _native too.
func withMetadata(rec Record, meta any, native map[string]any, inv *Inventory) {
	md := map[string]any{}
	switch t := meta.(type) {
	case map[string]any:
		for k, v := range t {
			md[k] = v
		}
	case nil:
	default:
		native["metadata"] = t
	}
	if len(native) > 0 {
		if _, clash := md["_native"]; clash {
			md["_native_fields"] = native
		} else {
			md["_native"] = native
		}
		for k := range native {
			inv.keep(k)
		}
	}
	if len(md) > 0 {
		rec["metadata"] = md
	}
}

// replacedChars counts what a JSON decoder silently turns into U+FFFD: \u escapes of lone
// UTF-16 surrogates, and bytes that are not valid UTF-8. A text holding one is not submitted as
// written (its content hash differs from the source's), so the count is a compatibility loss.
func replacedChars(data []byte) int {
	n := 0
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\\' && i+1 < len(data) && data[i+1] == 'u':
			u, ok := hex4(data, i+2)
			if !ok {
				i += 2
				continue
			}
			switch {
			case u >= 0xD800 && u <= 0xDBFF:
				if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
					if l, ok := hex4(data, i+8); ok && l >= 0xDC00 && l <= 0xDFFF {
						i += 12
						continue
					}
				}
				n++
			case u >= 0xDC00 && u <= 0xDFFF:
				n++
			}
			i += 6
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				n++
			}
			i += size
		}
	}
	return n
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// envelopeOmissions declares the members of an envelope beside its list (an OpenMemory
// backup's apps or user, the Graphiti MCP answer's message): parts of the file not read.
func (inv *Inventory) envelopeOmissions(source string, env envelope) {
	for _, m := range sortedKeys(env.Other) {
		inv.omit(source+": envelope member "+m, OmissionDeclared, env.Other[m], false,
			"a member of the file beside the record list, not a memory record")
	}
}

// duplicateMembers counts the JSON objects in data (one document or JSON Lines) that name a
// member twice. encoding/json keeps the last value silently; the count makes that a declared
// loss instead. A double-encoded document (a JSON string holding JSON) is counted inside.
func duplicateMembers(data []byte) int {
	data = bytes.TrimPrefix(data, bom)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		obj     bool
		keys    map[string]bool
		wantKey bool
		counted bool
	}
	var stack []*frame
	n := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, wantKey: true})
			case '[':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			switch {
			case top != nil && top.obj && top.wantKey:
				if top.keys[t] && !top.counted {
					top.counted = true
					n++
				}
				top.keys[t] = true
				top.wantKey = false
			default:
				if top != nil && top.obj {
					top.wantKey = true
				}
				if top == nil && len(t) > 1 && (t[0] == '{' || t[0] == '[') {
					n += duplicateMembers([]byte(t))
				}
			}
		default:
			if top != nil && top.obj {
				top.wantKey = true
			}
		}
	}
}
