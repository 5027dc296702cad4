package rules

import (
	"math/rand"
	"testing"
)

// randomValue is one member drawn from few values, so that records repeat each other's inputs
// and the memos are exercised: the literals the shipped programs test, scope-like names, the empty
// string, kinds other than strings.
func randomValue(r *rand.Rand) *Value {
	words := []string{"g001", "g002", "global", "superseded", "pending", "bool", "", "zep_graphiti"}
	switch r.Intn(8) {
	case 0, 1, 2:
		return AbsentValue
	case 3:
		return &Value{Kind: "null"}
	case 4:
		b := r.Intn(2) == 0
		return &Value{Kind: "bool", Present: true, Set: b, Bool: b, Items: 1}
	case 5:
		var ss []string
		n := r.Intn(3)
		for i := 0; i < n; i++ {
			ss = append(ss, words[r.Intn(len(words))])
		}
		items := int64(n)
		if r.Intn(5) == 0 {
			items++ // an entry that is not a string
		}
		return &Value{Kind: "array", Present: true, Set: items > 0, Strs: ss, Items: items}
	case 6:
		return &Value{Kind: "number", Present: true, Set: true, Items: 1}
	}
	s := words[r.Intn(len(words))]
	return &Value{Kind: "string", Present: true, Set: s != "", Str: s, Strs: []string{s}, Items: 1}
}

// randomRecord is a record whose members are drawn by randomValue: a few of them each time (the
// others absent), so that records fall into classes of many members.
func randomRecord(r *rand.Rand) *Record {
	rare := func() bool { return r.Intn(10) == 0 }
	rec := &Record{Scoped: r.Intn(4) > 0, Global: rare(), KeyCount: int64(r.Intn(2)), SupersedesTarget: rare(),
		InGlobalScopes: rare(), InPrivateScopes: rare(), InGlobalContentKeys: rare(), InGlobalClaimIDs: rare()}
	if rec.Scoped {
		rec.ScopeString = []string{"g001", "g002", "global", "superseded"}[r.Intn(4)]
	}
	fields := []**Value{&rec.ReplacedBy, &rec.SupersededBy, &rec.IsDeleted, &rec.InvalidAt, &rec.ExpiredAt,
		&rec.LifecycleState, &rec.State, &rec.Shared, &rec.Sharing, &rec.MetaShared, &rec.MetaSharing, &rec.IsTemplate,
		&rec.TemplateID, &rec.BaseTemplateID, &rec.SourcePassage, &rec.FileID, &rec.RecordClass, &rec.Source,
		&rec.AttributedScope, &rec.HistoryScope, &rec.StorageScope, &rec.GroupID, &rec.EpisodeGroupIDs,
		&rec.EndpointGroupIDs, &rec.OriginClaimID, &rec.OriginScope}
	for _, f := range fields {
		*f = AbsentValue
	}
	for n := r.Intn(4); n > 0; n-- {
		*fields[r.Intn(len(fields))] = randomValue(r)
	}
	return rec
}

// TestRecordMemoEqualsFresh: across many random records sharing one activation (the stage memo,
// the fused memos and each program's own memo), the stage, the marks and the conflict
// checks answer exactly what the author's programs answer unmemoized for the same record.
func TestRecordMemoEqualsFresh(t *testing.T) {
	ps, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(2806))
	for _, fam := range []string{"generic", "letta", "mem0", "zep_graphiti"} {
		s := Scope{Family: fam, Form: "full_text", Variant: "x"}
		shared := ps.NewRecordActivation(s)
		type seen struct {
			rec  *Record
			vals SlotValues
			live bool
			m    uint32
		}
		var recs []seen
		for i := 0; i < 20000; i++ {
			rec := randomRecord(r)
			shared.Record = rec
			m, err := ps.EvalRecordStage(shared)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, seen{rec, shared.Values(), shared.Live, m})
		}
		// The later programs run after every record's stage, as in an audit, with the walk's
		// outcome set in between.
		for i, sr := range recs {
			sr.rec.M4Resolves = r.Intn(3) == 0
			shared.Restore(sr.rec, sr.live, sr.vals)
			if err := ps.EvalMarks(shared); err != nil {
				t.Fatal(err)
			}
			failed, err := ps.EvalConflicts(shared, sr.m)
			if err != nil {
				t.Fatal(err)
			}

			fresh := ps.NewRecordActivation(s) // nothing memoized: every program runs
			fresh.Record = sr.rec
			m4 := sr.rec.M4Resolves
			sr.rec.M4Resolves = false
			wm, err := ps.EvalRecordStage(fresh)
			if err != nil {
				t.Fatal(err)
			}
			if fresh.Live != sr.live || wm != sr.m || fresh.vals != sr.vals {
				t.Fatalf("%s record %d %+v: stage memoized (%v %b %v), fresh (%v %b %v)", fam, i, *sr.rec,
					sr.live, sr.m, sr.vals, fresh.Live, wm, fresh.vals)
			}
			sr.rec.M4Resolves = m4
			if err := ps.EvalMarks(fresh); err != nil {
				t.Fatal(err)
			}
			wf, err := ps.EvalConflicts(fresh, wm)
			if err != nil {
				t.Fatal(err)
			}
			if shared.vals != fresh.vals || failed != wf {
				t.Fatalf("%s record %d %+v: marks and conflicts memoized (%v %b), fresh (%v %b)", fam, i, *sr.rec,
					shared.vals, failed, fresh.vals, wf)
			}
		}
		t.Logf("%s: %d program results for 20000 records", fam, len(shared.elem))
	}
}
