package pack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// envelope describes the paging facts of one dump file, when it had an envelope.
type envelope struct {
	Key      string // the member that held the items ("" for a bare array or JSON Lines)
	HasCount bool
	Count    int64
	HasNext  bool // the envelope carried a "next" member
	NextNull bool // ... and it was null (last page)
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
		return objects(f.Name, vals)
	}
	switch t := vals[0].(type) {
	case []any:
		return objects(f.Name, t)
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
			items, _, err := objects(f.Name, arr)
			return items, env, err
		}
		if len(keys) == 0 {
			return []map[string]any{t}, env, nil
		}
		return nil, env, fmt.Errorf("pack: %s: expected an array, JSON Lines, or an object with one of the members %v holding an array", f.Name, keys)
	}
	return nil, env, fmt.Errorf("pack: %s: expected an array of objects, JSON Lines, or an envelope object", f.Name)
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
