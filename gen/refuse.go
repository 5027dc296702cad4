package gen

import "strings"

// Refusal rule ids, in the order the malformed_rule text lists them, plus
// body_bytes_cap, which is checked before parsing.
const (
	ruleBodyBytesCap           = "body_bytes_cap"
	ruleExportRequired         = "export_required"
	ruleFamilyRequired         = "family_required"
	ruleFamilyUnknown          = "family_unknown"
	ruleFormInvalid            = "form_invalid"
	ruleRecordsRequired        = "records_required"
	ruleRecordsEmpty           = "records_empty"
	ruleRecordCountCap         = "record_count_cap"
	ruleRecordNotObject        = "record_not_object"
	ruleRecordIDRequired       = "record_id_required"
	ruleRecordIDDuplicate      = "record_id_duplicate"
	ruleContentTextRequired    = "content_text_required"
	ruleContentHashRequired    = "content_hash_required"
	ruleManifestInvalid        = "manifest_invalid"
	ruleDeclaredScopeKeysInval = "declared_scope_keys_invalid"
	ruleVariantUnknown         = "variant_unknown"
)

// RefusalRules is the closed set of refusal rule ids.
var RefusalRules = []string{
	ruleBodyBytesCap, ruleExportRequired, ruleFamilyRequired, ruleFamilyUnknown, ruleFormInvalid,
	ruleRecordsRequired, ruleRecordsEmpty, ruleRecordCountCap, ruleRecordNotObject,
	ruleRecordIDRequired, ruleRecordIDDuplicate, ruleContentTextRequired, ruleContentHashRequired,
	ruleManifestInvalid, ruleDeclaredScopeKeysInval, ruleVariantUnknown,
}

// Families, forms and variants as published (input_contract_text).
var (
	familyVariants = map[string][]string{
		"mem0":         {"platform", "oss"},
		"zep_graphiti": {"graphiti", "zep_cloud"},
		"letta":        {"mixed", "blocks", "passages"},
		"generic":      {"claim-jsonl"},
	}
	familyOrder = []string{"mem0", "zep_graphiti", "letta", "generic"}
	formOrder   = []string{"full_text", "hash_only"}
)

func refusal(rule string) *Refusal { return &Refusal{Rule: rule} }

func recordRefusal(rule string, index int) *Refusal {
	return &Refusal{Rule: rule, RecordIndex: intp(index)}
}

// validated is a submission that passed every refusal rule.
type validated struct {
	family   string
	form     string
	variant  string
	manifest map[string]any // nil when absent (or null)
	records  []map[string]any
}

// validate applies the malformed_rule checks in their listed order.
// Record-level rules scan every record before the next rule runs.
func validate(top any) (*validated, *Refusal) {
	body, ok := asObject(top)
	if !ok {
		return nil, refusal(ruleExportRequired)
	}

	famV := body["family"]
	if isNull(famV) {
		return nil, refusal(ruleFamilyRequired)
	}
	family, _ := famV.(string)
	if _, known := familyVariants[family]; !known {
		return nil, refusal(ruleFamilyUnknown)
	}

	form, _ := body["form"].(string)
	if form != "full_text" && form != "hash_only" {
		return nil, refusal(ruleFormInvalid)
	}

	records, r := validateRecords(body, form)
	if r != nil {
		return nil, r
	}
	manifest, r := validateManifest(body, family, records)
	if r != nil {
		return nil, r
	}

	variant := familyVariants[family][0] // published default
	if vv := body["variant"]; !isNull(vv) {
		s, ok := vv.(string)
		if !ok || !contains(familyVariants[family], s) {
			return nil, refusal(ruleVariantUnknown)
		}
		variant = s
	}

	return &validated{family: family, form: form, variant: variant, manifest: manifest, records: records}, nil
}

// validateRecords applies the records rules, from records_required to the content field
// of the form.
func validateRecords(body map[string]any, form string) ([]map[string]any, *Refusal) {
	recsV, isArr := body["records"].([]any)
	if !isArr {
		return nil, refusal(ruleRecordsRequired)
	}
	if len(recsV) == 0 {
		return nil, refusal(ruleRecordsEmpty)
	}
	if len(recsV) > RecordCap {
		return nil, &Refusal{Rule: ruleRecordCountCap, Cap: intp(RecordCap), Observed: intp(len(recsV))}
	}

	records := make([]map[string]any, len(recsV))
	for i, r := range recsV {
		m, ok := asObject(r)
		if !ok {
			return nil, recordRefusal(ruleRecordNotObject, i)
		}
		records[i] = m
	}
	for i, r := range records {
		if _, ok := r["id"].(string); !ok {
			return nil, recordRefusal(ruleRecordIDRequired, i)
		}
	}
	seen := map[string]bool{}
	for i, r := range records {
		id := r["id"].(string)
		if seen[id] {
			return nil, recordRefusal(ruleRecordIDDuplicate, i)
		}
		seen[id] = true
	}
	if form == "full_text" {
		for i, r := range records {
			if _, ok := r["content_text"].(string); !ok {
				return nil, recordRefusal(ruleContentTextRequired, i)
			}
		}
	} else {
		for i, r := range records {
			if _, ok := counting(r["content_hash"]); !ok {
				return nil, recordRefusal(ruleContentHashRequired, i)
			}
		}
	}
	return records, nil
}

// validateManifest applies manifest_invalid and declared_scope_keys_invalid; the manifest
// is nil when absent or null.
func validateManifest(body map[string]any, family string, records []map[string]any) (map[string]any, *Refusal) {
	mv := body["manifest"]
	if isNull(mv) {
		return nil, nil
	}
	manifest, ok := asObject(mv)
	if !ok {
		return nil, refusal(ruleManifestInvalid)
	}
	dk := manifest["declared_scope_keys"]
	if isNull(dk) {
		return manifest, nil
	}
	arr, ok := dk.([]any)
	if !ok {
		return nil, refusal(ruleDeclaredScopeKeysInval)
	}
	var declared []string
	for _, e := range arr {
		s, ok := e.(string)
		// The content fields of both forms, and the names a family's
		// records carry their text under natively, are never scope keys.
		if !ok || contains(neverScopeKeys, s) {
			return nil, refusal(ruleDeclaredScopeKeysInval)
		}
		declared = append(declared, s)
	}
	// A declared key whose value reads as free text holds content, and a scope
	// is printed. Letta ignores declared keys.
	if family != "letta" {
		for i, r := range records {
			for _, k := range declared {
				if v, ok := r[k].(string); ok && freeText(v) {
					return nil, recordRefusal(ruleDeclaredScopeKeysInval, i)
				}
			}
		}
	}
	return manifest, nil
}

// neverScopeKeys are the names manifest.declared_scope_keys may not list: the
// content fields of both forms and the names Mem0 (memory, and data or
// content in raw dumps), Graphiti/Zep edges (fact) and Letta blocks (value) and
// passages (text) carry a record's text under.
var neverScopeKeys = []string{"content_text", "content_hash", "memory", "data", "content", "text", "fact", "value"}

// Free-text thresholds of R-55, in UTF-8 bytes.
const (
	freeTextMaxBytes           = 256
	freeTextMaxBytesWhitespace = 64
)

// freeText reports whether a scope value reads as free text: more than 256
// bytes, or more than 64 bytes with a space, tab, line feed or carriage return.
func freeText(v string) bool {
	return len(v) > freeTextMaxBytes ||
		(len(v) > freeTextMaxBytesWhitespace && strings.ContainsAny(v, " \t\n\r"))
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
