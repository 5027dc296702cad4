package mutlog_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/gen/forget"
)

// bigLog is a log of n events over the caps: the max-size log's events repeated with their seqs
// moved past the previous copy's, its header written before its events (as a part over the body
// cap must be), its snapshot last.
type bigLog struct {
	header []byte // `{"forget_mode":...,` through the member before events
	events []json.RawMessage
	snap   json.RawMessage
}

func newBigLog(t testing.TB, mode string, n int) *bigLog {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(forget.MaxSizeLog(mode), &top); err != nil {
		t.Fatal(err)
	}
	var evs []map[string]json.RawMessage
	if err := json.Unmarshal(top["events"], &evs); err != nil {
		t.Fatal(err)
	}
	step := int64(0)
	for _, e := range evs {
		s, _ := strconv.ParseInt(string(e["seq"]), 10, 64)
		step = max(step, s)
	}
	g := &bigLog{snap: top["snapshot"]}
	for r := 0; len(g.events) < n; r++ {
		for _, e := range evs {
			if len(g.events) == n {
				break
			}
			s, _ := strconv.ParseInt(string(e["seq"]), 10, 64)
			e["seq"] = json.RawMessage(strconv.FormatInt(s+int64(r)*step, 10))
			b, _ := json.Marshal(e)
			g.events = append(g.events, b)
			e["seq"] = json.RawMessage(strconv.FormatInt(s, 10))
		}
	}
	delete(top, "events")
	delete(top, "snapshot")
	var h bytes.Buffer
	h.WriteByte('{')
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range top {
			if !yield(k) {
				return
			}
		}
	}) {
		kb, _ := json.Marshal(k)
		h.Write(kb)
		h.WriteByte(':')
		h.Write(top[k])
		h.WriteByte(',')
	}
	g.header = h.Bytes()
	return g
}

// parts writes the log cut at the given event indexes.
func (g *bigLog) parts(cuts []int) [][]byte {
	var out [][]byte
	from := 0
	for i, c := range append(slices.Clone(cuts), len(g.events)) {
		var b bytes.Buffer
		b.Write(g.header)
		b.WriteString(`"events":[`)
		for j, e := range g.events[from:c] {
			if j > 0 {
				b.WriteByte(',')
			}
			b.Write(e)
		}
		b.WriteByte(']')
		if i == len(cuts) {
			b.WriteString(`,"snapshot":`)
			b.Write(g.snap)
		}
		b.WriteByte('}')
		out = append(out, b.Bytes())
		from = c
	}
	return out
}

// TestWholeSplitsAgree: for a log over the caps, any cut into consecutive parts analysed together
// gives the report the log gives read as one part.
func TestWholeSplitsAgree(t *testing.T) {
	ms, _ := setup(t)
	rng := rand.New(rand.NewPCG(28, 2))
	for _, mode := range []string{"transitional", "terminal"} {
		g := newBigLog(t, mode, 4321)
		want := auditWhole(t, ms, g.parts(nil)...)
		if !strings.Contains(want, `"events":4321`) {
			t.Fatalf("%s: the whole log is not a report of 4321 events: %.300s", mode, want)
		}
		for range 6 {
			cuts := randomCuts(rng, len(g.events))
			if got := auditWhole(t, ms, g.parts(cuts)...); got != want {
				t.Fatalf("%s cut at %v:\n got  %.400s\n want %.400s", mode, cuts, got, want)
			}
		}
	}
}

const crossHeader = `{"format":"mutation-log","forget_mode":"transitional","scope_dimensions":["tenant","agent"],` +
	`"principals":[{"id":"p1","grants":[{"tenant":"t1","agent":"a1"}]},{"id":"p2","grants":[{"tenant":"t1"}]}],"events":[`

func crossEvent(seq int, op, name, principal string) string {
	e := `{"seq":` + strconv.Itoa(seq) + `,"op":"` + op + `","key":{"scope":{"tenant":"t1","agent":"a1"},"name":"` + name + `"},"principal":"` + principal + `"`
	switch op {
	case "write":
		e += `,"version":` + strconv.Itoa(seq)
	case "forget":
		e += `,"envelope":["p1"]`
	}
	return e + "}"
}

// TestWholeFindsReinsertAcrossParts: the forget in part 1, the reinsert in part 2. Each part
// audited apart finds no reinsert; the whole mode finds it, also when the log is over the caps.
func TestWholeFindsReinsertAcrossParts(t *testing.T) {
	ms, _ := setup(t)
	for _, pad := range []int{0, 998} {
		evs := []string{crossEvent(1, "write", "pref", "p1"), crossEvent(2, "forget", "pref", "p1")}
		for i := range pad {
			evs = append(evs, crossEvent(3+i, "write", "other-"+strconv.Itoa(i), "p1"))
		}
		part1 := []byte(crossHeader + strings.Join(evs, ",") + "]}")
		part2 := []byte(crossHeader + crossEvent(5000, "write", "PREF ", "p2") + "]}")
		for i, p := range [][]byte{part1, part2} {
			rep, ref, err := mutlog.Audit(ms, p, wholeEnd)
			if err != nil || ref != nil {
				t.Fatalf("pad %d part %d: %v %v", pad, i+1, err, ref)
			}
			// Apart, part 1 has no reinsert and part 2 no forget (the factor is NOT ASSESSABLE).
			if ri, ok := rep.Factors.ReinsertsAfterForget.(mutlog.Reinserts); ok && ri.Reinserts != 0 {
				t.Fatalf("pad %d part %d apart: %d reinserts, want none", pad, i+1, ri.Reinserts)
			}
		}
		res, ref, err := mutlog.AuditWhole(ms, sources(part1, part2), wholeEnd)
		if err != nil || ref != nil {
			t.Fatalf("pad %d whole: %v %v", pad, err, ref)
		}
		if res.PartEvents[0] != pad+2 || res.PartEvents[1] != 1 {
			t.Fatalf("pad %d whole: part events %v", pad, res.PartEvents)
		}
		rep := res.Report
		ri := rep.Factors.ReinsertsAfterForget.(mutlog.Reinserts)
		if ri.Reinserts != 1 || !slices.Equal(ri.Seqs, []int64{5000}) {
			t.Fatalf("pad %d whole: reinserts %+v, want seq 5000", pad, ri)
		}
		al := rep.Factors.AliasReinserts.(mutlog.Aliases)
		if al.Aliases != 1 {
			t.Fatalf("pad %d whole: aliases %+v, want the reinsert through its alias", pad, al)
		}
		if rep.Events != pad+3 {
			t.Fatalf("pad %d whole: %d events", pad, rep.Events)
		}
	}
}

