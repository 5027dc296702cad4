package evaluator_test

import (
	"bytes"
	"io"
	"math/rand"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
)

// FuzzWholeStreamingReader feeds untrusted bytes to the whole-store check's streaming reader, as
// one part and cut in two at a point the input chooses: it never panics, and one part gets the
// service's report or refusal (but for the refusals about the caps, which do not apply), and so
// does the part read one byte at a time (the splitter's window then ends at every byte: a string,
// an escape or a record cut anywhere), and so does the part whose records the direct read takes
// from the window through a slice of at most 1 to 512 bytes (a record then crosses its end).
//
//	go test ./evaluator -run '^$' -fuzz FuzzWholeStreamingReader -fuzztime 2m
func FuzzWholeStreamingReader(f *testing.F) {
	rng := rand.New(rand.NewSource(7))
	for range 8 {
		f.Add(gen.RandomExport(rng), uint16(0))
	}
	f.Add([]byte(`{"records":[{"id":"a","content_text":"x"}],"form":"full_text","family":"mem0"}`), uint16(3))
	f.Add([]byte(`{"family":"mem0","form":"full_text","records":[{"id":"a"},{"id":"a"}]}`), uint16(9))
	f.Add([]byte(`{"family":"mem0","form":"full_text","records":[1,{"id":"a"}],"records":[]}`), uint16(1))
	f.Add([]byte(`[{"family":"mem0"}]`), uint16(0))
	ps := shipped(f)
	f.Fuzz(func(t *testing.T, body []byte, cut uint16) {
		w, wref, err := evaluator.AuditWhole(ps, bodyParts(body), now)
		if err != nil {
			t.Fatalf("one part: %v", err)
		}
		rep, ref, err := evaluator.Audit(ps, body, now)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ref != nil && (ref.Rule == evaluator.BodyBytesCap || ref.Rule == "record_count_cap"):
		case ref != nil:
			if wref == nil || !cmp.Equal(wref.Refusal, ref) {
				t.Fatalf("service refuses %+v, whole-store check gives %+v", ref, wref)
			}
		case wref != nil:
			t.Fatalf("whole-store check refuses %+v", wref.Refusal)
		default:
			if d := cmp.Diff(string(marshal(t, rep)), string(marshal(t, w.Report))); d != "" {
				t.Fatalf("report differs:\n%s", d)
			}
		}
		b, bref, err := evaluator.AuditWhole(ps, oneByteParts(body), now)
		switch {
		case err != nil:
			t.Fatalf("one byte at a time: %v", err)
		case !cmp.Equal(bref, wref):
			t.Fatalf("one byte at a time: refusal %+v, not %+v", bref, wref)
		case wref == nil:
			if d := cmp.Diff(string(marshal(t, w.Report)), string(marshal(t, b.Report))); d != "" {
				t.Fatalf("one byte at a time: report differs:\n%s", d)
			}
		}
		restore := evaluator.WholeDirectBytes(1 + int(cut)%512)
		d, dref, err := evaluator.AuditWhole(ps, bodyParts(body), now)
		restore()
		switch {
		case err != nil:
			t.Fatalf("small direct slice: %v", err)
		case !cmp.Equal(dref, wref):
			t.Fatalf("small direct slice: refusal %+v, not %+v", dref, wref)
		case wref == nil:
			if diff := cmp.Diff(string(marshal(t, w.Report)), string(marshal(t, d.Report))); diff != "" {
				t.Fatalf("small direct slice: report differs:\n%s", diff)
			}
		}
		at := int(cut) % (len(body) + 1)
		// Two arbitrary halves: anything but a panic (a refusal, or headers that disagree).
		_, _, _ = evaluator.AuditWhole(ps, bodyParts(body[:at], body[at:]), now)
	})
}

// oneByteParts are in-memory parts read one byte at a time, named part1, part2, ...
func oneByteParts(bodies ...[]byte) []evaluator.WholePart {
	out := bodyParts(bodies...)
	for i, b := range bodies {
		out[i].Open = func() (io.ReadCloser, error) { return io.NopCloser(iotest.OneByteReader(bytes.NewReader(b))), nil }
	}
	return out
}
