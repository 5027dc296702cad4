package evaluator

import (
	"cmp"
	"errors"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// errWholeKept is the static error of kept records that no longer decode together (it cannot
// happen: each was decoded in its batch as it was read).
var errWholeKept = errors.New("whole-store check: the kept records do not decode")

// audit runs the service's stages over the kept records as one reduced export, with the whole's
// counts, gates and coverage in place of the reduced export's, and merges the conflicts of the
// records that were not kept.
func (f *wholeFold) audit(checkEnd time.Time) (*Report, error) {
	ps := f.ps
	w := ps.Criteria().Words
	// What needs the lists of every id and content key is settled first, and the lists let go:
	// the reduced export below is the peak of the check's memory.
	absent := f.declaredAbsent()
	dangling := f.idx.dangling()
	big := f.idx.ids.bytes()+f.idx.contents.bytes() > tablesCollected
	f.idx.ids, f.idx.contents, f.idx.at, f.idx.size = keyTable{}, keyTable{}, chunked[int64]{}, chunked[uint32]{}
	if big {
		// Collected now, the tables' pages go to the reduced export below instead of adding to
		// them: the check's peak memory is the larger of the two, not their sum.
		runtime.GC()
	}
	// The reduced export holds the kept records in their order over the parts.
	slices.SortStableFunc(f.keptRecs, func(a, b keptRec) int { return cmp.Compare(a.ord, b.ord) })
	recs := make([][]byte, 0, 2*len(f.keptRecs)+1)
	recs = append(recs, []byte{'['})
	for i, k := range f.keptRecs {
		if i > 0 {
			recs = append(recs, []byte{','})
		}
		recs = append(recs, k.raw)
	}
	body := f.header.top(append(recs, []byte{']'})...)
	f.kept, f.keptRecs = nil, nil
	b := &buffers{}
	top, err := jsontree.Decode(body, jsontree.Options{MaxDepth: f.depth, Owned: true}, &b.slabs)
	if err != nil {
		return nil, errWholeKept
	}
	x := newExport(ps, &top, b)
	for i := range x.records {
		// R-14 over every part: the reduced export does not hold every superseding record.
		x.records[i].facts.SupersedesTarget = f.idx.superseded(f.idx.key(x.records[i].id))
	}
	st := &state{ps: ps, x: x, act: ps.NewRecordActivation(x.scope), caller: *top.Get("caller")}
	// The reduced export's buffers are as large as the kept records: they are left to the
	// collector, not pooled for a service's next export (st.release would keep them).
	if err := st.records(); err != nil {
		return nil, err
	}
	st.sub = f.submission()
	act := &rules.SubmissionActivation{Scope: x.scope, Submission: &st.sub}
	if st.gates, err = ps.EvalGates(act); err != nil {
		return nil, err
	}
	if err := st.marks(); err != nil {
		return nil, err
	}
	marked := f.marked + st.marked()
	st.live, st.eligible, st.scopedEligible = f.live, f.eligible, f.scopedEligible
	st.templates, st.sourcePassages = f.templates, f.sourcePassages
	x.cov = f.x.cov
	x.cov.DanglingSupersedes = dangling
	rep := st.report(checkEnd)
	rep.Records, rep.Coverage.NotLive = f.records, f.records-f.live
	rep.Coverage.M3DeclaredAbsent = absent
	rep.Coverage.MarkedShare = rate(marked, f.live, w.NoLiveRecords, w.NotAssessable)
	if err := st.fillClusters(rep); err != nil {
		return nil, err
	}
	if err := st.fillConflicts(rep); err != nil {
		return nil, err
	}
	f.mergeConflicts(rep)
	st.fillDuplicates(rep)
	dropCoverageFacts(ps.Criteria(), rep)
	rep.VerdictLine = verdictLine(w, rep)
	return rep, nil
}

// tablesCollected is the size of the tables past which the check collects them before the
// reduced export (about a quarter of a million records).
const tablesCollected = 16 << 20

// submission is the gates' view of the whole (resolveGates).
func (f *wholeFold) submission() rules.Submission {
	x := f.x
	scopes, liveScopes := 0, 0
	for t, s := range f.seen {
		if s&1 != 0 {
			scopes++
		}
		if f.liveN[t] > 0 {
			liveScopes++
		}
	}
	keys := x.keys
	if x.letta {
		keys = []string{"attached_to"}
	}
	return rules.Submission{
		ScopeKeys: append([]string{}, keys...), ScopeKeysSource: x.keySource,
		Records: int64(f.records), Live: int64(f.live), Eligible: int64(f.eligible),
		DistinctScopes: int64(scopes), LiveNonGlobalScopes: int64(liveScopes), ScopeFiltered: x.manifest.scopeFiltered,
		MultiScope: x.manifest.multiScope, ManifestPresent: x.manifest.present,
		ConflictCheckedRecords: int64(f.checked),
	}
}

// declaredAbsent is export.declaredAbsent over every part.
func (f *wholeFold) declaredAbsent() map[string]int {
	x, idx := f.x, f.idx
	sa, ka, ia := 0, 0, 0
	for _, s := range x.manifest.scopeEntries {
		if id, ok := x.strs.get(s); !ok || int(id) >= len(f.scopeSeen) || !f.scopeSeen[id] {
			sa++
		}
	}
	for _, k := range x.manifest.keyEntries {
		if idx.contents.get(idx.key(k)) == nil {
			ka++
		}
	}
	for _, id := range x.manifest.idEntries {
		if idx.ids.get(idx.key(id)) == nil {
			ia++
		}
	}
	return map[string]int{"global_scopes": sa, "global_content_keys": ka, "global_claim_ids": ia}
}

// mergeConflicts adds the conflicts of the records that were not kept to the reduced export's,
// but those taken back.
func (f *wholeFold) mergeConflicts(rep *Report) {
	sc := &rep.Factors.ScopeConflicts
	if sc.Conflicts == nil {
		return // NOT ASSESSABLE: no count, no records
	}
	total := *sc.Conflicts
	for j, c := range f.ps.Conflicts() {
		ids := f.conflicts[j]
		if drop := f.dropped[j]; len(drop) > 0 {
			n := 0
			for _, id := range ids {
				if drop[id] > 0 {
					drop[id]--
					continue
				}
				ids[n] = id
				n++
			}
			ids = ids[:n]
		}
		if len(ids) == 0 {
			continue
		}
		sc.BySubcheck[c.ID] += len(ids)
		all := append(sc.Records[c.ID], ids...)
		sort.Strings(all)
		sc.Records[c.ID] = all
		total += len(ids)
	}
	sc.Conflicts = intp(total)
}
