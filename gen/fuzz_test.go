package gen

import (
	"encoding/json"
	"testing"
)

// FuzzExpect: the strict decoder and the pipeline never panic, a refusal names a
// rule of the closed set, and whatever the strict decoder accepts is valid JSON.
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
		}
		if _, err := json.Marshal(e); err != nil {
			t.Fatalf("expected outcome does not marshal")
		}
	})
}
