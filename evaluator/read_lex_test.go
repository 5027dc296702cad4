package evaluator_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The read-once path (read_lex.go) is held to the tree path: on any body, the same refusal, the
// same pre-check, the same report and the same caller member.

// sameAnswers fails t when the two paths answer body differently.
func sameAnswers(t *testing.T, ps *rules.ProgramSet, body []byte) {
	t.Helper()
	tree := evaluator.TreeOnly(evaluator.Options{})
	repT, refT, errT := evaluator.AuditWith(ps, body, now, tree)
	repL, refL, errL := evaluator.AuditWith(ps, body, now, evaluator.Options{})
	same(t, "audit", []any{repT, refT, errT != nil}, []any{repL, refL, errL != nil})
	preT, refT, errT := evaluator.PrecheckWith(ps, body, now, tree)
	preL, refL, errL := evaluator.PrecheckWith(ps, body, now, evaluator.Options{})
	same(t, "precheck", []any{preT, refT, errT != nil}, []any{preL, refL, errL != nil})
	// The caller member, from a body handed over (the server's way) and from a copy.
	owned := len(body)%2 == 0
	pT, refT2, _ := evaluator.PrepareWith(ps, bytes.Clone(body), evaluator.TreeOnly(evaluator.Options{OwnedBody: owned}))
	pL, refL2, _ := evaluator.PrepareWith(ps, bytes.Clone(body), evaluator.Options{OwnedBody: owned})
	same(t, "prepare", []any{refT2, pT == nil}, []any{refL2, pL == nil})
	if pT != nil && pL != nil {
		sT, prT, isT := pT.Caller()
		sL, prL, isL := pL.Caller()
		same(t, "caller", []any{sT, prT, isT}, []any{sL, prL, isL})
		pT.Release()
		pL.Release()
	}
}

func same(t *testing.T, what string, tree, lex []any) {
	t.Helper()
	a, errA := json.Marshal(tree)
	b, errB := json.Marshal(lex)
	if errA != nil || errB != nil || !bytes.Equal(a, b) || !reflect.DeepEqual(tree, lex) {
		t.Fatalf("%s: tree path %s\nread-once path %s", what, a, b)
	}
}

// reordered are body's top-level members written in other orders: records first (the read-once
// path reads them after the rest), and the manifest last (after the records).
func reordered(body []byte) [][]byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	write := func(first, last string) []byte {
		var b bytes.Buffer
		b.WriteByte('{')
		put := func(k string) {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			b.Write(m[k])
		}
		if _, ok := m[first]; ok {
			put(first)
		}
		for k := range m {
			if k != first && k != last {
				put(k)
			}
		}
		if _, ok := m[last]; ok {
			put(last)
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	return [][]byte{write("records", ""), write("", "manifest"), write("caller", "family")}
}

// corpusBodies are the bodies of the corpus cases.
func corpusBodies(t testing.TB) [][]byte {
	files, _ := filepath.Glob("../corpus/cases/*.json")
	var out [][]byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Body json.RawMessage `json:"body"`
		}
		if json.Unmarshal(raw, &c) != nil || len(c.Body) == 0 {
			continue
		}
		body := []byte(c.Body)
		var s string
		if json.Unmarshal(c.Body, &s) == nil {
			body = []byte(s) // a body given as text
		}
		out = append(out, body)
	}
	return out
}

// TestLexMatchesTree: every corpus body (a quarter of them reordered too) and every max-size
// export get the same answers from both paths; the read-once path reads every max-size export and
// most corpus bodies that are not refused (it is the request path, not a corner of it).
func TestLexMatchesTree(t *testing.T) {
	ps := shipped(t)
	read, audited := 0, 0
	for i, body := range corpusBodies(t) {
		sameAnswers(t, ps, body)
		if i%4 == 0 { // reordered, a quarter of them (the fuzz target reorders the rest)
			for _, b := range reordered(body) {
				sameAnswers(t, ps, b)
			}
		}
		if _, ref, _ := evaluator.Audit(ps, body, now); ref == nil {
			audited++
			if evaluator.LexReads(ps, body) {
				read++
			}
		}
	}
	t.Logf("the read-once path read %d of the %d corpus bodies that audit", read, audited)
	if audited == 0 || read*10 < audited*9 {
		t.Errorf("the read-once path read %d of %d audited corpus bodies", read, audited)
	}
	for _, fam := range gen.MaxSizeFamilies {
		body := gen.MaxSizeExport(fam)
		if !evaluator.LexReads(ps, body) {
			t.Errorf("%s: the max-size export is not read by the read-once path", fam)
		}
		sameAnswers(t, ps, body)
		for _, b := range reordered(body) {
			sameAnswers(t, ps, b)
		}
	}
}

