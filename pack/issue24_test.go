package pack

import (
	"strings"
	"testing"
)

// Findings of issue 24 that live in the conversion itself.

// Duplicate JSON members in an input are a declared, blocking compatibility loss, counted per
// object, in a plain document, JSON Lines and a double-encoded agent file alike.
func TestIssue24DuplicateMembersNoted(t *testing.T) {
	dup := `{"id":"c1","content_text":"a","tenant":"t0","tenant":"t1"}` + "\n" + `{"id":"c2","content_text":"b","tenant":"t1"}` + "\n"
	_, _, inv, _ := packed(t, Inputs{Records: one("c.jsonl", dup)}, Options{Source: ClaimsJSONL})
	found := false
	for _, o := range inv.Omissions {
		if strings.Contains(o.Part, "repeated member name") {
			found = o.Count == 1 && o.Blocking && o.Kind == OmissionCompatibility
		}
	}
	if !found {
		t.Fatalf("duplicate member not noted: %+v", inv.Omissions)
	}
	for _, c := range []struct {
		doc  string
		want int
	}{
		{`{"a":1,"b":{"a":1,"a":2},"c":[{"x":1,"x":1},{"x":1}]}`, 2},
		{`{"a":{"b":1},"c":{"b":1}}`, 0},
		{`"{\"a\":1,\"a\":2}"`, 1},
		{`[{"k":[1,{"k":1}],"k":2}]`, 1},
		{`{"a":"a","b":"a"}`, 0},
	} {
		if n := duplicateMembers([]byte(c.doc)); n != c.want {
			t.Errorf("%s: %d, want %d", c.doc, n, c.want)
		}
	}
}

// In hash-only form metadata is reduced to the markers, so no native member is listed as kept
// under metadata._native (the full-text form still lists them).
func TestIssue24HashOnlyKeepsNoNative(t *testing.T) {
	in := Inputs{Records: files(t, td("leak/mem0-platform.json"))}
	_, _, full, _ := packed(t, in, Options{Source: Mem0Platform})
	_, _, ho, _ := packed(t, in, Options{Source: Mem0Platform, HashOnly: true})
	if len(full.Fields.KeptInMetadata) == 0 {
		t.Fatal("the full-text form keeps no native member: the test cannot fail")
	}
	if len(ho.Fields.KeptInMetadata) != 0 {
		t.Fatalf("hash-only lists %v under kept_in_metadata_native", ho.Fields.KeptInMetadata)
	}
}
