package evaluator

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// wholeFold is pass 2 of the local whole-store check: the record stage of the service over every
// record of every part, one at a time, and the counts of the whole.
type wholeFold struct {
	ps           *rules.ProgramSet
	idx          *wholeIndex
	x            *export // the header's model: scope, keys, manifest and the interned scopes
	act          *rules.RecordActivation
	standIns     map[string]string
	contentField string
	depth        int

	slabs jsontree.Slabs
	ar    arena
	mini  []byte // the start of an export holding the header members the refusal rules read
	b     batch
	rec   record
	// recordCodes and headerCodes are the criteria's refusal rules that are not about the caps,
	// in their order, split by what they read.
	recordCodes, headerCodes []string

	kept  [][]byte // the kept records' bytes, comma-separated, in chunks of about keptChunk bytes
	nKept int

	records, live, eligible, scopedEligible, templates, sourcePassages, marked, checked int
	// seen is per interned tuple: bit 0 a scoped record has it, bit 1 a live non-global one.
	seen      []uint8
	scopeSeen []bool // per interned string: a scoped record's scope string
	conflicts [][]string
}

// recordRules are the refusal rules that read records one by one; capRules those about the caps.
var (
	recordRules = map[string]bool{"record_not_object": true, "record_id_required": true,
		"record_id_duplicate": true, "content_text_required": true, "content_hash_required": true}
	capRules = map[string]bool{"record_count_cap": true, BodyBytesCap: true}
)

// activationRecords is how many records one activation serves: its memo of fused results grows
// with the distinct inputs it has seen, so a long stream takes a fresh one now and then.
const activationRecords = 1 << 16

func newWholeFold(ps *rules.ProgramSet, idx *wholeIndex) (*wholeFold, error) {
	idx.finish()
	f := &wholeFold{ps: ps, idx: idx, depth: ps.Criteria().Caps.JSONDepth,
		conflicts: make([][]string, len(ps.Conflicts()))}
	for _, c := range ps.Criteria().Refusals {
		switch {
		case capRules[c]:
		case recordRules[c]:
			f.recordCodes = append(f.recordCodes, c)
		default:
			f.headerCodes = append(f.headerCodes, c)
		}
	}
	return f, nil
}

func (f *wholeFold) release() {
	if f.x != nil {
		f.x.release()
		f.x = nil
	}
}

// partFailures are the refusal rules one part fails: per rule, the first failing record's index
// (-1 for a rule about the whole part).
type partFailures map[string]int

func (pf partFailures) add(code string, index int) {
	if _, ok := pf[code]; !ok {
		pf[code] = index
	}
}

// foldPart is pass 2 over one part: its refusals, then each record's evaluation.
func (f *wholeFold) foldPart(p WholePart, i int) (*WholeRefusal, error) {
	hdr := f.idx.parts[i].hdr
	fails := partFailures{}
	top, err := f.headerChecks(hdr, fails)
	if err != nil {
		return &WholeRefusal{Part: p.Name, Refusal: newRefusal("export_required")}, nil
	}
	if len(fails) == 0 && f.x == nil {
		f.start()
	}
	if d := f.idx.parts[i].dupAt; d >= 0 {
		fails.add("record_id_duplicate", d)
	}
	f.mini = f.miniHeader(top)
	f.b.ends = f.b.ends[:0]
	sp := &f.idx.parts[i].spans
	err = readSpans(p, sp, func(n int, raw []byte) error {
		return f.record(n, raw, fails)
	})
	*sp = spans{}
	if err != nil {
		return readError(p, err)
	}
	if err := f.flush(fails); err != nil {
		return readError(p, err)
	}
	for _, c := range f.ps.Criteria().Refusals {
		if at, ok := fails[c]; ok {
			r := newRefusal(c)
			if at >= 0 {
				r.RecordIndex = intp(at)
			}
			return &WholeRefusal{Part: p.Name, Refusal: r}, nil
		}
	}
	return nil, nil
}

// headerChecks runs the refusal rules about the part as a whole on its header, with a records
// array standing for its records (their number is all those rules read).
func (f *wholeFold) headerChecks(hdr *wholeHeader, fails partFailures) (*jsontree.Value, error) {
	recs := []byte("[]")
	if hdr.records > 0 {
		recs = []byte("[null]")
	}
	var s jsontree.Slabs
	top, err := jsontree.Decode(hdr.top(recs), jsontree.Options{MaxDepth: f.depth}, &s)
	if err != nil {
		return nil, err
	}
	for _, c := range f.headerCodes {
		if failed, _ := checks[c](f.ps, &top); failed {
			fails.add(c, -1)
		}
	}
	return &top, nil
}

