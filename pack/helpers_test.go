package pack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func file(t testing.TB, path string) File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return File{Name: path, Data: b}
}

func files(t testing.TB, paths ...string) []File {
	var out []File
	for _, p := range paths {
		out = append(out, file(t, p))
	}
	return out
}

func td(p string) string { return filepath.Join("testdata", p) }

// packed runs Pack, marshals the submission, checks it against the published input contract
// and returns the decoded submission and the inventory.
func packed(t *testing.T, in Inputs, opt Options) (map[string]any, []map[string]any, *Inventory, []byte) {
	t.Helper()
	res, err := Pack(in, opt)
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	body, err := res.Submission.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckCaps(len(res.Submission.Records), body); err != nil {
		t.Fatal(err)
	}
	sub := contractCheck(t, body)
	var recs []map[string]any
	for _, r := range sub["records"].([]any) {
		recs = append(recs, r.(map[string]any))
	}
	return sub, recs, res.Inventory, body
}

// contractCheck applies the malformed_rule of the criteria to body (a test-side mirror of the
// free validation, so that unit tests do not wait for the engine) and returns the parsed body.
func contractCheck(t *testing.T, body []byte) map[string]any {
	t.Helper()
	if len(body) > MaxBodyBytes {
		t.Fatalf("body_bytes_cap: %d", len(body))
	}
	v, err := decodeValue(body)
	if err != nil {
		t.Fatalf("export_required: %v", err)
	}
	if d := depth(v); d > maxDepth {
		t.Fatalf("export_required: depth %d", d)
	}
	top, ok := v.(map[string]any)
	if !ok {
		t.Fatal("export_required")
	}
	fam, _ := top["family"].(string)
	vars, ok := familyVariants[fam]
	if !ok {
		t.Fatalf("family_unknown %q", fam)
	}
	form, _ := top["form"].(string)
	if form != FormFullText && form != FormHashOnly {
		t.Fatalf("form_invalid %q", form)
	}
	recs, ok := top["records"].([]any)
	if !ok || len(recs) == 0 || len(recs) > MaxRecords {
		t.Fatalf("records: %d", len(recs))
	}
	seen := map[string]bool{}
	for i, r := range recs {
		rm, ok := r.(map[string]any)
		if !ok {
			t.Fatalf("record_not_object %d", i)
		}
		id, ok := rm["id"].(string)
		if !ok {
			t.Fatalf("record_id_required %d", i)
		}
		if seen[id] {
			t.Fatalf("record_id_duplicate %d", i)
		}
		seen[id] = true
		if form == FormFullText {
			if _, ok := rm["content_text"].(string); !ok {
				t.Fatalf("content_text_required %d", i)
			}
		} else if h, ok := rm["content_hash"].(string); !ok || h == "" {
			t.Fatalf("content_hash_required %d", i)
		}
	}
	if m, ok := top["manifest"]; ok {
		mm, ok := m.(map[string]any)
		if !ok {
			t.Fatal("manifest_invalid")
		}
		if d, ok := mm["declared_scope_keys"]; ok {
			for _, k := range d.([]any) {
				if _, ok := k.(string); !ok {
					t.Fatal("declared_scope_keys_invalid")
				}
			}
		}
	}
	if vr, ok := top["variant"]; ok && !contains(vars, vr.(string)) {
		t.Fatalf("variant_unknown %v", vr)
	}
	return top
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func eqStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

func readIfPresent(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	return File{Name: path, Data: b}, nil
}

// hasOmission reports whether inv declares the omission part with count n and blocking b.
func hasOmission(inv *Inventory, part string, n int, b bool) bool {
	for _, o := range inv.Omissions {
		if o.Part == part {
			return o.Count == n && o.Blocking == b
		}
	}
	return false
}
