package forget

import (
	"math/big"
	"regexp"
)

// The published caps (criteria `caps`, FE-R-2, FE-R-8, FE-R-28, FE-R-6).
const (
	BodyBytesCap      = 262144
	EventsCap         = 1000
	SnapshotCap       = 1000
	ScopeDimsCap      = 8
	maxSafeInteger    = 9007199254740991
	formatMutationLog = "mutation-log"
)

// Forget modes (FE-R-5: the keys of the criteria's replay modes).
const (
	ModeTransitional = "transitional"
	ModeTerminal     = "terminal"
)

// Operations an event may carry (FE-R-10).
const (
	OpWrite    = "write"
	OpForget   = "forget"
	OpReopen   = "reopen"
	OpReassign = "reassign"
)

// RefusalRules are the published refusal codes in their order (FE-R-1), then the
// body cap, which is checked before parsing (FE-R-2).
var RefusalRules = []string{
	"export_required",
	"format_invalid",
	"forget_mode_invalid",
	"scope_dimensions_invalid",
	"principals_invalid",
	"events_required",
	"events_empty",
	"event_count_cap",
	"event_not_object",
	"event_seq_invalid",
	"event_seq_duplicate",
	"event_op_invalid",
	"event_key_invalid",
	"event_principal_invalid",
	"event_version_invalid",
	"envelope_invalid",
	"snapshot_invalid",
	"snapshot_count_cap",
	"body_bytes_cap",
}

// Refusal is a refusal's compared members (docs: "Corpus cases compare rule,
// index, cap, observed"): numbers only, never any part of the export.
type Refusal struct {
	Rule     string `json:"rule"`
	Index    *int   `json:"index,omitempty"`
	Cap      *int   `json:"cap,omitempty"`
	Observed *int   `json:"observed,omitempty"`
}

func refuse(rule string) *Refusal { return &Refusal{Rule: rule} }

func refuseAt(rule string, i int) *Refusal { return &Refusal{Rule: rule, Index: &i} }

func refuseCap(rule string, limit, observed int) *Refusal {
	return &Refusal{Rule: rule, Cap: &limit, Observed: &observed}
}

// part is one scope dimension of a key or a grant: omitted, or a value as written.
type part struct {
	present bool
	value   string
}

// key is a validated key: one part per declared dimension, in declared order.
type key struct {
	parts []part
	name  string
}

type event struct {
	seq              int64
	op               string
	key              key // write, forget, reopen
	principal        string
	hasPrincipal     bool
	version          int64    // write
	envelope         []string // forget, when recorded
	envelopeRecorded bool     // forget
	authorityChecked bool     // reopen, reassign
}

type principal struct {
	id     string
	grants [][]part
}

type snapEntry struct {
	key     key
	version int64
}

// export is a mutation log that passed every refusal rule.
type export struct {
	mode        string
	dims        []string
	principals  []principal // nil when the table is not declared
	events      []event     // array order
	snapshot    []snapEntry
	hasSnapshot bool
	newKeys     bool
	// tombstoneOnly: the export declares a store the seed's scope excludes (FE-R-38).
	tombstoneOnly bool
}

var integerText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// integer reads v as an integer of FE-R-9 within [lo, hi].
func integer(v any, lo, hi int64) (int64, bool) {
	n, ok := v.(jsonNumber)
	if !ok || !integerText.MatchString(string(n)) {
		return 0, false
	}
	b, ok := new(big.Int).SetString(string(n), 10)
	if !ok || !b.IsInt64() {
		return 0, false
	}
	x := b.Int64()
	if x < lo || x > hi {
		return 0, false
	}
	return x, true
}

// member returns obj[name] and whether it is present (exists and is not null, FE-R-4).
func member(obj map[string]any, name string) (any, bool) {
	v, ok := obj[name]
	return v, ok && v != nil
}

func nonEmptyString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok && s != ""
}

// scopeObject reads a scope object (key.scope, session, grant): every member names a
// declared dimension (whatever its value, null included) and a present value is a
// string (FE-R-7, FE-R-11).
func scopeObject(v any, dims []string) ([]part, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	pos := map[string]int{}
	for i, d := range dims {
		pos[d] = i
	}
	parts := make([]part, len(dims))
	for name, val := range obj {
		i, declared := pos[name]
		if !declared {
			return nil, false
		}
		if val == nil {
			continue
		}
		s, ok := val.(string)
		if !ok {
			return nil, false
		}
		parts[i] = part{present: true, value: s}
	}
	return parts, true
}

// keyObject reads a key {scope, name} under FE-R-11.
func keyObject(v any, present bool, dims []string) (key, bool) {
	if !present {
		return key{}, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return key{}, false
	}
	nv, ok := member(obj, "name")
	if !ok {
		return key{}, false
	}
	name, ok := nv.(string)
	if !ok {
		return key{}, false
	}
	sv, ok := member(obj, "scope")
	if !ok {
		return key{}, false
	}
	parts, ok := scopeObject(sv, dims)
	if !ok {
		return key{}, false
	}
	return key{parts: parts, name: name}, true
}

