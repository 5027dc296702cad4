package evaluator

import (
	"slices"
	"strconv"
	"unsafe"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// export is a validated submission, decoded into what the rules and the mechanics need.
type export struct {
	scope     rules.Scope
	keys      []string // declared scope keys in order (nil for Letta)
	keySource string
	letta     bool
	records   []record
	byID      *strTable
	manifest  manifest
	cov       coverage
	b         *buffers
	strs      *strTable // interned scope strings, by id
	interned  []string
	contents  *strTable // content keys, by id
	scratch   [3][]byte
	tuples    []tupleFacts // by interned tuple number (keyScope)
	chunk     []byte       // where interned strings are cut from (intern)
	keyVals   []scopeVal   // keyScope's scratch
	// byScope and byContent are the manifest's lists by interned scope string (bit 1 global, bit
	// 2 private) and by content key (manifestFacts, manifestOf).
	byScope   []uint8
	byContent []bool
	// idsOwned: the record ids are the export's own already, not the body's (lexExport's ownIDs).
	idsOwned bool
}

// record is one submitted record. Its fields are in this order for the cache: what the walks over
// the records after the read (state.records, marks) read of each besides its facts (the numbers,
// the flags, and the facts' own flags, which rules.Record puts first) is in its first 40 bytes,
// and a record is 384 bytes, six cache lines, where it was 400.
type record struct {
	// kid numbers the set of declared keys carrying a counting value (N5, R-36): equal sets,
	// equal kid (-1 for Letta, whose scope is no key).
	kid int32
	// cid numbers the content key (equal content, equal cid); tid and sid number the tuple and
	// the scope string among the export's interned strings.
	cid, tid, sid int32

	live, eligible, template, contested   bool
	m1, m3, anchor, malformed, nonSharing bool
	covered, contradiction                bool
	hasPointer                            bool

	facts rules.Record

	id      string
	content string // the content key, exactly as submitted
	// tuple identifies the scope; "" when unscoped.
	tuple string
	// raw is the record's tree when the tree path read it (nil on the read-once path, read_lex.go);
	// tmplText and baseText are then its template_id and base_template_id as written
	// (templateIdentity reads one or the other).
	raw                *jsontree.Value
	tmplText, baseText string
	// set is the Letta scope set, sorted.
	set []string
}

type manifest struct {
	globalScopes, privateScopes, globalContentKeys, globalClaimIDs map[string]bool
	// entries keep every string entry of the M3 lists in order, repeats included.
	scopeEntries, keyEntries, idEntries []string
	scopeFiltered, multiScope, present  bool
}

// coverage holds the counts of the report's coverage block.
type coverage struct {
	SessionIDAsRunID      int
	NonStringScopeValues  int
	ManifestIgnored       int
	DanglingSupersedes    int
	SplitState, Contested int
}

// newExport builds the model of a validated export. It evaluates no rule.
func newExport(ps *rules.ProgramSet, top *jsontree.Value, b *buffers) *export {
	c := ps.Criteria()
	fam := top.Get("family").Str()
	spec := c.Families[fam]
	variant := spec.DefaultVariant
	if v := top.Get("variant"); v.Kind() == jsontree.String {
		variant = v.Str()
	}
	x := &export{
		scope: rules.Scope{Family: fam, Form: top.Get("form").Str(), Variant: variant},
		letta: spec.Scope == "attached_to",
		b:     b,
		strs:  &b.interned, interned: b.internedS[:0],
		byID: &b.byID, contents: &b.contents, tuples: b.tuples[:0],
	}
	m := top.Get("manifest")
	x.readManifest(m)
	standIns := x.scopeKeys(m, spec)
	x.readRecords(c, top.Get("records").Arr(), standIns)
	x.supersedes()
	x.manifestFacts()
	return x
}

// scopeKeys settles which keys scope the records and where they come from (the manifest, the
// family default or attached_to), and returns the family's stand-ins when its default keys are
// those.
func (x *export) scopeKeys(m *jsontree.Value, spec rules.FamilySpec) (standIns map[string]string) {
	if x.letta {
		x.keySource = "attached_to"
	} else if dk := m.Get("declared_scope_keys"); m.Kind() == jsontree.Object && dk.Present() {
		x.keySource = "manifest"
		seen := map[string]bool{}
		for _, k := range dk.Arr() {
			if !seen[k.Str()] {
				seen[k.Str()] = true
				x.keys = append(x.keys, k.Str())
			}
		}
	} else {
		x.keySource = "family_default"
		x.keys = spec.DefaultScopeKeys
	}
	if x.keySource == "family_default" {
		return spec.StandIns
	}
	return nil
}

// readRecords builds each record: its id, content key, facts and scope.
func (x *export) readRecords(c *rules.Criteria, recs []jsontree.Value, standIns map[string]string) {
	b := x.b
	contentField := c.Forms[x.scope.Form].ContentField
	b.records = sized(b.records, len(recs))[:len(recs)]
	x.records = b.records
	facts, strs := factCount(recs)
	ar := &arena{vals: sized(b.facts, facts), strs: sized(b.strs, strs)}
	defer func() { b.facts, b.strs = ar.vals, ar.strs }()
	for i := range recs {
		r := &x.records[i]
		r.raw = &recs[i]
		r.id = r.raw.Get("id").Str()
		r.content = r.raw.Get(contentField).Str()
		r.cid, _ = x.contents.add(r.content, int32(x.contents.len()))
		x.byID.add(r.id, int32(i))
		recordFacts(&r.facts, r.raw, ar)
		if x.letta {
			x.lettaScope(r, c.GlobalScopeValue)
		} else {
			x.keyScope(r, standIns, c.GlobalScopeValue)
		}
	}
}

// manifestFacts readies the facts of each record that the manifest's lists give. Each list entry
// is looked up once among the export's interned scope strings, content keys or ids (the lists
// are short, the records many); each record then reads its scope's and its content key's bits by
// number (manifestOf) in the record stage's loop, which walks the records anyway, rather than in
// a walk of its own.
func (x *export) manifestFacts() {
	m := &x.manifest
	// per interned scope string: bit 1 global, bit 2 private
	x.byScope = make([]uint8, len(x.interned))
	for s := range m.globalScopes {
		if id, ok := x.strs.get(s); ok {
			x.byScope[id] |= 2
		}
	}
	for s := range m.privateScopes {
		if id, ok := x.strs.get(s); ok {
			x.byScope[id] |= 4
		}
	}
	x.byContent = make([]bool, x.contents.len())
	for k := range m.globalContentKeys {
		if cid, ok := x.contents.get(k); ok {
			x.byContent[cid] = true
		}
	}
	for i := range x.records {
		x.records[i].facts.InGlobalClaimIDs = false
	}
	for id := range m.globalClaimIDs {
		if j, ok := x.byID.get(id); ok {
			x.records[j].facts.InGlobalClaimIDs = true
		}
	}
}

// manifestOf sets the facts of r that the manifest's scope and content-key lists give, from the
// tables manifestFacts made.
func (x *export) manifestOf(r *record) {
	if r.facts.Scoped {
		r.facts.InGlobalScopes, r.facts.InPrivateScopes = x.byScope[r.sid]&2 != 0, x.byScope[r.sid]&4 != 0
	}
	r.facts.InGlobalContentKeys = x.byContent[r.cid]
}

// keyScope resolves a record's scope over the declared keys, reading its
// values from the record's tree.
func (x *export) keyScope(r *record, standIns map[string]string, global string) {
	vals := x.keyVals[:0]
	for _, k := range x.keys {
		v := r.raw.Get(k)
		p := scopeVal{kind: v.Kind(), str: v.Str()}
		var a scopeVal
		if alt, ok := standIns[k]; ok {
			av := r.raw.Get(alt)
			a = scopeVal{kind: av.Kind(), str: av.Str(), alt: true}
		}
		vals = append(vals, p, a)
	}
	x.keyVals = vals
	x.scopeFromKeys(r, vals, global)
}

// scopeVal is a record's value under a scope key (or under the key's stand-in, alt): its kind
// and, for a string, its value. Both readers (the tree's keyScope, the read-once lexRecord) reduce
// a record to these, so that one function decides the scope for both.
type scopeVal struct {
	kind jsontree.Kind
	str  string
	alt  bool // the key has a stand-in (the alternate slot only)
}

// scopeFromKeys resolves a record's scope from vals: per declared key in order, its value and
// then its stand-in's.
func (x *export) scopeFromKeys(r *record, vals []scopeVal, global string) {
	tuple, keys, scope := x.scratch[0][:0], x.scratch[1][:0], x.scratch[2][:0]
	n := 0
	for i, k := range x.keys {
		v := vals[2*i]
		if v.kind != jsontree.Absent && v.kind != jsontree.Null && v.kind != jsontree.String {
			x.cov.NonStringScopeValues++
		}
		if v.kind != jsontree.String || v.str == "" {
			if a := vals[2*i+1]; a.alt {
				if a.kind != jsontree.Absent && a.kind != jsontree.Null && a.kind != jsontree.String {
					x.cov.NonStringScopeValues++
				}
				if a.kind == jsontree.String && a.str != "" {
					v = a
					x.cov.SessionIDAsRunID++
				}
			}
		}
		if v.kind != jsontree.String || v.str == "" {
			continue
		}
		tuple = appendLP(appendLP(tuple, k), v.str)
		if n > 0 {
			scope = append(scope, '/')
		}
		scope = append(scope, v.str...)
		n++
	}
	r.tuple, r.tid = x.intern(tuple)
	// The tuple spells the keys and the values: a tuple met before has the same key set and
	// scope string, interned once per tuple rather than looked up per record.
	t := x.tupleInfo(r.tid)
	if !t.known {
		// The key set, spelled once per tuple: the keys that carried a value.
		for i, k := range x.keys {
			if v := vals[2*i]; v.kind == jsontree.String && v.str != "" {
				keys = appendLP(keys, k)
			} else if a := vals[2*i+1]; a.kind == jsontree.String && a.str != "" {
				keys = appendLP(keys, k)
			}
		}
		_, t.kid = x.intern(keys)
		t.scope, t.sid = x.intern(scope)
		t.known = true
	}
	r.kid = t.kid
	r.facts.KeyCount = int64(n)
	r.facts.Scoped = n > 0
	r.facts.ScopeString, r.sid = t.scope, t.sid
	r.facts.Global = n == 1 && r.facts.ScopeString == global
	// Stored back only when an append moved one: a store of three slices costs write barriers
	// on every record while a collection runs.
	if cap(tuple) != cap(x.scratch[0]) || cap(keys) != cap(x.scratch[1]) || cap(scope) != cap(x.scratch[2]) {
		x.scratch = [3][]byte{tuple, keys, scope}
	}
}

// tupleFacts are what a scope tuple decides of every record carrying it.
type tupleFacts struct {
	known    bool
	scope    string
	sid, kid int32
}

// tupleInfo is the facts slot of the interned tuple tid, grown on demand.
func (x *export) tupleInfo(tid int32) *tupleFacts {
	for int(tid) >= len(x.tuples) {
		x.tuples = append(x.tuples, tupleFacts{})
	}
	return &x.tuples[tid]
}

// intern returns the export's one copy of the string b spells, and its number: the records of
// one scope share their tuple and scope strings. The copies are cut from chunks of the export's
// own (never pooled: a report keeps them), a few per export instead of one per string.
func (x *export) intern(b []byte) (string, int32) {
	if id, ok := x.strs.get(unsafe.String(unsafe.SliceData(b), len(b))); ok {
		return x.interned[id], id
	}
	s, id := x.keep(b), int32(len(x.interned))
	x.strs.add(s, id)
	x.interned = append(x.interned, s)
	return s, id
}

// internChunk is the size of the chunks interned strings are cut from.
const internChunk = 4096

// keep copies b into the export's interned-string chunk.
func (x *export) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(x.chunk)-len(x.chunk) < len(b) {
		x.chunk = make([]byte, 0, max(len(b), internChunk))
	}
	at := len(x.chunk)
	x.chunk = append(x.chunk, b...)
	return unsafe.String(&x.chunk[at], len(b))
}

