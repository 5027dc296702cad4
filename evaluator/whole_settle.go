package evaluator

import (
	"errors"
	"slices"
	"strings"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// apply is the service's record stage (records, marks, fillConflicts) for one record, with
// superseded as R-14's fact: what it adds to the counts of the whole (sign 1), or takes back
// (sign -1). A kept record's marks and conflicts are left to the reduced export, which evaluates
// it again with the records it meets.
func (f *wholeFold) apply(r *record, superseded, kept bool, sign int) error {
	ps := f.ps
	if f.act == nil || f.acts >= activationRecords {
		f.act, f.acts = ps.NewRecordActivation(f.x.scope), 0
	}
	f.acts++
	act := f.act
	r.facts.SupersedesTarget = superseded
	act.Record = &r.facts
	applies, err := ps.EvalRecordStage(act)
	if err != nil {
		return err
	}
	r.live = act.Live
	slots := act.Values()
	f.count(r, act, sign)
	if applies != 0 {
		f.checked += sign
	}
	if kept {
		return nil
	}
	if r.live {
		act.Restore(&r.facts, r.live, slots)
		if err := ps.EvalMarks(act); err != nil {
			return err
		}
		if act.Get(rules.Covered) || r.facts.Global {
			f.marked += sign
		}
	}
	if applies != 0 {
		act.Restore(&r.facts, r.live, slots)
		failed, err := ps.EvalConflicts(act, applies)
		if err != nil {
			return err
		}
		for j := range f.conflicts {
			if failed&(1<<j) == 0 {
				continue
			}
			if sign > 0 {
				f.conflicts[j] = append(f.conflicts[j], strings.Clone(r.id))
				continue
			}
			if f.dropped[j] == nil {
				f.dropped[j] = map[string]int{}
			}
			f.dropped[j][strings.Clone(r.id)]++
		}
	}
	return nil
}

// count adds one evaluated record to the counts of the whole (records, resolveGates), or takes
// it back.
func (f *wholeFold) count(r *record, act *rules.RecordActivation, sign int) {
	x := f.x
	f.records += sign
	if r.live {
		f.live += sign
	}
	if act.Get(rules.SplitState) {
		x.cov.SplitState += sign
	}
	if act.Get(rules.Contested) {
		x.cov.Contested += sign
	}
	switch {
	case act.Get(rules.Eligible):
		f.eligible += sign
		if r.facts.Scoped {
			f.scopedEligible += sign
		}
	case act.Get(rules.Template):
		f.templates += sign
	default:
		f.sourcePassages += sign
	}
	if !r.facts.Scoped {
		return
	}
	for len(f.seen) <= int(r.tid) {
		f.seen, f.liveN = append(f.seen, 0), append(f.liveN, 0)
	}
	for len(f.scopeSeen) <= int(r.sid) {
		f.scopeSeen = append(f.scopeSeen, false)
	}
	// A scoped record stays scoped when taken back and redone: only its liveness can change.
	f.seen[r.tid] |= 1
	f.scopeSeen[r.sid] = true
	if r.live && !r.facts.Global {
		f.liveN[r.tid] += int32(sign)
	}
}

// keep copies a kept record's bytes into the chunks.
func (f *wholeFold) keep(ord uint32, raw []byte) {
	k := len(f.kept)
	if k == 0 || len(f.kept[k-1])+len(raw) > cap(f.kept[k-1]) {
		// A new chunk rather than a larger copy of the last one; the first ones small, for the
		// many checks of small parts.
		size := keptChunk
		if k < 8 {
			size = keptChunk >> (8 - k)
		}
		f.kept = append(f.kept, make([]byte, 0, max(size, len(raw))))
		k++
	}
	last := &f.kept[k-1]
	n := len(*last)
	*last = append(*last, raw...)
	f.keptRecs = append(f.keptRecs, keptRec{ord: ord, raw: (*last)[n:len(*last):len(*last)]})
}

// settle reads again, where they lie, the records whose part in the cross-record decisions was
// learnt only after they were read: each one's contribution as read is taken back and redone
// with what is known now, and a record that is kept after all is kept.
func (f *wholeFold) settle(parts []WholePart) error {
	if len(f.late) == 0 {
		return nil
	}
	slices.Sort(f.late)
	late := slices.Compact(f.late)
	idx := f.idx
	for len(late) > 0 {
		p := idx.part(late[0])
		n := 1
		for n < len(late) && idx.part(late[n]) == p {
			n++
		}
		group := late[:n]
		late = late[n:]
		at, size := make([]int64, n), make([]uint32, n)
		for k, o := range group {
			at[k], size[k] = idx.at.get(int(o)), idx.size.get(int(o))
		}
		err := reread(parts[p], at, size, func(k int, raw []byte) error {
			return f.redo(group[k], raw)
		})
		if err != nil {
			if errors.Is(err, rules.ErrRuleFailed) {
				return err
			}
			return partError(parts[p].Name, errPartChanged)
		}
	}
	f.late = nil
	return nil
}

// redo takes back the contribution of the record with ordinal ord as it was read and redoes it.
func (f *wholeFold) redo(ord uint32, raw []byte) error {
	f.slabs.Reset()
	v, err := jsontree.Decode(raw, jsontree.Options{MaxDepth: f.depth}, &f.slabs)
	if err != nil || v.Kind() != jsontree.Object {
		return errPartChanged
	}
	idx := f.idx
	id := v.Get("id")
	idk := idx.key(id.Str())
	if slot := idx.ids.get(idk); id.Kind() != jsontree.String || slot == nil || slot.first() != ord {
		return errPartChanged
	}
	was := f.keptRead.has(ord)
	kept := was || idx.repeated(f.contentKey(&v)) || v.Get("origin_claim_id").Present() || idx.named(idk)
	superseded := idx.superseded(idk)
	cov := f.x.cov
	r := f.facts(&v)
	f.x.cov = cov // counted when the record was read
	if err := f.apply(r, superseded && !f.lateSup[ord], was, -1); err != nil {
		return err
	}
	if err := f.apply(r, superseded, kept, 1); err != nil {
		return err
	}
	if kept && !was {
		f.keep(ord, raw)
	}
	return nil
}
