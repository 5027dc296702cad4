package evaluator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/pack"
)

// wholeRuns is how many random exports each property test of the whole-store check draws
// (SCOPE_HYGIENE_DIFFERENTIAL_N overrides it, as for the corpus's differential tests).
func wholeRuns() int {
	if n, err := strconv.Atoi(os.Getenv("SCOPE_HYGIENE_DIFFERENTIAL_N")); err == nil && n > 0 {
		return n
	}
	return 300
}

// bodyParts are in-memory parts named part1, part2, ...
func bodyParts(bodies ...[]byte) []evaluator.WholePart {
	out := make([]evaluator.WholePart, len(bodies))
	for i, b := range bodies {
		out[i] = evaluator.WholePart{Name: "part" + strconv.Itoa(i+1),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
	}
	return out
}

func auditWhole(t *testing.T, bodies ...[]byte) (*evaluator.WholeReport, *evaluator.WholeRefusal) {
	t.Helper()
	w, ref, err := evaluator.AuditWhole(shipped(t), bodyParts(bodies...), now)
	if err != nil {
		t.Fatalf("AuditWhole: %v", err)
	}
	return w, ref
}

// splitRecords writes body's records into k parts, each record to a random part, in order; every
// part keeps the header. A part left empty gets no records array entries and is dropped.
func splitRecords(t *testing.T, body []byte, k int, r *rand.Rand) [][]byte {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	var recs []json.RawMessage
	if err := json.Unmarshal(top["records"], &recs); err != nil {
		t.Fatal(err)
	}
	groups := make([][]json.RawMessage, k)
	for _, rec := range recs {
		j := r.Intn(k)
		groups[j] = append(groups[j], rec)
	}
	var out [][]byte
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		part := map[string]json.RawMessage{}
		for n, v := range top {
			part[n] = v
		}
		part["records"] = marshal(t, g)
		out = append(out, marshal(t, part))
	}
	return out
}

// TestWholeEqualsServiceUnderCaps: for any export under the caps, the whole-store check of it as
// one part gives the service's report, byte for byte in JSON, or the service's refusal.
func TestWholeEqualsServiceUnderCaps(t *testing.T) {
	ps := shipped(t)
	rng := rand.New(rand.NewSource(28))
	refused := 0
	for n := range wholeRuns() {
		body := gen.RandomExport(rng)
		rep, ref, err := evaluator.Audit(ps, body, now)
		if err != nil {
			t.Fatal(err)
		}
		w, wref := auditWhole(t, body)
		if ref != nil {
			refused++
			if wref == nil || !cmp.Equal(wref.Refusal, ref) {
				t.Fatalf("run %d: service refuses %s, whole-store check gives %+v", n, ref.Rule, wref)
			}
			continue
		}
		if wref != nil {
			t.Fatalf("run %d: whole-store check refuses %s at %v", n, wref.Refusal.Rule, wref.Refusal.RecordIndex)
		}
		if d := cmp.Diff(string(marshal(t, rep)), string(marshal(t, w.Report))); d != "" {
			t.Fatalf("run %d: report differs (-service +whole):\n%s\nexport %s", n, d, body)
		}
	}
	t.Logf("%d exports, %d refused", wholeRuns(), refused)
}

// TestWholeSplitEqualsWhole: any split of an export's records into parts, analysed together,
// gives the report of the export analysed whole.
func TestWholeSplitEqualsWhole(t *testing.T) {
	rng := rand.New(rand.NewSource(2828))
	for n := range wholeRuns() {
		body := gen.RandomExport(rng)
		whole, ref := auditWhole(t, body)
		if ref != nil {
			continue
		}
		parts := splitRecords(t, body, 1+rng.Intn(4), rng)
		split, sref := auditWhole(t, parts...)
		if sref != nil {
			t.Fatalf("run %d: split refused: %s in %s", n, sref.Refusal.Rule, sref.Part)
		}
		if d := cmp.Diff(string(marshal(t, whole.Report)), string(marshal(t, split.Report))); d != "" {
			t.Fatalf("run %d: %d parts differ from the whole (-whole +parts):\n%s", n, len(parts), d)
		}
	}
}

