package gen

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Small builders for hand-authored corpus exports. All values are synthetic.

// obj is a JSON object under construction.
type obj map[string]any

// with sets members from key/value pairs and returns the object.
func (o obj) with(kv ...any) obj {
	for i := 0; i+1 < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}

// without removes members and returns the object.
func (o obj) without(keys ...string) obj {
	for _, k := range keys {
		delete(o, k)
	}
	return o
}

// list is a JSON array.
func list(v ...any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

// txt is a full-text record.
func txt(id, text string, kv ...any) obj { return obj{"id": id, "content_text": text}.with(kv...) }

// hsh is a hash-only record.
func hsh(id, hash string, kv ...any) obj { return obj{"id": id, "content_hash": hash}.with(kv...) }

// ex is an export of the family and form with the records.
func ex(family, form string, recs ...obj) obj {
	arr := []any{}
	for _, r := range recs {
		arr = append(arr, r)
	}
	return obj{"family": family, "form": form, "records": arr}
}

func mem0(recs ...obj) obj    { return ex("mem0", "full_text", recs...) }
func zep(recs ...obj) obj     { return ex("zep_graphiti", "full_text", recs...) }
func letta(recs ...obj) obj   { return ex("letta", "full_text", recs...) }
func generic(recs ...obj) obj { return ex("generic", "full_text", recs...) }

// genericKeys is a generic export declaring scope keys.
func genericKeys(keys []any, recs ...obj) obj {
	return generic(recs...).with("manifest", obj{"declared_scope_keys": keys})
}

// manifest sets (or extends) the export's manifest.
func (o obj) manifest(kv ...any) obj {
	m, ok := o["manifest"].(obj)
	if !ok {
		m = obj{}
	}
	o["manifest"] = m.with(kv...)
	return o
}

// bytesOf marshals an export with encoding/json.
func bytesOf(o obj) []byte {
	b, err := json.Marshal(o)
	if err != nil {
		panic("gen: edge export cannot be marshaled") // unreachable: plain values only
	}
	return b
}

// manyRecords builds n full-text records r0001.. with the given contents pattern.
func manyRecords(n int, f func(i int) obj) []obj {
	out := make([]obj, n)
	for i := 0; i < n; i++ {
		out[i] = f(i)
	}
	return out
}

func id4(i int) string {
	s := strconv.Itoa(i)
	return "r" + strings.Repeat("0", 4-len(s)) + s
}

// edgeSpec is a hand-authored case before its expected outcome is computed.
type edgeSpec struct {
	name  string
	rules []string
	// provenance is ProvenanceEdge unless set (ProvenanceRegression for regression cases).
	provenance string
	body       obj    // serialized with encoding/json
	raw        []byte // exact request bytes (body_base64)
}

func rules(r ...string) []string { return r }
