package evaluator_test

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
)

// TestReportCanonicalIsJCS: the report's own canonical form is the JCS reference's canonical form
// of its JSON, on random exports (every family, form and decision), the max-size exports and
// reports with strings that need escaping.
func TestReportCanonicalIsJCS(t *testing.T) {
	ps := shipped(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	check := func(name string, rep *evaluator.Report) { t.Helper(); checkCanonical(t, name, rep) }
	r := rand.New(rand.NewSource(7))
	n := 0
	for i := 0; i < 2000; i++ {
		rep, ref, err := evaluator.Audit(ps, gen.RandomExport(r), now)
		if err != nil || ref != nil {
			continue
		}
		check("random", rep)
		n++
	}
	if n < 1000 {
		t.Fatalf("only %d random reports", n)
	}
	for _, f := range gen.MaxSizeFamilies {
		rep, ref, err := evaluator.Audit(ps, gen.MaxSizeExport(f), now)
		if err != nil || ref != nil {
			t.Fatal(err, ref)
		}
		check(f, rep)
	}
	rep, ref, err := evaluator.Audit(ps, []byte(`{"family":"mem0","form":"full_text","records":[`+
		`{"id":"a\"\\\u0001\n\u2028<&>\u00e9\ud83d\ude00","content_text":"x","user_id":"u\t1"},`+
		`{"id":"b","content_text":"x","user_id":"\u007f\u0000"}]}`), now)
	if err != nil || ref != nil {
		t.Fatal(err, ref)
	}
	check("escapes", rep)
}

// checkCanonical: the report's own canonical form is the JCS reference's canonical form of its
// JSON, and the places it gives for members are where JCS puts them.
func checkCanonical(t testing.TB, name string, rep *evaluator.Report) {
	t.Helper()
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	want, err := jcs.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.AppendCanonical(nil); !bytes.Equal(got, want) {
		t.Fatalf("%s: canonical form differs from JCS:\n%s\n%s", name, got, want)
	}
	checkPlaces(t, name, rep, raw)
}

// checkPlaces: the place AppendCanonicalPlaced gives for a member is where JCS puts it. A member
// spliced there gives the JCS reference's bytes of the report with that member added, for a name
// that sorts first, last, between two members (the signature's) and one the report already has.
func checkPlaces(t testing.TB, name string, rep *evaluator.Report, raw []byte) {
	t.Helper()
	canon := rep.AppendCanonical(nil)
	for _, member := range []string{"signature", "a", "zz", "service0", "kind"} {
		got, at := rep.AppendCanonicalPlaced([]byte("prefix"), member)
		if !bytes.Equal(got[len("prefix"):], canon) {
			t.Fatalf("%s: the placed form differs from the canonical form", name)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if _, has := m[member]; has {
			if at != -1 {
				t.Fatalf("%s: member %q exists, place %d", name, member, at)
			}
			continue
		}
		m[member] = json.RawMessage("1")
		withMember, _ := json.Marshal(m)
		want, err := jcs.Transform(withMember)
		if err != nil {
			t.Fatal(err)
		}
		at -= len("prefix")
		head, tail := "", ""
		if canon[at-1] == '{' {
			if canon[at] != '}' {
				tail = ","
			}
		} else {
			head = ","
		}
		spliced := string(canon[:at]) + head + `"` + member + `":1` + tail + string(canon[at:])
		if spliced != string(want) {
			t.Fatalf("%s: member %q spliced at %d:\n%s\nJCS:\n%s", name, member, at, spliced, want)
		}
	}
}