// start builds the header's model from the first part that passes its header rules.
func (f *wholeFold) start() {
	var s jsontree.Slabs
	empty, _ := jsontree.Decode(f.idx.header.top([]byte("[]")), jsontree.Options{MaxDepth: f.depth}, &s)
	f.x = newExport(f.ps, &empty, getBuffers())
	f.contentField = f.ps.Criteria().Forms[f.x.scope.Form].ContentField
	spec := f.ps.Criteria().Families[f.x.scope.Family]
	if f.x.keySource == "family_default" {
		f.standIns = spec.StandIns
	}
}

// miniHeader is the start of the small export each record is checked in: the members its
// refusal rules read (family, form, the manifest's declared scope keys), then the records array.
func (f *wholeFold) miniHeader(top *jsontree.Value) []byte {
	b := []byte{'{'}
	for _, n := range []string{"family", "form"} {
		if v := top.Get(n); v.Kind() == jsontree.String {
			b = appendMember(b, n, quote(v.Str()))
		}
	}
	if m := top.Get("manifest"); m.Kind() == jsontree.Object {
		if k := m.Get("declared_scope_keys"); k.Kind() == jsontree.Array {
			arr := []byte{'['}
			for _, e := range k.Arr() {
				if e.Kind() == jsontree.String {
					arr = append(append(arr, quote(e.Str())...), ',')
				}
			}
			if len(arr) > 1 {
				arr = arr[:len(arr)-1]
			}
			arr = append(arr, ']')
			b = appendMember(b, "manifest", append(append([]byte(`{"declared_scope_keys":`), arr...), '}'))
		}
	}
	return append(b, `"records":[`...)
}

func quote(s string) []byte {
	b, _ := jsontext.AppendQuote(nil, s)
	return b
}

// batch gathers records to be decoded together: one decode per batch instead of one per record.
type batch struct {
	buf   []byte // a prefix, then the records, comma-separated
	head  int    // the prefix's length
	ends  []int  // where each record's bytes end in buf
	first int    // the part's index of the batch's first record
}

// batchRecords and batchBytes bound a batch: a few hundred records, never much more than a
// max-size export's bytes.
const (
	batchRecords = 512
	batchBytes   = 256 << 10
)

func (b *batch) reset(prefix []byte, first int) {
	b.buf, b.head, b.ends, b.first = append(b.buf[:0], prefix...), len(prefix), b.ends[:0], first
}

// add appends a record and reports whether the batch is full.
func (b *batch) add(raw []byte) bool {
	if len(b.ends) > 0 {
		b.buf = append(b.buf, ',')
	}
	b.buf = append(b.buf, raw...)
	b.ends = append(b.ends, len(b.buf))
	return len(b.ends) >= batchRecords || len(b.buf)-b.head >= batchBytes
}

// raw is the bytes of the batch's k-th record.
func (b *batch) raw(k int) []byte {
	start := b.head
	if k > 0 {
		start = b.ends[k-1] + 1
	}
	return b.buf[start:b.ends[k]]
}

// record adds one record of a part to the batch, checking and evaluating the batch when it is full.
func (f *wholeFold) record(n int, raw []byte, fails partFailures) error {
	if len(f.b.ends) == 0 {
		f.b.reset(f.mini, n)
	}
	if f.b.add(raw) {
		return f.flush(fails)
	}
	return nil
}

// flush runs the refusal rules on the batch's records and, when neither they nor their part is
// refused, evaluates each.
func (f *wholeFold) flush(fails partFailures) error {
	b := &f.b
	if len(b.ends) == 0 {
		return nil
	}
	defer func() { b.ends = b.ends[:0] }()
	b.buf = append(b.buf, "]}"...)
	f.slabs.Reset()
	// The tree aliases the batch's buffer, which the next batch overwrites: nothing kept from a
	// record points into it (ids of conflicts are cloned, scopes interned, kept bytes copied).
	top, err := jsontree.Decode(b.buf, jsontree.Options{MaxDepth: f.depth, Owned: true}, &f.slabs)
	if err != nil {
		return errSyntax
	}
	// The record-level rules in one pass over the batch (the engine's scanRecords); duplicate ids
	// are pass 1's, across every part.
	scan := make(recordScan, 5)
	scanRecords(f.ps, &top, scan)
	for _, c := range f.recordCodes {
		if at, ok := scan[c]; ok && at >= 0 && c != "record_id_duplicate" {
			fails.add(c, b.first+at)
		}
	}
	if failed, at := f.freeText(&top); failed {
		fails.add("declared_scope_keys_invalid", b.first+at)
	}
	if len(fails) > 0 || f.x == nil {
		return nil // the part is refused: its records are not evaluated
	}
	recs := top.Get("records").Arr()
	for k := range recs {
		if err := f.eval(&recs[k], b.raw(k)); err != nil {
			return err
		}
	}
	return nil
}

