package revdiff

import (
	"os"
	"reflect"
	"testing"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// TestOutcomeChangesInWords: a part present on one side only is one line (a refusal by its
// rule); a changed leaf is named in words, lists of scalars read as one value, and the verdict
// prefix is left out.
func TestOutcomeChangesInWords(t *testing.T) {
	older := map[string]any{
		"refusal": map[string]any{"rule": "R-2", "record_index": float64(3)},
	}
	newer := map[string]any{
		"audit": map[string]any{"verdict_prefix": "x"},
	}
	got := outcomeChanges(older, newer)
	want := []Change{
		{Field: "refusal", Old: "refused R-2 at record index 3", New: "(absent)"},
		{Field: "audit report", Old: "(absent)", New: "(present)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parts:\n got %+v\nwant %+v", got, want)
	}
	older = map[string]any{"audit": map[string]any{"factors": map[string]any{"cross_scope_clusters": map[string]any{
		"clusters": []any{map[string]any{"members": []any{"a", "b"}, "decided_by": "P1"}}}}}}
	newer = map[string]any{"audit": map[string]any{"factors": map[string]any{"cross_scope_clusters": map[string]any{
		"clusters": []any{map[string]any{"members": []any{"a"}, "decided_by": "P1"}}}}}}
	got = outcomeChanges(older, newer)
	if len(got) != 1 || got[0].Old != "a, b" || got[0].New != "a" {
		t.Fatalf("members: %+v", got)
	}
	if got[0].Field != "audit, cross_scope_clusters, cluster 1, members" {
		t.Fatalf("field %q", got[0].Field)
	}
}

// TestSameRevisionChangesNothing: a criteria file against itself changes no case.
func TestSameRevisionChangesNothing(t *testing.T) {
	s, err := rules.LoadAnyFile("../../../../criteria.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Load(os.DirFS("../../../../corpus"))
	if err != nil {
		t.Fatal(err)
	}
	c.Cases = c.Cases[:20]
	changed, err := Corpus(s, s, c)
	if err != nil || len(changed) != 0 {
		t.Fatalf("%v: %+v", err, changed)
	}
}
