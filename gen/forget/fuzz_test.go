package forget

import (
	"encoding/json"
	"sort"
	"testing"
)

// FuzzExpect: the strict decoder and the oracle never panic; whatever the decoder
// accepts is valid JSON; a refusal names a rule of the closed set and nothing else;
// an accepted log's audit keeps the text's identities (checked = outside +
// unattributed + inside, judged = checked − unattributed, no_envelope = reinserts −
// checked, never a counted outside or silent where nothing was judged, mismatches =
// the sum of its kinds, counts equal their lists, lists ascending), and the
// pre-check states the audit's assessability.
func FuzzExpect(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `{"a":1,"a":2}`, `"\ud800"`, "\xef\xbb\xbf{}",
		`{"format":"mutation-log","forget_mode":"terminal","scope_dimensions":["t"],"events":[{"seq":1,"op":"forget","key":{"scope":{"t":"A"},"name":"n"},"envelope":[]},{"seq":2,"op":"reopen","key":{"scope":{"t":"a"},"name":"N "}},{"seq":3,"op":"write","key":{"scope":{"t":"A"},"name":"n"},"version":-0}],"snapshot":[]}`,
	} {
		f.Add([]byte(s))
	}
	if cases, err := Corpus(); err == nil {
		for i, c := range cases {
			if i%5 != 0 {
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
	num := func(fv Factor, m string) int { n, _ := fv[m].(int); return n }
	list := func(t *testing.T, fv Factor, m string) int {
		var xs []int64
		switch v := fv[m].(type) {
		case []int64:
			xs = v
		case []int:
			for _, x := range v {
				xs = append(xs, int64(x))
			}
		default:
			t.Fatalf("%s is not a list", m)
		}
		if !sort.SliceIsSorted(xs, func(i, j int) bool { return xs[i] < xs[j] }) {
			t.Fatalf("%s is not ascending", m)
		}
		for i := 1; i < len(xs); i++ {
			if xs[i] == xs[i-1] {
				t.Fatalf("%s repeats an entry", m)
			}
		}
		return len(xs)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := decodeStrict(body); err == nil && !json.Valid(body) {
			t.Fatalf("strict decoder accepted invalid JSON")
		}
		o := Expect(body)
		if o.Refusal != nil {
			r := o.Refusal
			if !closed[r.Rule] || o.Precheck != nil || o.Audit != nil {
				t.Fatalf("refusal outside the closed set or mixed outcome: %q", r.Rule)
			}
			if (r.Cap != nil) != (r.Rule == "event_count_cap" || r.Rule == "snapshot_count_cap" || r.Rule == "body_bytes_cap") {
				t.Fatalf("cap members on the wrong rule %s", r.Rule)
			}
			return
		}
		a := o.Audit
		for _, name := range FactorNames {
			fv, pv := a.Factors[name], o.Precheck.Factors[name]
			if fv["status"] != pv["status"] || fv["reason"] != pv["reason"] {
				t.Fatalf("%s: pre-check and audit disagree", name)
			}
			if fv["status"] == statusNotAssessable && len(fv) != 2 {
				t.Fatalf("%s: NOT ASSESSABLE factor carries numbers", name)
			}
		}
		if fv := a.Factors["forget_envelopes"]; fv["status"] == statusAssessable {
			if num(fv, "forgets") != a.Forgets || num(fv, "forgets")-num(fv, "with_envelope") != list(t, fv, "without_envelope") {
				t.Fatalf("forget_envelopes identities")
			}
		}
		if fv := a.Factors["reinserts_after_forget"]; fv["status"] == statusAssessable && num(fv, "reinserts") != list(t, fv, "seqs") {
			t.Fatalf("reinserts_after_forget count")
		}
		if fv := a.Factors["reinserts_outside_envelope"]; fv["status"] == statusAssessable {
			if num(fv, "judged") != num(fv, "checked")-num(fv, "unattributed") || num(fv, "unjudged") != num(fv, "reinserts")-num(fv, "judged") ||
				num(fv, "no_envelope") != num(fv, "reinserts")-num(fv, "checked") || num(fv, "unattributed") != list(t, fv, "unattributed_seqs") {
				t.Fatalf("reinserts_outside_envelope identities")
			}
			// outside and silent are numbers with their lists, or NOT ASSESSABLE with
			// exactly status and reason and no list (FE-R-35, FE-R-37); never a zero
			// where nothing was judged.
			noneJudged := num(fv, "reinserts") >= 1 && num(fv, "judged") == 0
			for _, m := range []string{"outside", "silent"} {
				obj, isObj := fv[m].(Factor)
				_, hasList := fv[m+"_seqs"]
				switch {
				case isObj && (len(obj) != 2 || obj["status"] != statusNotAssessable || hasList):
					t.Fatalf("%s: NOT ASSESSABLE member carries numbers", m)
				case noneJudged && !isObj:
					t.Fatalf("%s printed as a number where nothing was judged", m)
				case m == "outside" && isObj != noneJudged:
					t.Fatalf("outside NOT ASSESSABLE with something judged")
				case m == "silent" && isObj != (noneJudged || a.Coverage.Principals == 0):
					t.Fatalf("silent assessability")
				case !isObj && num(fv, m) != list(t, fv, m+"_seqs"):
					t.Fatalf("%s count", m)
				}
			}
			if _, ok := fv["silent"].(int); ok && num(fv, "silent") > num(fv, "outside") {
				t.Fatalf("silent exceeds outside")
			}
			if _, ok := fv["outside"].(int); ok && num(fv, "outside") > num(fv, "judged") {
				t.Fatalf("outside exceeds judged")
			}
		}
		if fv := a.Factors["reopens"]; fv["status"] == statusAssessable && a.Factors["reinserts_outside_envelope"]["status"] == statusAssessable &&
			num(fv, "retired_writes") != num(a.Factors["reinserts_outside_envelope"], "reinserts") {
			t.Fatalf("terminal reinserts are the retired-key writes (FE-R-36)")
		}
		if fv := a.Factors["alias_reinserts"]; fv["status"] == statusAssessable && (num(fv, "aliases") != list(t, fv, "seqs") || num(fv, "aliases") > num(fv, "reinserts")) {
			t.Fatalf("alias_reinserts identities")
		}
		if fv := a.Factors["reopens"]; fv["status"] == statusAssessable && (num(fv, "unchecked") != list(t, fv, "unchecked_seqs") || num(fv, "retired_writes") != list(t, fv, "retired_write_seqs") || num(fv, "unchecked") > num(fv, "reopens")) {
			t.Fatalf("reopens identities")
		}
		if fv := a.Factors["replay"]; fv["status"] == statusAssessable {
			kinds := list(t, fv, "missing_seqs") + list(t, fv, "extra_indexes") + list(t, fv, "version_indexes") + list(t, fv, "duplicate_indexes")
			if num(fv, "mismatches") != kinds || num(fv, "live_slots") != a.Coverage.LiveSlots ||
				num(fv, "missing") != list(t, fv, "missing_seqs") || num(fv, "extra")+num(fv, "version")+num(fv, "duplicate") > num(fv, "snapshot_entries") {
				t.Fatalf("replay identities")
			}
		}
		if a.Coverage.AliasedSlots > a.Coverage.Slots || a.Coverage.LiveSlots > a.Coverage.Slots || a.Coverage.UnattributedEvents > a.Events {
			t.Fatalf("coverage identities")
		}
		if _, err := json.Marshal(o); err != nil {
			t.Fatalf("outcome does not marshal")
		}
	})
}
