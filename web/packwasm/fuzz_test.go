package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzConvertSubmission: any bytes given as a submission either convert to a hash-only body
// without content_text, or fail with a message that carries none of the input.
func FuzzConvertSubmission(f *testing.F) {
	f.Add([]byte(`{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"zq-secret","user_id":"a"}]}`))
	f.Add([]byte(`{"family":"generic","form":"full_text","manifest":{"global_content_keys":["zq-secret"],"declared_scope_keys":["u"]},"records":[{"id":"c1","content_text":"zq-secret","u":"x"}]}`))
	f.Add([]byte(`{"family":"letta","form":"hash_only","variant":"blocks","records":[{"id":"b1","content_hash":"ab"}]}`))
	f.Add([]byte(`{"family":"mem0","form":"full_text","manifest":{"zq-secret":1},"records":[]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := convert(SourceSubmission, "in.json", in, true)
		if err != nil {
			if bytes.Contains(in, []byte("zq-")) && strings.Contains(err.Error(), "zq-") {
				t.Fatalf("error carries input: %v", err)
			}
			return
		}
		var sub struct {
			Form    string           `json:"form"`
			Records []map[string]any `json:"records"`
		}
		if err := json.Unmarshal(p.Body, &sub); err != nil || sub.Form != "hash_only" || len(sub.Records) != p.Records {
			t.Fatalf("body: %v form %q", err, sub.Form)
		}
		for i, r := range sub.Records {
			if _, ok := r["content_text"]; ok {
				t.Fatalf("record %d carries content_text", i)
			}
		}
	})
}
