package evaluator

import (
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonlex"
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The export reader of the request path: one pass over the bytes with the strict pull reader
// (evaluator/internal/jsonlex) that fills the export model (records, facts, scopes, interned
// numbers) as it reads, with no value tree between the bytes and the facts. It reads only
// exports that pass every refusal check: at the first sign of one that fails (or of a text that
// is not strict JSON, or of a shape it does not read in one pass) it gives up, and prepare
// decodes the body into a tree and runs the checks in the criteria's order, so that a refusal is
// the one it always was, by construction. An export it reads is the export the tree path builds
// (FuzzLexMatchesTree holds the two to the same answers).

// superRef is one supersedes target of record rec, as read (resolved once every id is known).
type superRef struct {
	rec int32
	id  string
}

// callerMember is the export's top-level caller member as the read-once path saw it (the tree
// path keeps the member's value instead, state.caller).
type callerMember struct {
	str               string
	present, isString bool
	read              bool // the read-once path read the export
}

// lexKinds are the tree's kinds of the pull reader's.
var lexKinds = [...]jsontree.Kind{jsonlex.Invalid: jsontree.Absent, jsonlex.Null: jsontree.Null,
	jsonlex.String: jsontree.String, jsonlex.Bool: jsontree.Bool, jsonlex.Number: jsontree.Number,
	jsonlex.Array: jsontree.Array, jsonlex.Object: jsontree.Object}

// keySlot says which scope slot (scopeFromKeys' vals) a record member fills.
type keySlot struct {
	name string
	slot int
	free bool // a manifest-declared key: its string values are held to the free-text limits
}

// lexReader is one read in progress.
type lexReader struct {
	r      *jsonlex.Reader
	ps     *rules.ProgramSet
	c      *rules.Criteria
	x      *export
	ar     arena
	fam    rules.FamilySpec
	form   rules.FormSpec
	famOK  bool
	formOK bool

	variant          string
	variantSet       bool
	manifestSeen     bool
	declared         []string // manifest.declared_scope_keys, repeats dropped
	declaredPresent  bool
	recordsRead      bool
	recsFrom, recsTo int // the records array, when it came before family or form
	deferred         bool
	keyed            []keySlot
	roles            memberRoles // each record member name's role (read_lex_names.go)
	roleNames        []string
	// wholeBatch marks the whole-store check's batch read, whose bytes are reused batch after
	// batch: no text of them is kept in a record (members).
	wholeBatch           bool
	ownIDs               bool // copy each record id out of the body (lexExport)
	slots                []scopeVal
	standIns             map[string]string
	freeText             *rules.FreeTextLimits
	caller               callerMember
	contentField, global string
	scratch              []string // the entries of a list the export keeps no order of
}

// lexExport reads body in one pass into an export model; nil when the body must go to the tree
// path (a refusal, or a shape this path leaves to it). b's maps and scratch are then dirty, and
// the caller resets them (buffers.resetRead). With ownIDs, each record id is copied out of the
// body as it is read, while its bytes are at hand (what rehome would do in a walk of its own).
func lexExport(ps *rules.ProgramSet, body []byte, b *buffers, ownIDs bool) (*export, callerMember) {
	l := &lexReader{r: &b.lex, ps: ps, c: ps.Criteria(), ownIDs: ownIDs}
	defer l.r.Release()
	l.x = &export{b: b, strs: &b.interned, interned: b.internedS[:0], byID: &b.byID, contents: &b.contents,
		tuples: b.tuples[:0]}
	l.ar = arena{vals: b.facts[:0], strs: b.strs[:0]}
	l.slots = l.x.keyVals[:0]
	ok := l.read(body)
	b.facts, b.strs = l.ar.vals, l.ar.strs
	if l.x.records != nil {
		b.records = l.x.records // released in full (buffers.release clears what it holds)
	}
	if !ok {
		b.internedS, b.tuples = l.x.interned, l.x.tuples
		return nil, callerMember{}
	}
	x := l.x
	x.idsOwned = l.ownIDs
	x.lexSupersedes(b.supers)
	x.manifestFacts()
	l.caller.read = true
	return x, l.caller
}

// read reads the whole text, reporting whether the export is one the tree path would not refuse.
func (l *lexReader) read(body []byte) bool {
	r := l.r
	r.Reset(body, l.c.Caps.JSONDepth)
	if r.Peek() != jsonlex.Object {
		return false
	}
	r.Object()
	for {
		name, ok := r.Member()
		if !ok {
			break
		}
		if !l.top(name) {
			return false
		}
	}
	if !r.Done() || !l.famOK || !l.formOK || (!l.recordsRead && !l.deferred) {
		return false
	}
	if l.variantSet && !l.knownVariant() {
		return false
	}
	l.settle()
	if l.deferred {
		// The records came before the family or the form: read them now, from their own bytes
		// (already checked as strictly as the rest, one level shallower on their own).
		r.Reset(body[l.recsFrom:l.recsTo], l.c.Caps.JSONDepth-1)
		if !l.records() || !r.Done() {
			return false
		}
	}
	return true
}

// top reads one top-level member.
func (l *lexReader) top(name string) bool {
	r := l.r
	switch name {
	case "family":
		if r.Peek() != jsonlex.String {
			return false // family_required or family_unknown
		}
		f := r.Str()
		l.fam, l.famOK = l.c.Families[f]
		l.x.scope.Family = f
		return l.famOK
	case "form":
		if r.Peek() != jsonlex.String {
			return false
		}
		f := r.Str()
		l.form, l.formOK = l.c.Forms[f]
		l.x.scope.Form = f
		return l.formOK
	case "variant":
		switch r.Peek() {
		case jsonlex.Null:
			r.Null()
		case jsonlex.String:
			l.variant, l.variantSet = r.Str(), true
		default:
			return false // variant_unknown
		}
	case "manifest":
		switch r.Peek() {
		case jsonlex.Null:
			r.Null()
		case jsonlex.Object:
			if !l.manifest() {
				return false
			}
		default:
			return false // manifest_invalid
		}
		// Records read before the manifest were read with the family's default keys.
		return !(l.recordsRead && l.declaredPresent && l.fam.Scope != "attached_to")
	case "records":
		if r.Peek() != jsonlex.Array {
			return false // records_required
		}
		if !l.famOK || !l.formOK {
			l.recsFrom = r.Offset()
			r.Skip()
			l.recsTo, l.deferred = r.Offset(), true
			return !r.Failed()
		}
		l.settle()
		return l.records()
	case "caller":
		switch r.Peek() {
		case jsonlex.Null:
			r.Null()
		case jsonlex.String:
			l.caller = callerMember{str: r.Str(), present: true, isString: true}
		default:
			r.Skip()
			l.caller = callerMember{present: true}
		}
	default:
		r.Skip()
	}
	return !r.Failed()
}

// knownVariant reports whether the variant read is one of the family's (variant_unknown).
func (l *lexReader) knownVariant() bool {
	for _, v := range l.fam.Variants {
		if v == l.variant {
			return true
		}
	}
	return false
}

// settle fixes what the records are read with: the scope, the scope keys and their stand-ins,
// as newExport and scopeKeys do.
func (l *lexReader) settle() {
	x := l.x
	x.scope.Variant = l.fam.DefaultVariant
	if l.variantSet {
		x.scope.Variant = l.variant
	}
	if l.recordsRead {
		return
	}
	x.letta = l.fam.Scope == "attached_to"
	l.contentField, l.global = l.form.ContentField, l.c.GlobalScopeValue
	switch {
	case x.letta:
		x.keySource = "attached_to"
	case l.declaredPresent:
		x.keySource, x.keys = "manifest", l.declared
		if l.fam.Scope == rules.ScopeFromKeys && len(l.declared) > 0 {
			l.freeText = l.c.FreeTextScopeValue
		}
	default:
		x.keySource, x.keys = "family_default", l.fam.DefaultScopeKeys
		l.standIns = l.fam.StandIns
	}
	l.settleKeys(x.keys)
}

// settleKeys fixes what a record's members are read for once its scope keys are known: each key
// and its stand-in (keyed, with the free-text check where it applies), a record's blank scope
// slots (two a key: the key's, its stand-in's) and every member name's role. The request path's
// read (settle) and the whole-store batch read (wholeLex.setup) both settle with it.
func (l *lexReader) settleKeys(keys []string) {
	l.keyed = l.keyed[:0]
	l.slots = l.slots[:0]
	for i, k := range keys {
		l.keyed = append(l.keyed, keySlot{name: k, slot: 2 * i, free: l.freeText != nil})
		alt, ok := l.standIns[k]
		if ok {
			l.keyed = append(l.keyed, keySlot{name: alt, slot: 2*i + 1})
		}
		l.slots = append(l.slots, scopeVal{}, scopeVal{alt: ok})
	}
	l.settleRoles()
}

// manifest reads the M3 declarations and flags as readManifest does, and the
// declared scope keys as declared_scope_keys_invalid checks them.
func (l *lexReader) manifest() bool {
	r, x := l.r, l.x
	m := &x.manifest
	m.present = true
	l.manifestSeen = true
	r.Object()
	for {
		name, ok := r.Member()
		if !ok {
			break
		}
		switch name {
		case "declared_scope_keys":
			if !l.declaredKeys() {
				return false
			}
		case "global_scopes":
			m.globalScopes = l.list(m.globalScopes, &m.scopeEntries)
		case "global_content_keys":
			m.globalContentKeys = l.list(m.globalContentKeys, &m.keyEntries)
		case "global_claim_ids":
			m.globalClaimIDs = l.list(m.globalClaimIDs, &m.idEntries)
		case "private_scopes":
			m.privateScopes = l.list(m.privateScopes, nil)
		case "scope_filtered":
			m.scopeFiltered = l.flag()
		case "multi_scope":
			m.multiScope = l.flag()
		default:
			r.Skip()
		}
	}
	return !r.Failed()
}

// declaredKeys reads manifest.declared_scope_keys: null is absent; anything but an array of
// strings none of which the criteria keep out of every scope is declared_scope_keys_invalid.
func (l *lexReader) declaredKeys() bool {
	r := l.r
	switch r.Peek() {
	case jsonlex.Null:
		r.Null()
		return true
	case jsonlex.Array:
	default:
		return false
	}
	l.declaredPresent = true
	l.declared = nil // the export keeps it (x.keys)
	r.Array()
	for r.More() {
		if r.Peek() != jsonlex.String {
			return false
		}
		k := r.Str()
		for _, n := range l.c.NeverScopeKeys {
			if k == n {
				return false
			}
		}
		seen := false
		for _, d := range l.declared {
			seen = seen || d == k
		}
		if !seen {
			l.declared = append(l.declared, k)
		}
	}
	return !r.Failed()
}

// list reads one of the M3 lists as readManifest's list does: null is absent, a non-array and
// every non-string entry are ignored and counted. The entries are kept in order in *entries (in
// a scratch list when the caller keeps none), and the set is made at its size once they are read.
func (l *lexReader) list(out map[string]bool, entries *[]string) map[string]bool {
	r := l.r
	switch r.Peek() {
	case jsonlex.Null:
		r.Null()
		return out
	case jsonlex.Array:
	default:
		r.Skip()
		l.x.cov.ManifestIgnored++
		return out
	}
	if entries == nil {
		l.scratch = l.scratch[:0]
		entries = &l.scratch
	}
	from := len(*entries)
	r.Array()
	for r.More() {
		if r.Peek() != jsonlex.String {
			r.Skip()
			l.x.cov.ManifestIgnored++
			continue
		}
		*entries = append(*entries, r.Str())
	}
	read := (*entries)[from:]
	if len(read) > 0 && out == nil {
		out = make(map[string]bool, len(read))
	}
	for _, s := range read {
		out[s] = true
	}
	return out
}

// flag reads one of the manifest's flags: null is absent (false), a non-bool is ignored and
// counted.
func (l *lexReader) flag() bool {
	r := l.r
	switch r.Peek() {
	case jsonlex.Null:
		r.Null()
		return false
	case jsonlex.Bool:
		return r.Bool()
	}
	r.Skip()
	l.x.cov.ManifestIgnored++
	return false
}

// records reads the records array: at least one record, at most the cap, each an object.
func (l *lexReader) records() bool {
	r, x, b := l.r, l.x, l.x.b
	l.recordsRead = true
	recs := b.records[:0]
	limit := l.c.Caps.RecordsPerAudit
	r.Array()
	for r.More() {
		if len(recs) >= limit || r.Peek() != jsonlex.Object { // record_count_cap, record_not_object
			x.records = recs
			return false
		}
		recs = append(recs, record{})
		x.records = recs
		if !l.record(len(recs) - 1) {
			return false
		}
	}
	x.records = recs
	return len(recs) > 0 && !r.Failed() // records_empty
}

func (x *export) lexSupersedes(refs []superRef) {
	var dangling map[string]bool
	for _, s := range refs {
		j, ok := x.byID.get(s.id)
		switch {
		case !ok:
			if dangling == nil {
				dangling = map[string]bool{}
			}
			dangling[s.id] = true
		case j != s.rec:
			x.records[j].facts.SupersedesTarget = true
		}
	}
	x.cov.DanglingSupersedes = len(dangling)
}
