package gen

import (
	"encoding/json"
	"sort"
	"strings"
)

// Mem0 and Zep/Graphiti default scope keys (extension rule, R-8, R-47).
var (
	mem0DefaultKeys = []string{"user_id", "agent_id", "app_id", "run_id"}
	zepDefaultKeys  = []string{"group_id", "graph_id"}
)

// scopeKeys resolves the declared scope keys of a submission (extension rule,
// It returns the keys in declared order (a repeated key counts
// once, at its first place), their source, and whether the Mem0 session_id
// stand-in applies (default Mem0 keys only, R-44).
func scopeKeys(v *validated) (keys []string, source string, standIn bool) {
	if v.family == "letta" {
		return []string{"attached_to"}, "attached_to", false
	}
	var declared []any
	hasDeclared := false
	if v.manifest != nil {
		if dk, ok := v.manifest["declared_scope_keys"].([]any); ok {
			declared, hasDeclared = dk, true
		}
	}
	if hasDeclared {
		keys = []string{}
		for _, e := range declared {
			k := e.(string) // validated: an array of strings
			if !contains(keys, k) {
				keys = append(keys, k)
			}
		}
		return keys, "manifest", false
	}
	switch v.family {
	case "mem0":
		return append([]string{}, mem0DefaultKeys...), "family_default", true
	case "zep_graphiti":
		return append([]string{}, zepDefaultKeys...), "family_default", false
	default: // generic: the schema defines no scope field
		return []string{}, "family_default", false
	}
}

// recordScope is the scope of one record (R-9..R-12).
type recordScope struct {
	has      bool   // carries at least one scope value that counts
	global   bool   // M2
	identity string // equality key: the tuple (or Letta set), never the string
	str      string // printed scope string; "" when unscoped
	keySet   string // N5: the set of declared keys carrying a counting value
	set      map[string]bool
	// facts counted in coverage
	nonString int
	standIn   bool
}

type scopePair struct {
	Key   string `json:"k"`
	Value string `json:"v"`
}

// tupleScope computes the scope tuple of a non-Letta record over the declared keys.
func tupleScope(rec map[string]any, keys []string, standIn bool) recordScope {
	var out recordScope
	var pairs []scopePair
	var keyNames []string
	for _, k := range keys {
		raw, present := rec[k]
		if present && raw != nil {
			if _, isStr := raw.(string); !isStr {
				out.nonString++
			}
		}
		val, ok := counting(raw)
		if !ok && standIn && k == "run_id" {
			// session_id stands in run_id's place, per record.
			sraw, spresent := rec["session_id"]
			if spresent && sraw != nil {
				if _, isStr := sraw.(string); !isStr {
					out.nonString++
				}
			}
			if sv, sok := counting(sraw); sok {
				val, ok = sv, true
				out.standIn = true
			}
		}
		if ok {
			pairs = append(pairs, scopePair{Key: k, Value: val})
			keyNames = append(keyNames, k)
		}
	}
	if len(pairs) == 0 {
		return out
	}
	out.has = true
	vals := make([]string, len(pairs))
	for i, p := range pairs {
		vals[i] = p.Value
	}
	out.str = strings.Join(vals, "/")
	out.global = len(pairs) == 1 && pairs[0].Value == "global"
	id, _ := json.Marshal(pairs)
	out.identity = "T" + string(id)
	ks, _ := json.Marshal(keyNames)
	out.keySet = string(ks)
	return out
}

// lettaScope computes a Letta record's scope set from attached_to.
func lettaScope(rec map[string]any) recordScope {
	var out recordScope
	out.set = map[string]bool{}
	raw, present := rec["attached_to"]
	if present && raw != nil {
		arr, ok := raw.([]any)
		if !ok {
			out.nonString++ // not an array: empty set, counted as a non-string scope value
		}
		for _, e := range arr {
			if e != nil {
				if _, isStr := e.(string); !isStr {
					out.nonString++
				}
			}
			if s, ok := counting(e); ok {
				out.set[s] = true
			}
		}
	}
	if len(out.set) == 0 {
		return out
	}
	members := make([]string, 0, len(out.set))
	for s := range out.set {
		members = append(members, s)
	}
	sort.Strings(members)
	out.has = true
	out.str = strings.Join(members, "/")
	out.global = len(members) == 1 && members[0] == "global"
	id, _ := json.Marshal(members)
	out.identity = "S" + string(id)
	out.keySet = `["attached_to"]`
	return out
}

// disjoint reports whether two Letta scope sets share no member.
func disjoint(a, b map[string]bool) bool {
	for s := range a {
		if b[s] {
			return false
		}
	}
	return true
}
