package evaluator

import (
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// wholeFold is the local whole-store check as it reads: the refusal rules and the service's
// record stage over every record of every part, one at a time, and the counts of the whole.
type wholeFold struct {
	ps           *rules.ProgramSet
	idx          *wholeIndex
	header       *wholeHeader // the first part's
	x            *export      // the header's model: scope, keys, manifest and the interned scopes
	act          *rules.RecordActivation
	acts         int // records act has served
	standIns     map[string]string
	contentField string
	depth        int

	parts   []partState
	pending *WholeRefusal // the first part's refusal, given once every part has been read
	window  []byte        // the scanner's window, from part to part
	size    int64         // the part's size in bytes (-1: not known)
	sized   bool          // the tables were sized for the part

	slabs jsontree.Slabs
	ar    arena
	mini  []byte // the start of an export holding the header members the refusal rules read
	b     batch
	keys  []wholeKeys // the batch's
	rec   record
	// lex is the fast read of a batch (whole_lex.go), which a part's batches take while its header
	// is the one the model was built from (fast); supers is the tree path's scratch.
	lex    wholeLex
	fast   bool
	supers []string
	ord    uint32 // the next record's ordinal, over every part
	// recordCodes and headerCodes are the criteria's refusal rules that are not about the caps,
	// in their order, split by what they read.
	recordCodes, headerCodes []string

	kept     [][]byte  // the kept records' bytes, in chunks of about keptChunk bytes
	keptRecs []keptRec // the kept records, in the order they were kept
	keptRead bitset    // per ordinal: kept when it was read
	late     []uint32  // ordinals to read again: kept, or superseded, only after they were read
	lateSup  map[uint32]bool

	records, live, eligible, scopedEligible, templates, sourcePassages, marked, checked int
	// seen is per interned tuple: bit 0 a scoped record has it; liveN counts its live non-global
	// records (a count, so that a record read again can be taken back).
	seen      []uint8
	liveN     []int32
	scopeSeen []bool // per interned string: a scoped record's scope string
	conflicts [][]string
	dropped   []map[string]int // per conflict subcheck: ids taken back from conflicts
}

// partState is what the check knows of one part as it reads it.
type partState struct {
	records int
	fails   partFailures
	deep    bool // nested deeper than the criteria allow: export_required
	mode    int  // what its records get: validateOnly, indexOnly or evaluate
}

// What a part's records get: a part after a refused one is only checked to be JSON; a refused
// part still has its ids indexed, for its first repeated id; any other is evaluated.
const (
	validateOnly = iota
	indexOnly
	evaluate
)

// wholeKeys are what the tables hold of one record of a batch: its id's and content's keys, and
// after the content's insertion its first record and how many records have it so far (1, 2, or
// 3 for more).
type wholeKeys struct {
	id, content key128
	hasID       bool
	first, n    uint32
}

// keptRec is one kept record: its ordinal and its bytes in a chunk of wholeFold.kept.
type keptRec struct {
	ord uint32
	raw []byte
}

// bitset is a set of ordinals.
type bitset []uint64

func (b *bitset) set(i uint32) {
	for int(i>>6) >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[i>>6] |= 1 << (i & 63)
}

func (b bitset) has(i uint32) bool { return int(i>>6) < len(b) && b[i>>6]&(1<<(i&63)) != 0 }

// recordRules are the refusal rules that read records one by one; capRules those about the caps.
var (
	recordRules = map[string]bool{"record_not_object": true, "record_id_required": true,
		"record_id_duplicate": true, "content_text_required": true, "content_hash_required": true}
	capRules = map[string]bool{"record_count_cap": true, BodyBytesCap: true}
)

// activationRecords is how many records one activation serves: its memo of fused results grows
// with the distinct inputs it has seen, so a long stream takes a fresh one now and then.
const activationRecords = 1 << 16

func newWholeFold(ps *rules.ProgramSet, parts int) *wholeFold {
	f := &wholeFold{ps: ps, idx: newWholeIndex(), depth: ps.Criteria().Caps.JSONDepth,
		parts: make([]partState, parts), conflicts: make([][]string, len(ps.Conflicts())),
		dropped: make([]map[string]int, len(ps.Conflicts())), lateSup: map[uint32]bool{}}
	for _, c := range ps.Criteria().Refusals {
		switch {
		case capRules[c]:
		case recordRules[c]:
			f.recordCodes = append(f.recordCodes, c)
		default:
			f.headerCodes = append(f.headerCodes, c)
		}
	}
	return f
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

// run reads every part once, in order (see whole.go). known are the parts' headers when a first
// run met a member after some part's records (nil otherwise).
func (f *wholeFold) run(parts []WholePart, known []*wholeHeader) (*WholeRefusal, error) {
	for i, p := range parts {
		var k *wholeHeader
		if known != nil {
			k = known[i]
		}
		ref, err := f.part(p, i, k)
		if ref != nil || err != nil {
			return ref, err
		}
	}
	return f.pending, nil
}

// part reads part i. It answers at once a part that is not JSON or whose header disagrees with
// the first part's; any other refusal it keeps in f.pending, the first part's first.
func (f *wholeFold) part(p WholePart, i int, known *wholeHeader) (*WholeRefusal, error) {
	st := &f.parts[i]
	st.fails, f.sized = partFailures{}, false
	f.idx.firsts = append(f.idx.firsts, f.ord)
	f.b.ends = f.b.ends[:0]
	hdr := newWholeHeader()
	hooks := partHooks{
		at: func(h *wholeHeader, empty bool) error {
			if known != nil {
				h = known
			}
			return f.begin(i, h, empty)
		},
		record: func(raw []byte, at int64) error { return f.record(i, raw, at) },
		direct: func(s *partScanner) (int, error) { return f.direct(i, s) },
		done:   func() error { return f.flush(i) },
	}
	var err error
	f.window, err = readPart(p, hdr, &hooks, f.window, &f.size)
	if errors.Is(err, errRestart) && known != nil {
		err = nil
	}
	if err == nil && !hdr.array {
		// No records array: the header is whole now.
		err = f.begin(i, hdr, hdr.records == 0)
	}
	switch {
	case errors.Is(err, errRestart):
		return nil, err
	case err != nil:
		return readError(p, err)
	case known != nil && !hdr.same(known):
		return nil, partError(p.Name, errPartChanged)
	}
	st.records = hdr.records
	if i == 0 {
		f.header = hdr
	} else if m := f.header.differs(hdr); m != "" {
		return nil, partError(p.Name, errors.New("member "+m+" differs from the first part's"))
	}
	if f.pending == nil {
		f.pending = st.refusal(p, f.ps.Criteria().Refusals)
	}
	return nil, nil
}

// refusal is the part's refusal (nil: none): export_required for a part nested too deep, else
// the first rule it fails in the criteria's order.
func (st *partState) refusal(p WholePart, order []string) *WholeRefusal {
	if st.deep {
		return &WholeRefusal{Part: p.Name, Refusal: newRefusal("export_required")}
	}
	for _, c := range order {
		if at, ok := st.fails[c]; ok {
			r := newRefusal(c)
			if at >= 0 {
				r.RecordIndex = intp(at)
			}
			return &WholeRefusal{Part: p.Name, Refusal: r}
		}
	}
	return nil
}

// begin runs the refusal rules about part i as a whole on its header, once the header stands
// (when its records array begins, or at its end when it has none), and sets what its records get.
func (f *wholeFold) begin(i int, hdr *wholeHeader, empty bool) error {
	st := &f.parts[i]
	f.mini = append(f.mini[:0], `{"records":[`...)
	st.mode = validateOnly
	if f.pending != nil {
		return nil // a part before is refused: this one only has to be JSON
	}
	top, err := f.headerChecks(hdr, empty, st.fails)
	if err != nil {
		if err = decodeFailure(hdr.top(emptyRecords(empty))); errors.Is(err, errSyntax) {
			return err
		}
		st.deep = true
		return nil
	}
	if len(st.fails) == 0 && f.x == nil {
		f.start(hdr)
	}
	f.fast = !wholeTreeOnly && f.x != nil && f.contentField != "" && (i == 0 || f.header.differs(hdr) == "")
	f.mini = f.miniHeader(top)
	st.mode = indexOnly
	if len(st.fails) == 0 && f.x != nil {
		st.mode = evaluate
	}
	return nil
}

func emptyRecords(empty bool) []byte {
	if empty {
		return []byte("[]")
	}
	return []byte("[null]")
}

// headerChecks runs the refusal rules about the part as a whole on its header, with a records
// array standing for its records (whether there are any is all those rules read of them).
func (f *wholeFold) headerChecks(hdr *wholeHeader, empty bool, fails partFailures) (*jsontree.Value, error) {
	var s jsontree.Slabs
	top, err := jsontree.Decode(hdr.top(emptyRecords(empty)), jsontree.Options{MaxDepth: f.depth}, &s)
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

// start builds the header's model from the first part, once it passes its header rules.
func (f *wholeFold) start(hdr *wholeHeader) {
	var s jsontree.Slabs
	empty, _ := jsontree.Decode(hdr.top([]byte("[]")), jsontree.Options{MaxDepth: f.depth}, &s)
	f.x = newExport(f.ps, &empty, getBuffers())
	f.contentField = f.ps.Criteria().Forms[f.x.scope.Form].ContentField
	spec := f.ps.Criteria().Families[f.x.scope.Family]
	if f.x.keySource == "family_default" {
		f.standIns = spec.StandIns
	}
	f.lex.setup(f.ps, f.x, f.standIns, f.contentField)
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

// record adds one record of part i to the batch, noting where it lies, and reads the batch when
// it is full.
func (f *wholeFold) record(i int, raw []byte, at int64) error {
	if len(f.b.ends) == 0 {
		limit := batchRecords
		if f.fast {
			limit = lexBatchRecords
		}
		f.b.reset(f.mini, int(f.ord-f.idx.firsts[i]), f.ord, limit)
	}
	if f.ord >= maxOrdinals {
		return errTooManyRecords
	}
	f.idx.at.add(at)
	f.idx.size.add(uint32(len(raw)))
	f.ord++
	if f.b.add(raw) {
		return f.flush(i)
	}
	return nil
}

// flush decodes the batch strictly, runs the refusal rules on its records and, while neither
// they nor the part's header refuse it, indexes and evaluates each.
func (f *wholeFold) flush(i int) error {
	b, st := &f.b, &f.parts[i]
	if len(b.ends) == 0 {
		return nil
	}
	defer func() { b.ends = b.ends[:0] }()
	b.buf = append(b.buf, "]}"...)
	if st.mode == evaluate && len(st.fails) == 0 && f.fast && f.lex.read(b.buf, f.depth, len(b.ends)) {
		return f.flushLex(st)
	}
	f.slabs.Reset()
	// The tree aliases the batch's buffer, which the next batch overwrites: nothing kept from a
	// record points into it (ids of conflicts are cloned, scopes interned, kept bytes copied).
	top, err := jsontree.Decode(b.buf, jsontree.Options{MaxDepth: f.depth, Owned: true}, &f.slabs)
	if err != nil {
		if err := decodeFailure(b.buf); errors.Is(err, errSyntax) {
			return err
		}
		st.deep, st.mode = true, validateOnly
		return nil
	}
	if st.mode == validateOnly {
		return nil
	}
	// The record-level rules in one pass over the batch (the engine's scanRecords); repeated ids
	// are the index's, across every part.
	scan := make(recordScan, 5)
	scanRecords(f.ps, &top, scan)
	for _, c := range f.recordCodes {
		if at, ok := scan[c]; ok && at >= 0 && c != "record_id_duplicate" {
			st.fails.add(c, b.first+at)
		}
	}
	if failed, at := f.freeText(&top); failed {
		st.fails.add("declared_scope_keys_invalid", b.first+at)
	}
	recs := top.Get("records").Arr()
	keys := f.keys[:0]
	for k := range recs {
		id := recs[k].Get("id")
		if id.Kind() != jsontree.String {
			keys = append(keys, wholeKeys{})
			continue
		}
		keys = append(keys, wholeKeys{id: f.idx.key(id.Str()), hasID: true})
	}
	if f.insertIDs(st, keys) {
		if f.contentField != "" {
			for k := range recs {
				keys[k].content = f.contentKey(&recs[k])
			}
			f.insertContents(keys)
		}
		for k := range recs {
			if !keys[k].hasID {
				continue // the part is refused (record_id_required)
			}
			in := wholeIn{tree: &recs[k], supers: f.supers[:0]}
			switch s := recs[k].Get("supersedes"); s.Kind() {
			case jsontree.String:
				in.supers = append(in.supers, s.Str())
			case jsontree.Array:
				for _, e := range s.Arr() {
					if e.Kind() == jsontree.String {
						in.supers = append(in.supers, e.Str())
					}
				}
			}
			f.supers = in.supers
			o := recs[k].Get("origin_claim_id")
			in.origin, in.originStr = o.Kind(), o.Str()
			if err := f.index(&in, b.raw(k), b.ord+uint32(k), &keys[k]); err != nil {
				return err
			}
		}
	}
	f.keys = keys
	f.batchDone(st, len(recs))
	return nil
}

// insertIDs puts the batch's ids into their table, noting a repeated one, and reports whether the
// part is still evaluated. The ids, then the content keys, go into their tables in tight loops of
// their own: each insertion is a likely cache miss, and a loop with nothing else in it lets the
// processor wait for several at once.
func (f *wholeFold) insertIDs(st *partState, keys []wholeKeys) bool {
	b := &f.b
	for k := range keys {
		if keys[k].hasID {
			if _, fresh := f.idx.ids.add(keys[k].id, b.ord+uint32(k)); !fresh {
				st.fails.add("record_id_duplicate", b.first+k)
			}
		}
	}
	return st.mode == evaluate && len(st.fails) == 0
}

// insertContents puts the batch's content keys into their table, with each record's first record
// and how many records have its content so far.
func (f *wholeFold) insertContents(keys []wholeKeys) {
	for k := range keys {
		cs, fresh := f.idx.contents.add(keys[k].content, f.b.ord+uint32(k))
		keys[k].first, keys[k].n = cs.first(), 1
		switch {
		case fresh:
		case cs.repeated():
			keys[k].n = 3
		default:
			cs.v |= repeatedBit
			keys[k].n = 2
		}
	}
}

// batchDone sizes the tables after a part's first batch of n records, and stops evaluating a part
// that a rule refuses.
func (f *wholeFold) batchDone(st *partState, n int) {
	if !f.sized && f.size > 0 && n > 1 {
		f.reserve(n)
	}
	if len(st.fails) > 0 {
		st.mode = indexOnly
	}
}

// reserve sizes the tables once for the records the part will hold, judged from its size and the
// mean size of the n records of its first batch, so that a part of a million records does not
// grow them step by step.
func (f *wholeFold) reserve(n int) {
	f.sized = true
	first, last := int(f.ord)-n, int(f.ord)-1
	from, to := f.idx.at.get(first), f.idx.at.get(last)+int64(f.idx.size.get(last))
	if to <= from {
		return
	}
	left := (f.size - to) * int64(n) / (to - from)
	want := int(f.ord) + int(min(left, int64(maxOrdinals)))
	f.idx.ids.reserve(want)
	f.idx.contents.reserve(want)
}

// freeText is the record-level half of declared_scope_keys_invalid, on one record.
func (f *wholeFold) freeText(top *jsontree.Value) (bool, int) {
	m := top.Get("manifest")
	if m.Kind() != jsontree.Object {
		return false, -1
	}
	return freeTextScopeValue(f.ps, top, m.Get("declared_scope_keys").Arr())
}

// contentKey is the key of a record's content ("" when it has none, or no string).
func (f *wholeFold) contentKey(raw *jsontree.Value) key128 {
	s := ""
	if c := raw.Get(f.contentField); f.contentField != "" && c.Kind() == jsontree.String {
		s = c.Str()
	}
	return f.idx.key(s)
}

// wholeIn is what index reads of one record besides its facts: its supersedes' string targets,
// its origin_claim_id, and the record itself (its tree, or the fast read's record lex).
type wholeIn struct {
	supers    []string
	origin    jsontree.Kind
	originStr string
	tree      *jsontree.Value
	lex       int
}

// index adds what the cross-record decisions need of one record (its content key, its
// supersedes targets, its pointer), notes the records read before it whose part in them this
// changes, and evaluates it.
func (f *wholeFold) index(in *wholeIn, rawBytes []byte, ord uint32, ks *wholeKeys) error {
	idx, idk := f.idx, ks.id
	if ks.n == 2 && !f.keptRead.has(ks.first) {
		f.late = append(f.late, ks.first) // its first record is kept after all
	}
	kept := ks.n > 1
	for _, s := range in.supers {
		t := idx.key(s)
		v := idx.targets[t]
		nv := v | 1
		if t != idk {
			nv |= 2 // a record superseding itself is not a target
		}
		idx.targets[t] = nv
		if nv&2 != 0 && v&2 == 0 {
			// A record of the batch after this one is in the table already, not yet read.
			if s := idx.ids.get(t); s != nil && s.first() < ord {
				f.late = append(f.late, s.first()) // superseded after it was read
				f.lateSup[s.first()] = true
			}
		}
	}
	if in.origin == jsontree.String {
		ok := idx.key(in.originStr)
		if _, had := idx.pointers[ok]; !had {
			idx.pointers[ok] = struct{}{}
			if s := idx.ids.get(ok); s != nil && s.first() < ord && !f.keptRead.has(s.first()) {
				f.late = append(f.late, s.first()) // named by a pointer after it was read
			}
		}
	}
	kept = kept || (in.origin != jsontree.Absent && in.origin != jsontree.Null) || idx.named(idk)
	var r *record
	if in.tree != nil {
		r = f.facts(in.tree)
	} else {
		r = f.lexFacts(in.lex)
	}
	if err := f.apply(r, idx.superseded(idk), kept, 1); err != nil {
		return err
	}
	if kept {
		f.keptRead.set(ord)
		f.keep(ord, rawBytes)
	}
	return nil
}

// facts reads one record's facts into f.rec (one record at a time: reused, not allocated per
// record), its scope interned and its coverage counted.
func (f *wholeFold) facts(raw *jsontree.Value) *record {
	ps, x := f.ps, f.x
	r := &f.rec
	*r = record{raw: raw, id: raw.Get("id").Str(), content: raw.Get(f.contentField).Str()}
	facts, strs := factCount([]jsontree.Value{*raw})
	f.ar.vals, f.ar.strs = sized(f.ar.vals, facts), sized(f.ar.strs, strs)
	recordFacts(&r.facts, raw, &f.ar)
	if x.letta {
		x.lettaScope(r, ps.Criteria().GlobalScopeValue)
	} else {
		x.keyScope(r, f.standIns, ps.Criteria().GlobalScopeValue)
	}
	f.manifestFacts(r)
	return r
}

// manifestFacts sets the facts of a record that the manifest's lists give.
func (f *wholeFold) manifestFacts(r *record) {
	x := f.x
	if r.facts.Scoped {
		r.facts.InGlobalScopes = x.manifest.globalScopes[r.facts.ScopeString]
		r.facts.InPrivateScopes = x.manifest.privateScopes[r.facts.ScopeString]
	}
	r.facts.InGlobalContentKeys = x.manifest.globalContentKeys[r.content]
	r.facts.InGlobalClaimIDs = x.manifest.globalClaimIDs[r.id]
}
