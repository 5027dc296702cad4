package mutlog_test

import (
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/gen/forget"
)

// FuzzWholeReader holds the streaming reader to Audit on any body under the caps: the same
// report, or the same refusal (rule and index), byte for byte; a log that audits gives the same
// report cut in two. Over the event or snapshot cap
// Audit refuses and the whole mode, beyond the caps by design, reads on: those are skipped.
func FuzzWholeReader(f *testing.F) {
	ms, _ := setup(f)
	for i := range 8 {
		b, err := forget.RandomLog(7, i)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(crossHeader + crossEvent(1, "write", "a", "p1") + `],"snapshot":[{"key":{"scope":{"tenant":"t1"},"name":"a"},"version":1}]}`))
	f.Add([]byte(`{"snapshot":null,"events":[1],"format":"mutation-log"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > ms.Criteria().Caps.BodyBytes {
			return
		}
		want := auditOne(t, ms, body)
		if strings.Contains(want, `_count_cap"`) {
			return
		}
		if got := auditWhole(t, ms, body); got != want {
			t.Fatalf("whole mode differs from Audit:\n got  %s\n want %s", got, want)
		}
		// A log Audit reports on, cut in two at an event the body picks, gives the same report.
		if !strings.HasPrefix(want, `{"kind":"audit_report"`) {
			return
		}
		if n := eventCount(t, body); n > 1 {
			parts := splitLog(t, body, []int{1 + len(body)%(n-1)})
			if got := auditWhole(t, ms, parts...); got != want {
				t.Fatalf("cut in two, the whole mode differs from Audit:\n got  %s\n want %s", got, want)
			}
		}
	})
}
