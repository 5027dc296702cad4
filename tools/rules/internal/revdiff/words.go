package revdiff

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// partWords name the parts of an outcome.
var partWords = map[string]string{"error": "engine error", "refusal": "refusal", "precheck": "pre-check result", "audit": "audit report"}

// partText says a whole outcome part in words: a refusal by its rule, any other part as present.
func partText(part string, v any, present bool) string {
	if !present {
		return "(absent)"
	}
	if part == "refusal" {
		m, _ := v.(map[string]any)
		s := "refused " + leafText(m["rule"])
		if i, ok := m["record_index"]; ok {
			s += " at record index " + leafText(i)
		}
		if i, ok := m["index"]; ok {
			s += " at index " + leafText(i)
		}
		return s
	}
	return "(present)"
}

// flatten writes every leaf of a generic JSON value under its path (a.b[2].c); an empty object or
// list is a leaf of its own.
func flatten(path string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[path] = "nothing"
		}
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		if len(x) == 0 {
			out[path] = "none"
		}
		if scalars(x) {
			// A list of seqs, ids or keys reads as one value: "3, 5".
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = leafText(e)
			}
			if len(x) > 0 {
				out[path] = strings.Join(parts, ", ")
			}
			return
		}
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	default:
		out[path] = leafText(x)
	}
}

// scalars reports whether a list holds no object and no list.
func scalars(x []any) bool {
	for _, e := range x {
		switch e.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// leafText prints a JSON scalar as words: strings as they are, numbers in decimal.
func leafText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" {
			return `""`
		}
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// The words authors read for the members of an outcome (rules diff). Factor names, sub-check
// names, manifest member names and rule ids are published names and print as they are; every other
// member prints as the words below, or with its underscores as spaces.
var memberWords = map[string]string{
	"audit":                    "audit",
	"precheck":                 "pre-check",
	"refusal":                  "refusal",
	"error":                    "engine error",
	"coverage":                 "coverage",
	"verdict_prefix":           "verdict line",
	"verdict_line":             "verdict line",
	"scope_statement":          "scope statement",
	"honesty_line":             "honesty line",
	"matrix_row":               "matrix row",
	"status":                   "status",
	"reason":                   "reason",
	"decided_by":               "decided by",
	"b5_not_run":               "B5 not run",
	"m3_declared_absent":       "M3 declared but absent",
	"by_subcheck":              "conflicts by sub-check",
	"records":                  "records",
	"record_index":             "record index",
	"scope_keys":               "scope keys relied on",
	"scope_keys_source":        "scope keys from",
	"session_id_as_run_id":     "records where session_id stood in for run_id",
	"non_string_scope_values":  "non-string scope values",
	"excluded_source_passages": "excluded source passages",
	"dangling_supersedes":      "dangling supersedes targets",
	"distinct_scopes":          "distinct scopes",
	"distinct_sources":         "distinct sources",
	"marked_share":             "marked share of live records",
	"marked_shared":            "marked shared",
	"template_lineage":         "template lineage",
	"not_live":                 "not live",
	"split_state":              "split state",
	"manifest_ignored":         "manifest members ignored",
	"live_slots":               "live slots after replay",
	"snapshot_entries":         "snapshot entries",
	"forgets_of_not_live":      "forgets of a slot not live",
	"reopens_ineffective":      "reopens without effect",
	"unattributed_events":      "events without a principal",
	"aliased_slots":            "slots named by several raw keys",
	"no_envelope":              "reinserts without an envelope",
	"with_envelope":            "forgets with an envelope",
	"without_envelope":         "forgets without an envelope",
	"retired_writes":           "retired-key writes",
	"retired_write_seqs":       "retired-key write seqs",
	"unchecked_seqs":           "unchecked seqs",
	"forget_mode":              "forget mode",
	"numerator":                "numerator",
	"denominator":              "denominator",
	"value":                    "value",
}

// publishedNames print as they are: the factors of both kinds, the conflict sub-checks and the
// manifest members.
var publishedNames = map[string]bool{
	"scope_presence": true, "unscoped_rate": true, "cross_scope_clusters": true, "scope_conflicts": true,
	"duplicates": true, "forget_envelopes": true, "reinserts_after_forget": true,
	"reinserts_outside_envelope": true, "alias_reinserts": true, "reopens": true, "reassignments": true,
	"replay": true, "attributed_scope": true, "history_scope": true, "episode_group_ids": true,
	"endpoint_group_ids": true, "global_scopes": true, "global_content_keys": true, "global_claim_ids": true,
}

// listItem is one step of an outcome path that indexes a list: clusters[2].
var listItem = regexp.MustCompile(`^(.*)\[(\d+)\]$`)

// itemWords name one entry of a list by its kind: cluster 3 (clusters are numbered from 1).
var itemWords = map[string]string{"clusters": "cluster", "members": "member"}

// fieldWords turns an outcome path (audit.factors.cross_scope_clusters.clusters[0].decided_by)
// into the words an author reads (audit, cross_scope_clusters, cluster 1, decided by).
func fieldWords(path string) string {
	var out []string
	for _, step := range strings.Split(path, ".") {
		var idx []int
		for {
			m := listItem.FindStringSubmatch(step)
			if m == nil {
				break
			}
			n, _ := strconv.Atoi(m[2])
			idx = append([]int{n}, idx...)
			step = m[1]
		}
		switch {
		case step == "factors":
			// the factor's published name follows
		case step == "":
		case len(idx) > 0 && itemWords[step] != "":
			for _, n := range idx {
				out = append(out, itemWords[step]+" "+strconv.Itoa(n+1))
			}
			continue
		default:
			out = append(out, memberText(step))
		}
		for _, n := range idx {
			out = append(out, "entry "+strconv.Itoa(n+1))
		}
	}
	return strings.Join(out, ", ")
}

func memberText(m string) string {
	if publishedNames[m] {
		return m
	}
	if w, ok := memberWords[m]; ok {
		return w
	}
	return strings.ReplaceAll(m, "_", " ")
}
