package evaluator_test

import (
	"encoding/json"
	"math/rand"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// outcome is everything an export is answered with, as bytes: the pre-check, the audit (or the
// refusal, or the error) and the caller member.
func outcome(t *testing.T, ps *rules.ProgramSet, body []byte, opts evaluator.Options) string {
	t.Helper()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var out []any
	pre, ref, err := evaluator.PrecheckWith(ps, body, now, opts)
	out = append(out, pre, ref, err != nil)
	rep, ref, err := evaluator.AuditWith(ps, body, now, opts)
	out = append(out, rep, ref, err != nil)
	if p, ref, err := evaluator.PrepareWith(ps, body, opts); ref == nil && err == nil {
		out = append(out, preparedOutcome(t, p))
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// preparedOutcome is what a prepared export answers: its caller member, pre-check and audit.
func preparedOutcome(t *testing.T, p *evaluator.Prepared) string {
	t.Helper()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, present, isString := p.Caller()
	pre := p.Precheck(now)
	rep, err := p.Audit(now)
	b, err2 := json.Marshal([]any{s, present, isString, pre, rep, err != nil})
	if err2 != nil {
		t.Fatal(err2)
	}
	return string(b)
}

// ownedBodies are exports of every shape the owned path must answer alike: max-size, random
// (escaped strings, refusals), canaries, and bodies that are not exports.
func ownedBodies(t *testing.T) [][]byte {
	var bodies [][]byte
	for _, f := range gen.MaxSizeFamilies {
		bodies = append(bodies, gen.MaxSizeExport(f))
	}
	r := rand.New(rand.NewSource(7))
	for range 40 {
		bodies = append(bodies, gen.RandomExport(r))
	}
	for _, c := range [][3]string{{"mem0", "platform", "full_text"}, {"letta", "mixed", "hash_only"}, {"zep_graphiti", "graphiti", "full_text"}} {
		bodies = append(bodies, marshal(t, with(canaryExport(c[0], c[1], c[2]), "caller", "c\u00e9\\\"")))
	}
	for _, s := range []string{``, `{}`, `{"a":1,"a":2}`, `{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"\ud800"}]}`} {
		bodies = append(bodies, []byte(s))
	}
	return bodies
}

// TestOwnedBodyAnswersAlike: decoding the body in place (Options.OwnedBody) answers every body
// exactly as copying it does, and the report's strings then do point into the body.
func TestOwnedBodyAnswersAlike(t *testing.T) {
	ps := shipped(t)
	aliased := 0
	for i, body := range ownedBodies(t) {
		want := outcome(t, ps, slices.Clone(body), evaluator.Options{})
		owned := slices.Clone(body)
		if got := outcome(t, ps, owned, evaluator.Options{OwnedBody: true}); got != want {
			t.Fatalf("body %d: owned\n%s\ncopied\n%s", i, got, want)
		}
		rep, ref, err := evaluator.AuditWith(ps, owned, time.Time{}, evaluator.Options{OwnedBody: true})
		if err != nil || ref != nil {
			continue
		}
		if c := rep.Factors.Duplicates.Clusters; c != nil && len(*c) > 0 && pointsInto((*c)[0].Members[0], owned) {
			aliased++
		}
	}
	if aliased == 0 {
		t.Fatal("no report string points into an owned body: the body was copied")
	}
}

// TestCopiedBodyMayBeReused: without OwnedBody the caller may overwrite its buffer as soon as
// Prepare returns (a server reading the next request into it); the prepared export still
// answers as if nothing had happened.
func TestCopiedBodyMayBeReused(t *testing.T) {
	ps := shipped(t)
	bodies := ownedBodies(t)
	for i, body := range bodies {
		p, ref, err := evaluator.Prepare(ps, slices.Clone(body))
		if ref != nil || err != nil {
			continue
		}
		want := preparedOutcome(t, p)
		buf := slices.Clone(body)
		if p, _, _ = evaluator.Prepare(ps, buf); p == nil {
			t.Fatalf("body %d: prepared once, not twice", i)
		}
		other := append(slices.Clone(bodies[(i+1)%len(bodies)]), '!')
		for j := range buf {
			buf[j] = other[j%len(other)] ^ 0x20
		}
		if got := preparedOutcome(t, p); got != want {
			t.Fatalf("body %d: after the buffer was overwritten\n%s\nuntouched\n%s", i, got, want)
		}
	}
}

// pointsInto is true when s's bytes lie in b.
func pointsInto(s string, b []byte) bool {
	if s == "" || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&b[0]))
	return p >= lo && p < lo+uintptr(len(b))
}

// BenchmarkMaxSizeBody audits each max-size export with the body copied (Audit) and handed over
// (Options.OwnedBody), for the bytes and allocations the copy costs.
func BenchmarkMaxSizeBody(b *testing.B) {
	ps, err := rules.Default()
	if err != nil {
		b.Fatal(err)
	}
	for _, fam := range gen.MaxSizeFamilies {
		body := gen.MaxSizeExport(fam)
		for _, owned := range []bool{false, true} {
			name := fam + "/copied"
			if owned {
				name = fam + "/owned"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, ref, err := evaluator.AuditWith(ps, body, time.Time{}, evaluator.Options{OwnedBody: owned}); err != nil || ref != nil {
						b.Fatal(err, ref)
					}
				}
			})
		}
	}
}

// TestAnswerOutlivesTheBody: Audit and Precheck read a body that is not handed over where it
// lies, and the caller may reuse it once they return: the answers they returned must not change
// when the caller writes over the body, nor when the pooled buffers they used are reused.
func TestAnswerOutlivesTheBody(t *testing.T) {
	ps := shipped(t)
	bodies := ownedBodies(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	marshal := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for i, body := range bodies {
		// The reference: the same answers from a body handed over and never changed.
		owned := evaluator.Options{OwnedBody: true}
		rep, ref, err := evaluator.AuditWith(ps, slices.Clone(body), now, owned)
		pre, pref, perr := evaluator.PrecheckWith(ps, slices.Clone(body), now, owned)
		want := marshal([]any{rep, ref, err != nil, pre, pref, perr != nil})
		mine := slices.Clone(body)
		rep, ref, err = evaluator.Audit(ps, mine, now)
		pre, pref, perr = evaluator.Precheck(ps, mine, now)
		for k := range mine {
			mine[k] = '#' // the caller reuses its buffer
		}
		for j := 1; j <= 3; j++ {
			other := bodies[(i+j)%len(bodies)]
			evaluator.Audit(ps, other, now)
			evaluator.Precheck(ps, other, now)
		}
		if got := marshal([]any{rep, ref, err != nil, pre, pref, perr != nil}); got != want {
			t.Fatalf("body %d: the answer changed when the caller wrote over its body\n%s\nwant\n%s", i, got, want)
		}
	}
}