// TestWholePackSplitEqualsWhole: pack's own split of an export, analysed together, gives the
// report of the export analysed whole.
func TestWholePackSplitEqualsWhole(t *testing.T) {
	rng := rand.New(rand.NewSource(1000))
	compared := 0
	defer func() {
		if compared == 0 {
			t.Error("no export was split and compared")
		}
		t.Logf("%d exports split by pack and compared", compared)
	}()
	for n := range wholeRuns() / 3 {
		var sub pack.Submission
		if err := json.Unmarshal(gen.RandomExport(rng), &sub); err != nil {
			continue // a manifest pack's types do not hold: not a pack submission
		}
		// Grow the export past the caps so that pack splits it.
		base := sub.Records
		for k := 1; len(sub.Records) < 1500; k++ {
			for _, r := range base {
				c := pack.Record{}
				for m, v := range r {
					c[m] = v
				}
				c["id"] = r["id"].(string) + "-" + strconv.Itoa(k)
				sub.Records = append(sub.Records, c)
			}
		}
		body, err := sub.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		parts, _, err := pack.Split(&sub)
		if err != nil {
			t.Fatal(err)
		}
		bodies := make([][]byte, len(parts))
		for i, p := range parts {
			if bodies[i], err = p.Marshal(); err != nil {
				t.Fatal(err)
			}
		}
		whole, ref := auditWhole(t, body)
		split, sref := auditWhole(t, bodies...)
		if (ref == nil) != (sref == nil) {
			t.Fatalf("run %d: whole refused %v, parts refused %v", n, ref, sref)
		}
		if ref != nil {
			continue
		}
		if len(parts) < 2 {
			t.Fatalf("run %d: %d records in %d part(s)", n, len(sub.Records), len(parts))
		}
		if d := cmp.Diff(string(marshal(t, whole.Report)), string(marshal(t, split.Report))); d != "" {
			t.Fatalf("run %d: pack's %d parts differ from the whole:\n%s", n, len(parts), d)
		}
		compared++
	}
}

// splitClusterParts is an export whose one cross-scope cluster has a copy in each of two parts.
func splitClusterParts(t *testing.T) (a, b []byte) {
	one := X("mem0", R("r1", "the same note", "user_id", "u1"), R("r2", "another note", "user_id", "u1"))
	two := X("mem0", R("r3", "the same note", "user_id", "u2"), R("r4", "a third note", "user_id", "u2"))
	return marshal(t, one), marshal(t, two)
}

// TestWholeFindsClusterSplitAcrossParts is issue 28's done-when: each part audited apart (the
// service) shows no undeclared cluster; the parts analysed together show the one they share.
func TestWholeFindsClusterSplitAcrossParts(t *testing.T) {
	a, b := splitClusterParts(t)
	for _, p := range [][]byte{a, b} {
		rep := auditWith(t, shipped(t), p)
		if u := rep.Factors.CrossScopeClusters.Undeclared; u == nil || *u != 0 {
			t.Fatalf("a part alone: undeclared %v, want 0", deref(u))
		}
	}
	w, ref := auditWhole(t, a, b)
	if ref != nil {
		t.Fatalf("refused: %s", ref.Refusal.Rule)
	}
	f := w.Report.Factors.CrossScopeClusters
	if f.Undeclared == nil || *f.Undeclared != 1 || len(*f.Clusters) != 1 {
		t.Fatalf("whole: undeclared %v, want 1", deref(f.Undeclared))
	}
	if m := (*f.Clusters)[0].Members; len(m) != 2 || m[0].ID != "r1" || m[1].ID != "r3" {
		t.Fatalf("cluster members %+v", m)
	}
}

// TestWholeRefusals: a part the service would refuse is refused with the part named; the caps do
// not apply; headers that disagree are an error naming the part and the member.
func TestWholeRefusals(t *testing.T) {
	a, b := splitClusterParts(t)
	_, ref := auditWhole(t, a, []byte(`{"family":"mem0","form":"full_text","records":[{"id":"r9"}]}`))
	if ref == nil || ref.Part != "part2" || ref.Refusal.Rule != "content_text_required" || *ref.Refusal.RecordIndex != 0 {
		t.Fatalf("refusal %+v", ref)
	}
	_, ref = auditWhole(t, a, []byte(`{"family":`))
	if ref == nil || ref.Part != "part2" || ref.Refusal.Rule != "export_required" {
		t.Fatalf("refusal %+v", ref)
	}
	_, ref = auditWhole(t, a, a)
	if ref == nil || ref.Part != "part2" || ref.Refusal.Rule != "record_id_duplicate" {
		t.Fatalf("duplicate ids across parts: %+v", ref)
	}
	other := bytes.Replace(b, []byte(`"mem0"`), []byte(`"generic"`), 1)
	_, _, err := evaluator.AuditWhole(shipped(t), bodyParts(a, other), now)
	if err == nil || err.Error() != "whole-store check: part part2: member family differs from the first part's" {
		t.Fatalf("disagreeing headers: %v", err)
	}
	// Over the record cap: no refusal in this mode.
	var recs []M
	for i := range 1200 {
		recs = append(recs, R("r"+strconv.Itoa(i), "note "+strconv.Itoa(i%700), "user_id", "u"+strconv.Itoa(i%3)))
	}
	w, ref := auditWhole(t, marshal(t, X("mem0", recs...)))
	if ref != nil || w.Report.Records != 1200 {
		t.Fatalf("over the caps: %+v %+v", ref, w)
	}
}

