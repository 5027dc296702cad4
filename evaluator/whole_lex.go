package evaluator

import (
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonlex"
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The whole-store check's fast read of a batch: the request path's pull reader (jsonlex, with
// lexReader's value, fact and metadata readings) reads each record's facts, id, content key,
// scope values, supersedes targets and pointer straight from the batch's bytes, with no tree, no
// lookups by name and no count of the facts first. It reads only batches that pass every
// record-level refusal rule: at the first sign of one that may not (a record that is not an
// object, an id or content that the rules refuse, a free-text scope value, a text that is not
// strict JSON) it gives up before anything is recorded, and the batch takes the tree path
// (flush), whose answer is the one it always was. Nothing of a batch is recorded until every
// record of it was read: the tables, the counts, the interned scopes and the coverage counts are
// then filled in the tree path's order, so that both paths leave the check in the same state.

// wholeTreeOnly turns the fast read off (the tests compare the two paths).
var wholeTreeOnly bool

// lexBatchRecords bounds a batch the fast read takes: its records are held read until the batch
// is recorded, and a batch this small stays in the processor's cache between the two (512, the
// tree path's batch, cost about 5% more CPU than 64 in the benchmark's store).
const lexBatchRecords = 64

// lexRec is one record of a batch as the fast read read it.
type lexRec struct {
	rec      record // its id, content key and facts; the scope is resolved when it is evaluated
	slots    int    // its scope values are wholeLex.slots[slots : slots+2*len(keys)]
	attached lexVal // a Letta record's attached_to
	supAt    int    // its supersedes' string targets are wholeLex.l.ar.strs[supAt : supAt+supN]
	supN     int
	origin   lexVal // its origin_claim_id
	from, to int    // its bytes are wholeLex.text[from:to]
}

// wholeLex is the fast read's state, set up once the records' header is known (wholeFold.start).
type wholeLex struct {
	l    lexReader
	r    jsonlex.Reader
	text []byte // what r reads: the batch, or a run of records in the splitter's window
	recs []lexRec
	// slots are every record's scope values, two slots per key (keyScope's vals), each record's
	// starting as l.slots (settleKeys: which keys have a stand-in).
	slots []scopeVal
}

// setup fixes what the records are read with, as lexReader.settle does for the request path:
// the scope keys, their stand-ins and the free-text limits that apply to their values.
func (w *wholeLex) setup(ps *rules.ProgramSet, x *export, standIns map[string]string, contentField string) {
	c := ps.Criteria()
	l := &w.l
	*l = lexReader{r: &w.r, ps: ps, c: c, x: x, form: c.Forms[x.scope.Form], contentField: contentField,
		global: c.GlobalScopeValue, standIns: standIns, wholeBatch: true}
	if x.keySource == "manifest" && c.Families[x.scope.Family].Scope == rules.ScopeFromKeys && len(x.keys) > 0 {
		l.freeText = c.FreeTextScopeValue
	}
	l.settleKeys(x.keys)
}

// read reads the batch text (the mini header, then n records), reporting whether every record
// passed the record-level rules the fast read checks; w.recs then holds them.
func (w *wholeLex) read(text []byte, depth, n int) bool {
	r := &w.r
	w.reset(text, depth)
	if r.Peek() != jsonlex.Object {
		return false
	}
	r.Object()
	for {
		name, ok := r.Member()
		if !ok {
			break
		}
		if name != "records" {
			r.Skip()
			continue
		}
		if r.Peek() != jsonlex.Array {
			return false
		}
		r.Array()
		for r.More() {
			if r.Peek() != jsonlex.Object {
				return false // record_not_object
			}
			w.recs = append(w.recs, lexRec{})
			if !w.record(&w.recs[len(w.recs)-1]) {
				return false
			}
		}
	}
	return r.Done() && len(w.recs) == n
}

// reset starts reading text, with no record read.
func (w *wholeLex) reset(text []byte, depth int) {
	l := &w.l
	w.r.Reset(text, depth)
	w.text = text
	l.ar.vals, l.ar.strs = l.ar.vals[:0], l.ar.strs[:0]
	w.recs, w.slots = w.recs[:0], w.slots[:0]
}

// record reads one record, whose opening brace is next, with the request path's members, keeping
// what the whole-store check needs of it instead of filling the request's tables.
func (w *wholeLex) record(lr *lexRec) bool {
	l := &w.l
	rec := &lr.rec
	rec.facts = absentRecord
	lr.from = w.r.Offset()
	lr.slots = len(w.slots)
	w.slots = append(w.slots, w.l.slots...)
	var got recordRead
	if !l.members(rec, w.slots[lr.slots:], &got) {
		return false
	}
	lr.attached, lr.origin = got.attached, got.origin
	switch v := &got.supersedes; v.kind {
	case jsontree.String:
		lr.supAt, lr.supN = len(l.ar.strs), 1
		l.ar.strs = append(l.ar.strs, v.str)
	case jsontree.Array:
		lr.supAt, lr.supN = v.at, v.strs
	}
	rec.id, rec.content = got.id.str, got.content.str
	lr.to = w.r.Offset()
	return true
}

// supers are record k's supersedes targets (its string ones, in order).
func (w *wholeLex) supers(k int) []string {
	lr := &w.recs[k]
	return w.l.ar.strs[lr.supAt : lr.supAt+lr.supN]
}

// lexFacts resolves record k's scope and its manifest facts, as wholeFold.facts does for a tree.
func (f *wholeFold) lexFacts(k int) *record {
	w := &f.lex
	lr := &w.recs[k]
	r := &lr.rec
	if f.x.letta {
		w.l.lettaScope(r, &lr.attached)
	} else {
		f.x.scopeFromKeys(r, w.slots[lr.slots:lr.slots+len(w.l.slots)], w.l.global)
	}
	f.manifestFacts(r)
	return r
}

// flushLex records a batch the fast read read: as flush does with a tree, the ids, then the
// content keys, then each record in order. f.b.first and f.b.ord are the batch's first record's
// index in the part and ordinal.
func (f *wholeFold) flushLex(st *partState) error {
	b, w := &f.b, &f.lex
	keys := f.keys[:0]
	for k := range w.recs {
		keys = append(keys, wholeKeys{id: f.idx.key(w.recs[k].rec.id), hasID: true})
	}
	if f.insertIDs(st, keys) {
		for k := range w.recs {
			keys[k].content = f.idx.key(w.recs[k].rec.content)
		}
		f.insertContents(keys)
		for k := range w.recs {
			o := &w.recs[k].origin
			in := wholeIn{supers: w.supers(k), origin: o.kind, originStr: o.str, lex: k}
			lr := &w.recs[k]
			if err := f.index(&in, w.text[lr.from:lr.to], b.ord+uint32(k), &keys[k]); err != nil {
				return err
			}
		}
	}
	f.keys = keys
	f.batchDone(st, len(keys))
	return nil
}