// TestWholeRefusals: what the whole mode refuses, by its own rules and the criteria's, with the
// index counted over the whole log.
func TestWholeRefusals(t *testing.T) {
	ms, _ := setup(t)
	ok1 := []byte(crossHeader + crossEvent(1, "write", "a", "p1") + "]}")
	ok2 := []byte(crossHeader + crossEvent(2, "write", "b", "p1") + "]}")
	other := []byte(strings.Replace(string(ok2), "transitional", "terminal", 1))
	withSnap := []byte(crossHeader + crossEvent(1, "write", "a", "p1") + `],"snapshot":[]}`)
	badOp := []byte(crossHeader + crossEvent(2, "write", "b", "p1") + "," + strings.Replace(crossEvent(3, "write", "c", "p1"), `"write"`, `"erase"`, 1) + "]}")
	early := []byte(crossHeader + crossEvent(1, "write", "b", "p1") + "]}")
	g := newBigLog(t, "terminal", 1500)
	late := g.parts(nil)[0]
	late = append([]byte(`{"events":`), late[bytes.Index(late, []byte(`"events":`))+len(`"events":`):len(late)-1]...)
	late = append(late, []byte(`,`+string(g.header[1:len(g.header)-1])+`}`)...)
	bp := g.parts([]int{1499})
	back := append(append(append(slices.Clone(g.header), `"events":[`...), g.events[0]...), "]}"...)
	cases := []struct {
		name  string
		parts [][]byte
		rule  string
		index int
		part  int
	}{
		{"header differs", [][]byte{ok1, other}, mutlog.WholeHeaderDiffers, -1, 2},
		{"snapshot not last", [][]byte{withSnap, ok2}, mutlog.WholeSnapshotNotLast, -1, 1},
		{"seqs out of order within the window", [][]byte{ok2, early}, "", -1, 0},
		{"seq out of order past the window", [][]byte{bp[0], back, bp[1]}, mutlog.WholeSeqOrder, -1, 0},
		{"criteria rule, whole index", [][]byte{ok1, badOp}, "event_op_invalid", 2, 2},
		{"not JSON", [][]byte{ok1, []byte(`{"events":[`)}, "export_required", -1, 2},
		{"header after events in a large part", [][]byte{late}, mutlog.WholeHeaderAfterEvents, -1, 1},
	}
	for _, c := range cases {
		_, ref, err := mutlog.AuditWhole(ms, sources(c.parts...), wholeEnd)
		if c.rule == "" {
			// Both seqs are within one window: ordered as Audit orders a log, seq 1 before 2.
			if err != nil || ref != nil {
				t.Fatalf("%s: %v %v, want a report", c.name, err, ref)
			}
			continue
		}
		if err != nil || ref == nil {
			t.Fatalf("%s: %v %v, want a refusal", c.name, err, ref)
		}
		idx := -1
		if ref.Index != nil {
			idx = *ref.Index
		}
		if ref.Rule != c.rule || idx != c.index || ref.Part != c.part {
			t.Fatalf("%s: %s index %d part %d, want %s index %d part %d", c.name, ref.Rule, idx, ref.Part, c.rule, c.index, c.part)
		}
	}
}

// TestWholeWindowReorders: a log over the caps whose events are each moved fewer than an event
// cap of places from their seq order gives the report of the log in order (the window orders
// them; the chunks' buffers are reused only once none of their events waits in it).
func TestWholeWindowReorders(t *testing.T) {
	ms, _ := setup(t)
	rng := rand.New(rand.NewPCG(28, 3))
	for _, mode := range []string{"transitional", "terminal"} {
		g := newBigLog(t, mode, 4321)
		want := auditWhole(t, ms, g.parts(nil)...)
		for _, block := range []int{7, 400, 999} {
			for from := 0; from < len(g.events); from += block {
				b := g.events[from:min(from+block, len(g.events))]
				rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
			}
			if got := auditWhole(t, ms, g.parts([]int{1500, 2500})...); got != want {
				t.Fatalf("%s shuffled in blocks of %d:\n got  %.400s\n want %.400s", mode, block, got, want)
			}
			if got := auditWhole(t, ms, g.parts(nil)...); got != want {
				t.Fatalf("%s shuffled in blocks of %d, one part:\n got  %.400s\n want %.400s", mode, block, got, want)
			}
			slices.SortStableFunc(g.events, func(a, b json.RawMessage) int { return seqOf(a) - seqOf(b) })
		}
	}
}

func seqOf(e []byte) int {
	at := bytes.Index(e, []byte(`"seq":`)) + len(`"seq":`)
	end := at
	for end < len(e) && e[end] >= '0' && e[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(string(e[at:end]))
	return n
}