// TestWholeEqualsServiceOnCorpus: on every export of the pinned corpus (refusals, edge cases,
// every family), the whole-store check as one part gives the service's report or refusal; only
// the refusals about the caps do not apply.
func TestWholeEqualsServiceOnCorpus(t *testing.T) {
	c, err := corpus.Load(os.DirFS("../corpus"))
	if err != nil {
		t.Fatal(err)
	}
	ps := shipped(t)
	compared := 0
	for _, cs := range c.Cases {
		body, err := cs.RequestBody()
		if err != nil {
			continue
		}
		rep, ref, err := evaluator.Audit(ps, body, now)
		if err != nil {
			t.Fatal(err)
		}
		if ref != nil && (ref.Rule == evaluator.BodyBytesCap || ref.Rule == "record_count_cap") {
			continue
		}
		w, wref := auditWhole(t, body)
		compared++
		switch {
		case ref != nil && (wref == nil || !cmp.Equal(wref.Refusal, ref)):
			t.Errorf("%s: service refuses %s at %v, whole-store check gives %+v", cs.Name, ref.Rule, deref(ref.RecordIndex), wref)
		case ref == nil && wref != nil:
			t.Errorf("%s: whole-store check refuses %s at %v", cs.Name, wref.Refusal.Rule, deref(wref.Refusal.RecordIndex))
		case ref == nil:
			if d := cmp.Diff(string(marshal(t, rep)), string(marshal(t, w.Report))); d != "" {
				t.Errorf("%s: report differs (-service +whole):\n%s", cs.Name, d)
			}
		}
	}
	t.Logf("%d corpus exports compared", compared)
}

// TestWholeReadsRecordsWhereTheyLie: the spacing between records must not matter (an indented
// part gives the compact part's report), and a record that turns out to be kept after it was read
// (here the cluster's copy in part 1, whose other copy is in part 2) is read again where it lay:
// a part whose bytes change in between is an error naming it, never a report.
func TestWholeReadsRecordsWhereTheyLie(t *testing.T) {
	a, b := splitClusterParts(t)
	want, ref := auditWhole(t, a, b)
	if ref != nil {
		t.Fatalf("refusal %+v", ref)
	}
	var ia, ib bytes.Buffer
	if json.Indent(&ia, a, "\n", "\t ") != nil || json.Indent(&ib, b, "", "   ") != nil {
		t.Fatal("indent")
	}
	got, ref := auditWhole(t, ia.Bytes(), ib.Bytes())
	if ref != nil {
		t.Fatalf("indented: refusal %+v", ref)
	}
	if diff := cmp.Diff(want.Report, got.Report); diff != "" {
		t.Fatalf("indented parts differ (-compact +indented):\n%s", diff)
	}
	opens := 0
	changing := evaluator.WholePart{Name: "part1", Open: func() (io.ReadCloser, error) {
		opens++
		if opens > 1 {
			return io.NopCloser(bytes.NewReader(bytes.Repeat([]byte{' '}, len(a)))), nil
		}
		return io.NopCloser(bytes.NewReader(a)), nil
	}}
	_, ref, err := evaluator.AuditWhole(shipped(t), append([]evaluator.WholePart{changing}, bodyParts(b)...), now)
	if ref != nil || err == nil || err.Error() != "whole-store check: part part1: the part changed while it was read" {
		t.Fatalf("changed part: %+v %v", ref, err)
	}
}

// TestWholeReadsRecordsLargerThanItsWindow: a record larger than the splitter's window (256 KB)
// grows it, and its part gives the report the same part gives with that record's content short
// (the content is no other record's, so nothing else changes), read in one piece or one byte at
// a time.
func TestWholeReadsRecordsLargerThanItsWindow(t *testing.T) {
	export := func(content string) []byte {
		return []byte(`{"family":"mem0","form":"full_text","records":[` +
			`{"id":"a","content_text":"same","user_id":"u1"},` +
			`{"id":"b","content_text":"` + content + `","user_id":"u1"},` +
			`{"id":"c","content_text":"same","user_id":"u2"}]}`)
	}
	want, ref := auditWhole(t, export("short"))
	if ref != nil {
		t.Fatalf("refusal %+v", ref)
	}
	big := export(strings.Repeat(`long \"text\" \\ `, 70_000)) // about 1.1 MB
	for _, parts := range [][]evaluator.WholePart{bodyParts(big), oneByteParts(big)} {
		got, ref, err := evaluator.AuditWhole(shipped(t), parts, now)
		if err != nil || ref != nil {
			t.Fatalf("refusal %+v, error %v", ref, err)
		}
		if d := cmp.Diff(want.Report, got.Report); d != "" {
			t.Fatalf("report differs (-short +long):\n%s", d)
		}
	}
}