// freeText is the record-level half of declared_scope_keys_invalid, on one record.
func (f *wholeFold) freeText(top *jsontree.Value) (bool, int) {
	m := top.Get("manifest")
	if m.Kind() != jsontree.Object {
		return false, -1
	}
	return freeTextScopeValue(f.ps, top, m.Get("declared_scope_keys").Arr())
}

// eval is the service's record stage (records, marks, fillConflicts) for one record: what it
// adds to the counts of the whole. A kept record's marks and conflicts are left to the reduced
// export, which evaluates it again with the records it meets.
func (f *wholeFold) eval(raw *jsontree.Value, rawBytes []byte) error {
	ps, x := f.ps, f.x
	if f.act == nil || f.records%activationRecords == 0 {
		f.act = ps.NewRecordActivation(x.scope)
	}
	act := f.act
	r := &f.rec // one record at a time: reused, not allocated per record
	*r = record{raw: raw, id: raw.Get("id").Str(), content: raw.Get(f.contentField).Str()}
	facts, strs := factCount([]jsontree.Value{*raw})
	f.ar.vals, f.ar.strs = sized(f.ar.vals, facts), sized(f.ar.strs, strs)
	recordFacts(&r.facts, raw, &f.ar)
	if x.letta {
		x.lettaScope(r, ps.Criteria().GlobalScopeValue)
	} else {
		x.keyScope(r, f.standIns, ps.Criteria().GlobalScopeValue)
	}
	if r.facts.Scoped {
		r.facts.InGlobalScopes = x.manifest.globalScopes[r.facts.ScopeString]
		r.facts.InPrivateScopes = x.manifest.privateScopes[r.facts.ScopeString]
	}
	r.facts.InGlobalContentKeys = x.manifest.globalContentKeys[r.content]
	r.facts.InGlobalClaimIDs = x.manifest.globalClaimIDs[r.id]
	r.facts.SupersedesTarget = f.idx.superseded(r.id)
	act.Record = &r.facts
	applies, err := ps.EvalRecordStage(act)
	if err != nil {
		return err
	}
	r.live = act.Live
	slots := act.Values()
	f.count(r, act)
	if applies != 0 {
		f.checked++
	}
	pointer := raw.Get("origin_claim_id").Present()
	if f.idx.kept(r.id, r.content, pointer) {
		f.keep(rawBytes)
		return nil
	}
	if r.live {
		act.Restore(&r.facts, r.live, slots)
		if err := ps.EvalMarks(act); err != nil {
			return err
		}
		if act.Get(rules.Covered) || r.facts.Global {
			f.marked++
		}
	}
	if applies != 0 {
		act.Restore(&r.facts, r.live, slots)
		failed, err := ps.EvalConflicts(act, applies)
		if err != nil {
			return err
		}
		for j := range f.conflicts {
			if failed&(1<<j) != 0 {
				f.conflicts[j] = append(f.conflicts[j], strings.Clone(r.id))
			}
		}
	}
	return nil
}

// count adds one evaluated record to the counts of the whole (records, resolveGates).
func (f *wholeFold) count(r *record, act *rules.RecordActivation) {
	x := f.x
	f.records++
	if r.live {
		f.live++
	}
	if act.Get(rules.SplitState) {
		x.cov.SplitState++
	}
	if act.Get(rules.Contested) {
		x.cov.Contested++
	}
	switch {
	case act.Get(rules.Eligible):
		f.eligible++
		if r.facts.Scoped {
			f.scopedEligible++
		}
	case act.Get(rules.Template):
		f.templates++
	default:
		f.sourcePassages++
	}
	if !r.facts.Scoped {
		return
	}
	for len(f.seen) <= int(r.tid) || len(f.scopeSeen) <= int(r.sid) {
		f.seen, f.scopeSeen = append(f.seen, 0), append(f.scopeSeen, false)
	}
	f.seen[r.tid] |= 1
	if r.live && !r.facts.Global {
		f.seen[r.tid] |= 2
	}
	f.scopeSeen[r.sid] = true
}

func (f *wholeFold) keep(raw []byte) {
	k := len(f.kept)
	if k == 0 || len(f.kept[k-1])+len(raw)+1 > cap(f.kept[k-1]) {
		// A new chunk rather than a larger copy of the last one.
		f.kept = append(f.kept, make([]byte, 0, max(keptChunk, len(raw)+1)))
		k++
	}
	last := &f.kept[k-1]
	if f.nKept > 0 {
		*last = append(*last, ',')
	}
	*last = append(*last, raw...)
	f.nKept++
}
