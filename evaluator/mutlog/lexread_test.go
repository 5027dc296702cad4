package mutlog

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/scopehygiene/scope-hygiene/gen/forget"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The request path reads a log with lexRead, one pass with no value tree; the reference is the
// tree path it replaced (jsontree.Decode, validate in the criteria's order, readLog), which still
// answers every log lexRead gives up on. These tests hold lexRead to it: on every body, lexRead
// reads a log exactly when the tree path accepts it, and the same log.

func loadSet(t testing.TB) *rules.MutLogSet {
	t.Helper()
	src, err := os.ReadFile("../../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := rules.LoadMutationLog("forget-envelope.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// compareRead fails t when lexRead and the tree path disagree on body.
func compareRead(t *testing.T, ms *rules.MutLogSet, body []byte) {
	t.Helper()
	want, ref := treeRead(ms, body)
	got := lexRead(ms, body, false)
	facts := lexRead(ms, body, true)
	if (got == nil) != (want == nil) || (facts == nil) != (want == nil) {
		t.Fatalf("%.200q: lexRead read %v (facts only %v), the tree path refused %v", body, got != nil, facts != nil, ref)
	}
	if got == nil {
		return
	}
	got.envs = nil               // the one-pass reader's backing of the envelopes, which the events compare
	got.ids, want.ids = nil, nil // scratch whose arena backs the identities the log holds
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%.200q: lexRead read\n%+v\nthe tree path\n%+v", body, got, want)
	}
	// The facts-only read has what the log facts and the forget decisions read.
	if facts.mode != want.mode || facts.principals != want.principals || facts.hasSnap != want.hasSnap ||
		len(facts.events) != len(want.events) || !reflect.DeepEqual(facts.declared, want.declared) {
		t.Fatalf("%.200q: the facts-only read differs", body)
	}
	for i := range facts.events {
		f, w := facts.events[i], want.events[i]
		f.raw, f.slot, w.raw, w.slot = "", 0, "", 0
		if !reflect.DeepEqual(f, w) {
			t.Fatalf("%.200q: event %d: facts-only %+v, tree %+v", body, i, f, w)
		}
	}
}

// corpusBodies are the pinned corpus's bodies, the max-size logs and some random ones.
func corpusBodies(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, dir := range []string{"cases", "hand"} {
		cs, err := forget.ReadCaseDir(filepath.Join("..", "..", "corpus", "forget-envelope", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			b, err := c.SubmittedBytes()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	for _, m := range forget.MaxSizeModes {
		out = append(out, forget.MaxSizeLog(m))
	}
	for i := 0; i < 300; i++ {
		b, err := forget.RandomLog(7, i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestLexReadMatchesTree(t *testing.T) {
	ms := loadSet(t)
	bodies := corpusBodies(t)
	if len(bodies) < 400 {
		t.Fatalf("only %d bodies", len(bodies))
	}
	for _, b := range bodies {
		compareRead(t, ms, b)
	}
	// Edits that move a valid log across a check that needs the whole text.
	edits := [][2]string{
		{`"scope_dimensions":["tenant","agent","session"]`, `"scope_dimensions":["tenant","agent"]`},
		{`"principal-00"`, `"principal-99"`},
		{`"seq":2}`, `"seq":1}`},
		{`"seq":3,`, `"seq":1,`},
		{`"seq":4`, `"seq":-4`},
		{`"version":1`, `"version":1.0`},
		{`"envelope":[`, `"envelope":[1,`},
		{`"op":"reassign"`, `"op":"reassign","to":""`},
		{`"session":{`, `"session":{"x":"y",`},
		{`"grants":[{`, `"grants":[{"x":"y",`},
		{`"format":"mutation-log"`, `"format":"mutation-log","reinsert_identity":"new_key","forget_semantics":"tombstone_only"`},
		{`"snapshot":[`, `"snapshot":null,"x":[`},
		{`"name":"`, `"name":" A`},
		{`"tenant":"`, `"tenant":null,"t":"`},
	}
	for _, m := range forget.MaxSizeModes {
		body := forget.MaxSizeLog(m)
		for _, e := range edits {
			compareRead(t, ms, bytes.Replace(body, []byte(e[0]), []byte(e[1]), 1))
			compareRead(t, ms, bytes.ReplaceAll(body, []byte(e[0]), []byte(e[1])))
		}
	}
}

// FuzzLexReadMatchesTree holds lexRead to the tree path on arbitrary bytes.
func FuzzLexReadMatchesTree(f *testing.F) {
	ms := loadSet(f)
	for i, b := range corpusBodies(f) {
		if i%4 == 0 && len(b) < 8<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) { compareRead(t, ms, body) })
}

// TestLexReadStringsOutliveTheReader: a log's strings (escaped ones are unescaped into the
// reader's arena) must not change when the pooled reader reads other logs.
func TestLexReadStringsOutliveTheReader(t *testing.T) {
	ms := loadSet(t)
	body := bytes.ReplaceAll(forget.MaxSizeLog(forget.ModeTransitional), []byte(`"principal-0`), []byte(`"\u0070rincipal-0`))
	first := lexRead(ms, body, false)
	if first == nil {
		t.Fatal("the escaped log was not read")
	}
	dump := func(l *log) string {
		var b bytes.Buffer
		for _, e := range l.events {
			b.WriteString(e.principal + "|" + e.raw + "|")
			for _, s := range e.envelope {
				b.WriteString(s + ",")
			}
		}
		return b.String()
	}
	want := dump(first)
	if !bytes.Contains([]byte(want), []byte("principal-0")) {
		t.Fatal("no escaped principal was read")
	}
	for i := 0; i < 20; i++ {
		b, err := forget.RandomLog(5, i)
		if err != nil {
			t.Fatal(err)
		}
		lexRead(ms, bytes.ReplaceAll(b, []byte(`"p`), []byte(`"\u0071`)), false)
		lexRead(ms, body, false)
	}
	if dump(first) != want {
		t.Fatal("a log's strings changed after the reader read other logs")
	}
}