// FuzzLexMatchesTree holds the read-once path to the tree path on arbitrary bytes and on a
// structured export built from them, in its order or reordered.
func FuzzLexMatchesTree(f *testing.F) {
	for i, body := range corpusBodies(f) {
		if i%8 == 0 { // TestLexMatchesTree reads them all
			f.Add(body)
		}
	}
	for _, raw := range []string{
		``, `{}`, `[]`, `{"records":[{"id":"a","content_text":"x"}],"family":"mem0","form":"full_text"}`,
		`{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"x"}],"manifest":{"declared_scope_keys":["user"]}}`,
		`{"family":"letta","form":"full_text","records":[{"id":"a","content_text":"x","attached_to":["b","a","",5,null,"a"],"template_id":{"b":[1.0,"x"],"a":2}}]}`,
		`{"family":"generic","form":"full_text","caller":"0x1","manifest":{"declared_scope_keys":["metadata","id","supersedes"]},"records":[{"id":"a","content_text":"x","metadata":{"shared":true},"supersedes":["a","b"]}]}`,
	} {
		f.Add([]byte(raw))
	}
	ps := shipped(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		sameAnswers(t, ps, body)
		// A structured export, in its order or in one of the others (the first byte chooses).
		s := structured(body)
		if ro := reordered(s); len(body) > 0 && len(ro) > 0 && body[0]%4 != 0 {
			s = ro[int(body[0])%len(ro)]
		}
		sameAnswers(t, ps, s)
	})
}

// BenchmarkReadPaths times, interleaved in every iteration on each max-size export, a bare
// jsontext token scan (the floor), the pre-check and the audit through the tree path, and both
// through the read-once path, and prints the ratios of their medians: figures of one run, which a
// loaded machine moves together. The times are the process's CPU time (the collector's included),
// which a machine shared with other builds disturbs far less than the wall clock.
func BenchmarkReadPaths(b *testing.B) {
	ps := shipped(b)
	tree := evaluator.TreeOnly(evaluator.Options{})
	for _, fam := range gen.MaxSizeFamilies {
		body := gen.MaxSizeExport(fam)
		b.Run(fam, func(b *testing.B) {
			runs := []func(){
				func() { scanTokens(b, body) },
				func() { mustPrecheck(b, ps, body, tree) },
				func() { mustPrecheck(b, ps, body, evaluator.Options{}) },
				func() { mustAudit(b, ps, body, tree) },
				func() { mustAudit(b, ps, body, evaluator.Options{}) },
			}
			took := make([][]time.Duration, len(runs))
			for i := 0; i < b.N; i++ {
				for j, run := range runs {
					t0 := cpuTime()
					run()
					took[j] = append(took[j], cpuTime()-t0)
				}
			}
			m := make([]float64, len(runs))
			for j := range took {
				slices.Sort(took[j])
				m[j] = float64(took[j][len(took[j])/2])
			}
			b.ReportMetric(m[1]/m[0], "tree-precheck/scan")
			b.ReportMetric(m[2]/m[0], "lex-precheck/scan")
			b.ReportMetric(m[3]/m[0], "tree-audit/scan")
			b.ReportMetric(m[4]/m[0], "lex-audit/scan")
			b.ReportMetric(m[2]/m[1], "precheck-lex/tree")
			b.ReportMetric(m[4]/m[3], "audit-lex/tree")
		})
	}
}

func scanTokens(b *testing.B, body []byte) {
	d := jsontext.NewDecoder(bytes.NewReader(body))
	for {
		if _, err := d.ReadToken(); err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			return
		}
	}
}

func mustPrecheck(b *testing.B, ps *rules.ProgramSet, body []byte, opts evaluator.Options) {
	if _, ref, err := evaluator.PrecheckWith(ps, body, now, opts); ref != nil || err != nil {
		b.Fatal(ref, err)
	}
}

func mustAudit(b *testing.B, ps *rules.ProgramSet, body []byte, opts evaluator.Options) {
	if _, ref, err := evaluator.AuditWith(ps, body, now, opts); ref != nil || err != nil {
		b.Fatal(ref, err)
	}
}

// cpuTime is the process's CPU time (CLOCK_PROCESS_CPUTIME_ID).
func cpuTime() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 2, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