// validate answers the first refusal that holds (FE-R-1 … FE-R-11, FE-R-20, FE-R-25,
// FE-R-28), or the validated export. The steps run in the order of RefusalRules, so the
// first refusal a step answers is the first that holds.
func validate(body []byte) (*export, *Refusal) {
	if len(body) > BodyBytesCap {
		return nil, refuseCap("body_bytes_cap", BodyBytesCap, len(body))
	}
	root, err := decodeStrict(body)
	if err != nil {
		return nil, refuse("export_required")
	}
	top, ok := root.(map[string]any)
	if !ok {
		return nil, refuse("export_required")
	}
	x := &export{}
	for _, step := range []func(*export, map[string]any) *Refusal{
		readHeader, readPrincipals, readEvents, readSnapshot,
	} {
		if r := step(x, top); r != nil {
			return nil, r
		}
	}
	ri, _ := member(top, "reinsert_identity")
	x.newKeys = ri == "new_key"
	fs, _ := member(top, "forget_semantics")
	x.tombstoneOnly = fs == "tombstone_only"
	return x, nil
}

// readHeader reads the format, the forget mode and the scope dimensions (FE-R-3, FE-R-5,
// FE-R-6).
func readHeader(x *export, top map[string]any) *Refusal {
	if f, ok := member(top, "format"); !ok || f != formatMutationLog {
		return refuse("format_invalid")
	}
	m, _ := member(top, "forget_mode")
	switch m {
	case ModeTransitional, ModeTerminal:
		x.mode = m.(string)
	default:
		return refuse("forget_mode_invalid")
	}

	dv, _ := member(top, "scope_dimensions")
	darr, ok := dv.([]any)
	if !ok || len(darr) == 0 || len(darr) > ScopeDimsCap {
		return refuse("scope_dimensions_invalid")
	}
	seenDim := map[string]bool{}
	for _, d := range darr {
		s, ok := nonEmptyString(d)
		if !ok || seenDim[s] {
			return refuse("scope_dimensions_invalid")
		}
		seenDim[s] = true
		x.dims = append(x.dims, s)
	}
	return nil
}

// optionalArray reads an optional top-level array: absent (or null), an array, or the
// refusal rule when it is something else.
func optionalArray(top map[string]any, name, rule string) (arr []any, present bool, r *Refusal) {
	v, ok := member(top, name)
	if !ok {
		return nil, false, nil
	}
	arr, ok = v.([]any)
	if !ok {
		return nil, true, refuse(rule)
	}
	return arr, true, nil
}

// readPrincipals reads the principal table when it is declared (FE-R-7).
func readPrincipals(x *export, top map[string]any) *Refusal {
	parr, present, r := optionalArray(top, "principals", "principals_invalid")
	if !present || r != nil {
		return r
	}
	seenID := map[string]bool{}
	for i, pe := range parr {
		p, ok := principalEntry(pe, x.dims, seenID)
		if !ok {
			return refuseAt("principals_invalid", i)
		}
		seenID[p.id] = true
		x.principals = append(x.principals, p)
	}
	return nil
}

// readEvents reads the events member (FE-R-8 … FE-R-11, FE-R-20, FE-R-25). Each rule is
// checked over every event before the next rule, as the published order requires.
func readEvents(x *export, top map[string]any) *Refusal {
	ev, _ := member(top, "events")
	earr, ok := ev.([]any)
	if !ok {
		return refuse("events_required")
	}
	if len(earr) == 0 {
		return refuse("events_empty")
	}
	if len(earr) > EventsCap {
		return refuseCap("event_count_cap", EventsCap, len(earr))
	}
	objs := make([]map[string]any, len(earr))
	for i, e := range earr {
		o, ok := e.(map[string]any)
		if !ok {
			return refuseAt("event_not_object", i)
		}
		objs[i] = o
	}
	x.events = make([]event, len(objs))
	for _, step := range []func(*export, []map[string]any) *Refusal{
		readSeqs, readOps, readKeys, readPrincipalNames, readVersions, readEnvelopes,
	} {
		if r := step(x, objs); r != nil {
			return r
		}
	}
	for i, o := range objs {
		e := &x.events[i]
		if e.op == OpReopen || e.op == OpReassign {
			v, _ := member(o, "authority_checked")
			e.authorityChecked = v == true
		}
	}
	return nil
}

// readSeqs reads every event's seq, then refuses the first repeated one.
func readSeqs(x *export, objs []map[string]any) *Refusal {
	for i, o := range objs {
		v, _ := member(o, "seq")
		seq, ok := integer(v, 1, maxSafeInteger)
		if !ok {
			return refuseAt("event_seq_invalid", i)
		}
		x.events[i].seq = seq
	}
	seenSeq := map[int64]bool{}
	for i := range x.events {
		if seenSeq[x.events[i].seq] {
			return refuseAt("event_seq_duplicate", i)
		}
		seenSeq[x.events[i].seq] = true
	}
	return nil
}

