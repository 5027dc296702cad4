package evaluator

import (
	"testing"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// TestEarlyStageStandsOnlyWhenFinal: the record stage's results from the read are kept only when
// the facts and the scope they were computed on are the export's final ones: a manifest or a
// scope-changing variant after the records voids them, and a record named by a later supersedes
// is evaluated again. (The shipped criteria's record rules read no variant, so the answers alone
// could not tell a kept result computed for the wrong variant.)
func TestEarlyStageStandsOnlyWhenFinal(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	const recs = `"records":[{"id":"a","content_text":"x","user_id":"u"},{"id":"b","content_text":"x","user_id":"v","supersedes":"a"}]`
	const man = `"manifest":{"global_scopes":["u"]}`
	for _, c := range []struct {
		body  string
		stand bool
	}{
		{`{"family":"mem0","form":"full_text",` + man + `,` + recs + `}`, true},
		{`{"family":"mem0","form":"full_text",` + recs + `}`, true},
		{`{"family":"mem0","form":"full_text",` + recs + `,` + man + `}`, false},
		{`{"family":"mem0","form":"full_text","variant":"oss",` + recs + `}`, true},
		{`{"family":"mem0","form":"full_text",` + recs + `,"variant":"platform"}`, true}, // the default
		{`{"family":"mem0","form":"full_text",` + recs + `,"variant":"oss"}`, false},
		{`{` + recs + `,"family":"mem0","form":"full_text",` + man + `,"variant":"oss"}`, true}, // read after all
	} {
		b := getBuffers()
		x, _ := lexExport(ps, []byte(c.body), b, false, true)
		if x == nil {
			t.Fatalf("%s: not read", c.body)
		}
		if got := x.early != nil; got != c.stand {
			t.Errorf("%s: early results kept %v, want %v", c.body, got, c.stand)
		}
		if x.early != nil && (!x.records[0].early || !x.records[0].facts.SupersedesTarget) {
			t.Errorf("%s: record a: early %v, supersedes target %v: state.records would not evaluate it again",
				c.body, x.records[0].early, x.records[0].facts.SupersedesTarget)
		}
		b.release()
	}
}
