package rules

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestDecideMemoMatchesEvaluation holds the memoized decisions to a fresh evaluation of every
// event: one activation serves a log of random events (so later events hit the memo), another is
// new for each (so nothing is memoized), and both must give the same values.
func TestDecideMemoMatchesEvaluation(t *testing.T) {
	ms, err := LoadMutationLog("forget-envelope.yaml", forgetEnvelopeSource(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range MutLogSubjects {
		if u := ms.uses[s]; u == nil || !u.ok || !u.canon {
			t.Fatalf("%s: the shipped decisions should be memoized by equality pattern", s)
		}
	}
	if !ms.uses["reinsert"].sets {
		t.Fatal("reinsert reads forget.envelope only by `in`: it should be keyed as a set")
	}
	if ms.ReadsKeys("forget") || !ms.ReadsKeys("reinsert") {
		t.Fatal("ReadsKeys: forget reads no key identity, reinsert does")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"p1", "p2", "p3", "k1", "k2", ""}
	pick := func() string { return names[rng.IntN(len(names))] }
	shared := &EventActivation{}
	hits := 0
	for i := 0; i < 3000; i++ {
		ev := &LogEvent{Seq: int64(i + 1), Op: "write", HasPrincipal: rng.IntN(3) > 0, Principal: pick(),
			EnvelopeRecorded: rng.IntN(2) == 0, AuthorityChecked: rng.IntN(2) == 0, RawKey: pick(), GrantsCover: rng.IntN(2) == 0}
		fg := &LogForget{Seq: int64(i), EnvelopeRecorded: rng.IntN(3) > 0, RawKey: pick()}
		for n := rng.IntN(4); n > 0; n-- {
			fg.Envelope = append(fg.Envelope, pick())
		}
		if rng.IntN(4) == 0 {
			fg.Envelope = []string{}
		}
		for _, s := range MutLogSubjects {
			var f *LogForget
			if s == "reinsert" {
				f = fg
			}
			before := len(shared.memo)
			shared.Event, shared.Forget = ev, f
			got, err := ms.Decide(s, shared)
			if err != nil {
				t.Fatal(err)
			}
			if len(shared.memo) == before {
				hits++
			}
			want, err := ms.Decide(s, &EventActivation{Event: ev, Forget: f})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("event %d, %s: memoized %v, evaluated %v (%+v, %+v)", i, s, got, want, ev, fg)
			}
		}
	}
	if hits < 10000 {
		t.Errorf("only %d of 12000 decisions came from the memo", hits)
	}
}