// keepString is keep for a string.
func (x *export) keepString(s string) string {
	return x.keep(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// lettaScope resolves a Letta record's scope set from its tree; the set {global} is the
// global partition.
func (x *export) lettaScope(r *record, global string) {
	at := r.raw.Get("attached_to")
	if at.Present() && at.Kind() != jsontree.Array {
		x.cov.NonStringScopeValues++
	}
	set := x.b.sets[len(x.b.sets):]
	for _, e := range at.Arr() {
		switch {
		case e.Kind() == jsontree.String && e.Str() != "":
			set = append(set, e.Str())
		case e.Present() && e.Kind() != jsontree.String:
			x.cov.NonStringScopeValues++
		}
	}
	x.lettaSet(r, set, global)
}

// lettaSet settles a Letta record's scope from set, the non-empty strings of its attached_to
// in order, appended at the end of the export's pooled set arena (buffers.sets): sorted and
// compacted in place, it becomes the record's set.
func (x *export) lettaSet(r *record, set []string, global string) {
	slices.Sort(set)
	set = slices.Compact(set) // a set: repeats count once
	if len(set) > 0 {
		n := len(x.b.sets)
		x.b.sets = append(x.b.sets, set...) // in place unless the arena grew
		r.set = x.b.sets[n : n+len(set) : n+len(set)]
	}
	tuple, scope := x.scratch[0][:0], x.scratch[2][:0]
	for i, s := range r.set {
		tuple = appendLP(tuple, s)
		if i > 0 {
			scope = append(scope, '/')
		}
		scope = append(scope, s...)
	}
	r.tuple, r.tid = x.intern(tuple)
	r.kid = -1
	r.facts.Scoped = len(r.set) > 0
	r.facts.ScopeString, r.sid = x.intern(scope)
	r.facts.Global = len(r.set) == 1 && r.set[0] == global
	x.scratch[0], x.scratch[2] = tuple, scope
}

// appendLP appends a length-prefixed string, so that tuples built from any strings never collide.
func appendLP(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// supersedes marks the targets of every record's supersedes.
func (x *export) supersedes() {
	dangling := map[string]bool{}
	for i := range x.records {
		s := x.records[i].raw.Get("supersedes")
		targets := s.Arr()
		if s.Kind() == jsontree.String {
			targets = []jsontree.Value{*s}
		}
		for _, t := range targets {
			if t.Kind() != jsontree.String {
				continue
			}
			j, ok := x.byID.get(t.Str())
			switch {
			case !ok:
				dangling[t.Str()] = true
			case int(j) != i:
				x.records[j].facts.SupersedesTarget = true
			}
		}
	}
	x.cov.DanglingSupersedes = len(dangling)
}

// readManifest reads the M3 declarations and flags.
func (x *export) readManifest(m *jsontree.Value) {
	x.manifest.present = m.Kind() == jsontree.Object
	list := func(name string, entries *[]string) map[string]bool {
		out := map[string]bool{}
		v := m.Get(name)
		if !v.Present() {
			return out
		}
		if v.Kind() != jsontree.Array {
			x.cov.ManifestIgnored++
			return out
		}
		for _, e := range v.Arr() {
			if e.Kind() == jsontree.String {
				out[e.Str()] = true
				if entries != nil {
					*entries = append(*entries, e.Str())
				}
			} else {
				x.cov.ManifestIgnored++
			}
		}
		return out
	}
	flag := func(name string) bool {
		v := m.Get(name)
		if v.Present() && v.Kind() != jsontree.Bool {
			x.cov.ManifestIgnored++
		}
		return v.Bool()
	}
	if m.Kind() != jsontree.Object {
		x.manifest.globalScopes, x.manifest.privateScopes = map[string]bool{}, map[string]bool{}
		x.manifest.globalContentKeys, x.manifest.globalClaimIDs = map[string]bool{}, map[string]bool{}
		return
	}
	x.manifest.globalScopes = list("global_scopes", &x.manifest.scopeEntries)
	x.manifest.globalContentKeys = list("global_content_keys", &x.manifest.keyEntries)
	x.manifest.globalClaimIDs = list("global_claim_ids", &x.manifest.idEntries)
	x.manifest.privateScopes = list("private_scopes", nil)
	x.manifest.scopeFiltered = flag("scope_filtered")
	x.manifest.multiScope = flag("multi_scope")
}

// declaredAbsent counts M3 entries that name nothing in the submission, every entry counted, a
// repeated one each time.
func (x *export) declaredAbsent() (scopes, keys, ids int) {
	scopeSeen := make([]bool, len(x.interned))
	for i := range x.records {
		if r := &x.records[i]; r.facts.Scoped {
			scopeSeen[r.sid] = true
		}
	}
	for _, s := range x.manifest.scopeEntries {
		if id, ok := x.strs.get(s); !ok || !scopeSeen[id] {
			scopes++
		}
	}
	for _, k := range x.manifest.keyEntries {
		if _, ok := x.contents.get(k); !ok {
			keys++
		}
	}
	for _, id := range x.manifest.idEntries {
		if _, ok := x.byID.get(id); !ok {
			ids++
		}
	}
	return scopes, keys, ids
}

func (x *export) release() {
	if x == nil || x.b == nil {
		return
	}
	x.b.internedS = x.interned
	clear(x.tuples)
	x.b.tuples = x.tuples[:0]
	x.b.release()
	x.b, x.records, x.interned = nil, nil, nil
}
