package rules

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Authors' YAML problems in the author's terms: a syntax error at the line that is wrong, an
// unknown key by its YAML path with the nearest known key.

// faultLine finds the line a YAML syntax error comes from. The parser reports the start of the
// block it was reading, which can be many lines above the fault (an entry indented one space less
// than its siblings is reported at its parent's key). The fault is the first line, at or after
// the reported one, whose inclusion makes the document's prefix fail to parse.
func faultLine(src []byte, reported int) int {
	lines := bytes.SplitAfter(src, []byte("\n"))
	if reported < 1 || reported > len(lines) {
		return reported
	}
	prefix := bytes.Join(lines[:reported-1], nil)
	for k := reported; k <= len(lines); k++ {
		prefix = append(prefix, lines[k-1]...)
		var n yaml.Node
		if yaml.Unmarshal(prefix, &n) != nil {
			return k
		}
	}
	return reported
}

var unknownField = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)

// unknownKey rewrites yaml.v3's "field X not found in type rules.T" at line as an unknown key
// named by its YAML path, with the nearest key T accepts. ok is false for any other message.
func unknownKey(src []byte, line int, msg string) (path, text string, ok bool) {
	m := unknownField.FindStringSubmatch(msg)
	if m == nil {
		return "", "", false
	}
	key := m[1]
	var root yaml.Node
	_ = yaml.Unmarshal(src, &root)
	path = keyPath(&root, "", line, key)
	if path == "" {
		path = key
	}
	text = fmt.Sprintf("unknown key %q", key)
	if t, found := yamlTypes()[m[2]]; found {
		if near := nearest(key, yamlKeys(t)); near != "" {
			text += fmt.Sprintf(" (did you mean %q?)", near)
		}
	}
	return path, text, true
}

// keyPath finds the mapping key named key on line and returns its YAML path.
func keyPath(n *yaml.Node, path string, line int, key string) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p := keyPath(c, path, line, key); p != "" {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if k.Line == line && k.Value == key {
				return p
			}
			if q := keyPath(n.Content[i+1], p, line, key); q != "" {
				return q
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if p := keyPath(c, path+"["+strconv.Itoa(i)+"]", line, key); p != "" {
				return p
			}
		}
	}
	return ""
}

// yamlTypes maps the type names yaml.v3 prints ("rules.Caps") to every struct type the criteria
// file decodes into.
func yamlTypes() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || out[t.String()] != nil {
			return
		}
		out[t.String()] = t
		for i := 0; i < t.NumField(); i++ {
			walk(t.Field(i).Type)
		}
	}
	walk(reflect.TypeOf(Criteria{}))
	return out
}

// yamlKeys lists the keys a struct accepts, those of a struct it inlines in their place.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		switch {
		case name == "" && opts == "inline":
			keys = append(keys, yamlKeys(t.Field(i).Type)...)
		case name != "" && name != "-":
			keys = append(keys, name)
		}
	}
	return keys
}

// nearest is the known key closest to key by edit distance, if it is close enough to be a typo.
func nearest(key string, known []string) string {
	best, bestD := "", len(key)/3+1 // at most a third of the key mistyped
	for _, k := range known {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
