package gen

import (
	"encoding/json"
	"sort"
)

// The words of the readings, as small predicates over decoded JSON values.

// isNull reports whether v is JSON null (or absent, which decodes the same here).
func isNull(v any) bool { return v == nil }

// isSet: present and none of null, false, "", [] or {} (READINGS, "set").
func isSet(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	default:
		return true
	}
}

// counting: a non-empty JSON string.
func counting(v any) (string, bool) {
	s, ok := v.(string)
	if !ok || s == "" {
		return "", false
	}
	return s, true
}

// isTrue: exactly the JSON boolean true.
func isTrue(v any) bool { b, ok := v.(bool); return ok && b }

// isFalse: exactly the JSON boolean false.
func isFalse(v any) bool { b, ok := v.(bool); return ok && !b }

// asObject returns v as an object when it is one.
func asObject(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

// canonical returns a canonical text for a decoded value (sorted members), used
// only for equality of values such as template_id.
func canonical(v any) string {
	b, err := json.Marshal(normalizeForCanon(v))
	if err != nil {
		return ""
	}
	return string(b)
}

func normalizeForCanon(v any) any {
	switch x := v.(type) {
	case jsonNumber:
		return json.RawMessage(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalizeForCanon(x[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalizeForCanon(e)
		}
		return out
	default:
		return v
	}
}

// sortedStrings returns a sorted copy (byte-wise order, R-41).
func sortedStrings(in []string) []string {
	out := append([]string{}, in...)
	sort.Strings(out)
	return out
}

// lessIDLists orders two sorted id lists element by element, a prefix first.
func lessIDLists(a, b []string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}
