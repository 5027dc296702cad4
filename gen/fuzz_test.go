package gen

import (
	"encoding/json"
	"testing"
)

// FuzzExpect: the strict decoder and the pipeline never panic, a refusal names a
// rule of the closed set, whatever the strict decoder accepts is valid JSON, and a
// NOT ASSESSABLE cross_scope_clusters leaves no marker facts in coverage.
func FuzzExpect(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `{"a":1,"a":2}`, `"\ud800"`, `"\ud83d\ude00"`, "\xef\xbb\xbf{}",
		`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"x","user_id":"u1"},{"id":"r2","content_text":"x","user_id":"u2","shared":true}]}`,
		`{"family":"letta","form":"hash_only","records":[{"id":"r1","content_hash":"h","attached_to":["a1"],"origin_claim_id":"r1"}]}`,
		`{"family":"generic","form":"full_text","records":[{"id":"r1","content_text":"x","state":"pending"}],"manifest":{"declared_scope_keys":["t"]}}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	} {
		f.Add([]byte(s))
	}
	if cases, err := Corpus(); err == nil {
		for i, c := range cases {
			if i%7 != 0 {
				continue
			}
			if b, err := c.SubmittedBytes(); err == nil && len(b) < 20000 {
				f.Add(b)
			}
		}
	}
	closed := map[string]bool{}
	for _, r := range RefusalRules {
		closed[r] = true
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := decodeStrict(body); err == nil && !json.Valid(body) {
			t.Fatalf("strict decoder accepted invalid JSON")
		}
		e, err := Expect(body)
		if err != nil {
			t.Fatalf("Expect error: %v", err)
		}
		switch {
		case e.Refusal != nil:
			if !closed[e.Refusal.Rule] || e.Precheck != nil || e.Audit != nil {
				t.Fatalf("refusal outside the closed set or mixed outcome: %q", e.Refusal.Rule)
			}
		case e.Precheck == nil || e.Audit == nil:
			t.Fatalf("neither refusal nor full outcome")
		default:
			// the marker convention's facts are in coverage exactly when
			// cross_scope_clusters is ASSESSABLE, never zeros beside NOT ASSESSABLE.
			c := e.Audit.Coverage
			present := []bool{c.MarkedShare != nil, c.B5NotRun != nil, c.TemplateLineage != nil, c.M3DeclaredAbsent != nil}
			for _, p := range present {
				if p != (e.Audit.Factors.CrossScopeClusters.Status == statusAssessable) {
					t.Fatalf("coverage marker facts beside cross_scope_clusters %s", e.Audit.Factors.CrossScopeClusters.Status)
				}
			}
		}
		// a declared_scope_keys refusal with a record index names the first
		// record (array order) whose value under a declared key reads as free text.
		if r := e.Refusal; r != nil && r.Rule == ruleDeclaredScopeKeysInval && r.RecordIndex != nil {
			// Exact member names (encoding/json's struct matching would fold case).
			var top map[string]any
			_ = json.Unmarshal(body, &top)
			manifest, _ := top["manifest"].(map[string]any)
			keys, _ := manifest["declared_scope_keys"].([]any)
			records, _ := top["records"].([]any)
			if *r.RecordIndex >= len(records) {
				t.Fatalf("record_index %d names no record", *r.RecordIndex)
			}
			holds := func(rec any) bool {
				m, _ := rec.(map[string]any)
				for _, k := range keys {
					ks, _ := k.(string)
					if v, ok := m[ks].(string); ok && freeText(v) {
						return true
					}
				}
				return false
			}
			for i := 0; i <= *r.RecordIndex; i++ {
				if holds(records[i]) != (i == *r.RecordIndex) {
					t.Fatalf("record_index %d is not the first record holding free text", *r.RecordIndex)
				}
			}
		}
		if _, err := json.Marshal(e); err != nil {
			t.Fatalf("expected outcome does not marshal")
		}
	})
}
