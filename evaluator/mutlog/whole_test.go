package mutlog_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/gen/forget"
	"github.com/scopehygiene/scope-hygiene/rules"
)

var wholeEnd = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// sources are in-memory parts.
func sources(bs ...[]byte) []mutlog.PartSource {
	out := make([]mutlog.PartSource, len(bs))
	for i, b := range bs {
		out[i] = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	return out
}

// splitLog cuts a log into parts at the given event indexes: each part the header and a
// consecutive run of the events, the snapshot in the last.
func splitLog(t testing.TB, body []byte, cuts []int) [][]byte {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	var evs []json.RawMessage
	if err := json.Unmarshal(top["events"], &evs); err != nil {
		t.Fatal(err)
	}
	snap, hasSnap := top["snapshot"]
	delete(top, "snapshot")
	var out [][]byte
	from := 0
	for i, c := range append(cuts, len(evs)) {
		top["events"], _ = json.Marshal(evs[from:c])
		if hasSnap && i == len(cuts) {
			top["snapshot"] = snap
		}
		b, err := json.Marshal(top)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		from = c
	}
	return out
}

// randomCuts cuts n events into 1 to 5 consecutive runs, none empty.
func randomCuts(rng *rand.Rand, n int) []int {
	var cuts []int
	for k := rng.IntN(5); k > 0; k-- {
		if c := 1 + rng.IntN(max(n-1, 1)); c < n {
			cuts = append(cuts, c)
		}
	}
	// sorted and distinct
	for i := range cuts {
		for j := i + 1; j < len(cuts); j++ {
			if cuts[j] < cuts[i] {
				cuts[i], cuts[j] = cuts[j], cuts[i]
			}
		}
	}
	out := cuts[:0]
	for i, c := range cuts {
		if i == 0 || c != cuts[i-1] {
			out = append(out, c)
		}
	}
	return out
}

func eventCount(t testing.TB, body []byte) int {
	var top struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	return len(top.Events)
}

// outcome is a result as the tests compare it: the report's JSON or the refusal's.
func outcome(t testing.TB, rep *mutlog.Report, ref any, err error) string {
	t.Helper()
	return mutlog.OutcomeJSON(t, rep, ref, err)
}

func auditOne(t testing.TB, ms *rules.MutLogSet, body []byte) string {
	rep, ref, err := mutlog.Audit(ms, body, wholeEnd)
	return outcome(t, rep, ref, err)
}

func auditWhole(t testing.TB, ms *rules.MutLogSet, parts ...[]byte) string {
	res, ref, err := mutlog.AuditWhole(ms, sources(parts...), wholeEnd)
	if ref != nil {
		return outcome(t, nil, &ref.Refusal, err) // as Audit would say it: the rule and the index
	}
	if res == nil {
		return outcome(t, nil, nil, err)
	}
	return outcome(t, res.Report, nil, err)
}

func differentialN() int {
	if n, err := strconv.Atoi(os.Getenv("SCOPE_HYGIENE_DIFFERENTIAL_N")); err == nil && n > 0 {
		return n
	}
	return 400
}

// TestWholeEqualsAuditUnderCaps: for any log under the caps, the whole mode's report (or
// refusal) is Audit's, byte for byte, read as one part or cut into any consecutive parts.
func TestWholeEqualsAuditUnderCaps(t *testing.T) {
	ms, _ := setup(t)
	rng := rand.New(rand.NewPCG(28, 1))
	for i := range differentialN() {
		body, err := forget.RandomLog(28, i)
		if err != nil {
			t.Fatal(err)
		}
		want := auditOne(t, ms, body)
		if got := auditWhole(t, ms, body); got != want {
			t.Fatalf("log %d, one part:\n got  %s\n want %s", i, got, want)
		}
		cuts := randomCuts(rng, eventCount(t, body))
		if got := auditWhole(t, ms, splitLog(t, body, cuts)...); got != want {
			t.Fatalf("log %d, cut at %v:\n got  %s\n want %s", i, cuts, got, want)
		}
	}
}

// TestWholeEqualsAuditMaxSize: the max-size logs of both modes, whole and cut.
func TestWholeEqualsAuditMaxSize(t *testing.T) {
	ms, _ := setup(t)
	for _, mode := range []string{"transitional", "terminal"} {
		body := forget.MaxSizeLog(mode)
		want := auditOne(t, ms, body)
		if got := auditWhole(t, ms, body); got != want {
			t.Fatalf("%s, one part:\n got  %s\n want %s", mode, got, want)
		}
		if got := auditWhole(t, ms, splitLog(t, body, []int{1, 333, 999})...); got != want {
			t.Fatalf("%s, four parts:\n got  %s\n want %s", mode, got, want)
		}
	}
}