// TestWholeFastReadEqualsTree: the fast read of a batch (whole_lex.go) and the direct read of
// records from the splitter's window (whole_direct.go) leave the check with the answer the tree
// path gives, byte for byte: on random exports (refused ones included, whose batches fall back to
// the tree path part way through a part) read as one part and split into parts, the direct read
// with its default slice and with a slice of a few hundred bytes (records then cross its end
// all the time), read whole or one byte at a time.
func TestWholeFastReadEqualsTree(t *testing.T) {
	ps := shipped(t)
	rng := rand.New(rand.NewSource(2829))
	check := func(n int, bodies ...[]byte) {
		var tree string
		for k, treeOnly := range []bool{true, false, false} {
			evaluator.WholeTreeOnly(treeOnly)
			parts := bodyParts(bodies...)
			if k == 2 {
				defer evaluator.WholeDirectBytes(1 + rng.Intn(600))()
				if n%4 == 0 {
					parts = oneByteParts(bodies...)
				}
			}
			w, ref, err := evaluator.AuditWhole(ps, parts, now)
			got := string(marshal(t, w)) + string(marshal(t, ref)) + fmt.Sprint(err)
			if k == 0 {
				tree = got
			} else if d := cmp.Diff(tree, got); d != "" {
				t.Fatalf("run %d, read %d: the fast read's answer differs (-tree +fast):\n%s", n, k, d)
			}
		}
		evaluator.WholeTreeOnly(false)
	}
	for n := range wholeRuns() {
		body := gen.RandomExport(rng)
		check(n, body)
		var top map[string]json.RawMessage
		if json.Unmarshal(body, &top) == nil && bytes.HasPrefix(bytes.TrimSpace(top["records"]), []byte("[")) {
			check(n, splitRecords(t, body, 1+rng.Intn(4), rng)...)
		}
	}
}

// TestWholeRecordsAtTheDepthLimit: a record nested to the criteria's depth limit is read, one
// level deeper is export_required, as the service answers, whether the record opens a run of the
// direct read or comes in one, the part read whole, one byte at a time, or through a small slice.
func TestWholeRecordsAtTheDepthLimit(t *testing.T) {
	ps := shipped(t)
	limit := ps.Criteria().Caps.JSONDepth
	for _, depth := range []int{limit - 1, limit, limit + 1} {
		// The export's object, the records array and the record are three levels.
		deep := `{"id":"deep","content_text":"d","user_id":"u1","extra":` +
			strings.Repeat("[", depth-3) + strings.Repeat("]", depth-3) + `}`
		for at := range 3 {
			recs := []string{`{"id":"a","content_text":"x","user_id":"u1"}`, `{"id":"b","content_text":"y","user_id":"u2"}`}
			recs = append(recs[:at], append([]string{deep}, recs[at:]...)...)
			body := []byte(`{"family":"mem0","form":"full_text","records":[` + strings.Join(recs, ",") + `]}`)
			rep, ref, err := evaluator.Audit(ps, body, now)
			if err != nil {
				t.Fatal(err)
			}
			want := string(marshal(t, rep)) + string(marshal(t, ref))
			if (ref != nil) != (depth > limit) {
				t.Fatalf("depth %d: the service's refusal is %+v", depth, ref)
			}
			for k, parts := range [][]evaluator.WholePart{bodyParts(body), oneByteParts(body), bodyParts(body)} {
				restore := func() {}
				if k == 2 {
					restore = evaluator.WholeDirectBytes(60)
				}
				w, wref, err := evaluator.AuditWhole(ps, parts, now)
				restore()
				if err != nil {
					t.Fatal(err)
				}
				var got string
				if wref != nil {
					got = "null" + string(marshal(t, wref.Refusal))
				} else {
					got = string(marshal(t, w.Report)) + "null"
				}
				if got != want {
					t.Fatalf("depth %d, at %d, read %d: got %s, want %s", depth, at, k, got, want)
				}
			}
		}
	}
}