func readOps(x *export, objs []map[string]any) *Refusal {
	for i, o := range objs {
		v, _ := member(o, "op")
		switch v {
		case OpWrite, OpForget, OpReopen, OpReassign:
			x.events[i].op = v.(string)
		default:
			return refuseAt("event_op_invalid", i)
		}
	}
	return nil
}

// readKeys reads every event's key; a reassign carries a session scope instead.
func readKeys(x *export, objs []map[string]any) *Refusal {
	for i, o := range objs {
		e := &x.events[i]
		if e.op == OpReassign {
			sv, ok := member(o, "session")
			if !ok {
				return refuseAt("event_key_invalid", i)
			}
			if _, ok := scopeObject(sv, x.dims); !ok {
				return refuseAt("event_key_invalid", i)
			}
			continue
		}
		kv, present := member(o, "key")
		k, ok := keyObject(kv, present, x.dims)
		if !ok {
			return refuseAt("event_key_invalid", i)
		}
		e.key = k
	}
	return nil
}

// readPrincipalNames reads every event's principal and a reassign's target: a non-empty
// string, and one of the table's ids when the table is declared.
func readPrincipalNames(x *export, objs []map[string]any) *Refusal {
	declared := len(x.principals) > 0
	ids := map[string]bool{}
	for _, p := range x.principals {
		ids[p.id] = true
	}
	named := func(v any, present bool) (string, bool) {
		if !present {
			return "", true
		}
		s, ok := nonEmptyString(v)
		if !ok || (declared && !ids[s]) {
			return "", false
		}
		return s, true
	}
	for i, o := range objs {
		e := &x.events[i]
		pv, present := member(o, "principal")
		s, ok := named(pv, present)
		if !ok {
			return refuseAt("event_principal_invalid", i)
		}
		e.principal, e.hasPrincipal = s, present
		if e.op == OpReassign {
			tv, present := member(o, "to")
			if _, ok := named(tv, present); !ok {
				return refuseAt("event_principal_invalid", i)
			}
		}
	}
	return nil
}

func readVersions(x *export, objs []map[string]any) *Refusal {
	for i, o := range objs {
		e := &x.events[i]
		if e.op != OpWrite {
			continue
		}
		v, _ := member(o, "version")
		ver, ok := integer(v, 0, maxSafeInteger)
		if !ok {
			return refuseAt("event_version_invalid", i)
		}
		e.version = ver
	}
	return nil
}

// readEnvelopes reads a forget's recorded envelope, when it has one.
func readEnvelopes(x *export, objs []map[string]any) *Refusal {
	for i, o := range objs {
		e := &x.events[i]
		if e.op != OpForget {
			continue
		}
		v, present := member(o, "envelope")
		if !present {
			continue
		}
		arr, ok := v.([]any)
		if !ok {
			return refuseAt("envelope_invalid", i)
		}
		e.envelope = []string{}
		for _, entry := range arr {
			s, ok := entry.(string)
			if !ok {
				return refuseAt("envelope_invalid", i)
			}
			e.envelope = append(e.envelope, s)
		}
		e.envelopeRecorded = true
	}
	return nil
}

// readSnapshot reads the snapshot when it is present; its entries are checked before
// its count (FE-R-28).
func readSnapshot(x *export, top map[string]any) *Refusal {
	sarr, present, r := optionalArray(top, "snapshot", "snapshot_invalid")
	if !present || r != nil {
		return r
	}
	x.hasSnapshot = true
	x.snapshot = []snapEntry{}
	for i, se := range sarr {
		obj, ok := se.(map[string]any)
		if !ok {
			return refuseAt("snapshot_invalid", i)
		}
		kv, present := member(obj, "key")
		k, ok := keyObject(kv, present, x.dims)
		if !ok {
			return refuseAt("snapshot_invalid", i)
		}
		vv, _ := member(obj, "version")
		ver, ok := integer(vv, 0, maxSafeInteger)
		if !ok {
			return refuseAt("snapshot_invalid", i)
		}
		x.snapshot = append(x.snapshot, snapEntry{key: k, version: ver})
	}
	if len(sarr) > SnapshotCap {
		return refuseCap("snapshot_count_cap", SnapshotCap, len(sarr))
	}
	return nil
}

// principalEntry reads one entry of the principal table (FE-R-7).
func principalEntry(v any, dims []string, seen map[string]bool) (principal, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return principal{}, false
	}
	iv, _ := member(obj, "id")
	id, ok := nonEmptyString(iv)
	if !ok || seen[id] {
		return principal{}, false
	}
	p := principal{id: id}
	gv, present := member(obj, "grants")
	if !present {
		return p, true
	}
	garr, ok := gv.([]any)
	if !ok {
		return principal{}, false
	}
	for _, g := range garr {
		parts, ok := scopeObject(g, dims)
		if !ok {
			return principal{}, false
		}
		p.grants = append(p.grants, parts)
	}
	return p, true
}
