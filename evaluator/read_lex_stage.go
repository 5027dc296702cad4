package evaluator

import (
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The record stage in the read. A record's facts, just read, are in the first-level cache; the
// record stage's memo key reads them again, and when it ran in a walk of its own after the read
// (state.records) the facts of a max-size export (over half a megabyte) had long left the cache:
// that walk was the pre-check's largest source of cache misses. So the read-once path runs the
// record stage on each record as soon as it is read, on the facts known then, and state.records
// keeps those results for every record whose facts did not change afterwards:
//
//   - the manifest's facts are final when the manifest came before the records (or there is
//     none); a manifest after them voids every early result;
//   - the scope (family, form, variant) the activation was made for must be the export's; a
//     variant after the records that changes it voids every early result;
//   - a record another record's supersedes names later (SupersedesTarget, assumed false) is
//     evaluated again.
//
// A rule that fails at run time leaves the record to state.records, which fails the same way.
// TestLexMatchesTree and FuzzLexMatchesTree hold the answers to the tree path's, which never
// evaluates early.

// earlyStage is the record stage run during the read.
type earlyStage struct {
	act           *rules.RecordActivation
	scope         rules.Scope // the scope act was made for
	manifestFirst bool        // the manifest was read before the records
	// byContent caches the manifest's global_content_keys bit per content key number: 1 not in
	// it, 2 in it, 0 not looked up yet.
	byContent []uint8
	// contentBloom, claimBloom and scopeBloom have a bit set for each fingerprint of a string in
	// the manifest's global_content_keys, global_claim_ids, and global_scopes or private_scopes
	// (the lists are short, the records and scopes many): a string whose bit is clear is not in
	// the list, with no map lookup.
	contentBloom, claimBloom, scopeBloom uint64
}

// bloomBit is the bit in a bloom word of the string whose strTable tag is tag (the tables'
// hash, which the read computed already for every record's id and content key).
func bloomBit(tag uint32) uint64 { return 1 << (tag >> 26) }

// startEarly makes the activation the records are evaluated with, once the scope is settled.
func (l *lexReader) startEarly() {
	if !l.earlyOK || l.early != nil {
		return
	}
	l.early = &earlyStage{act: l.ps.NewRecordActivation(l.x.scope), scope: l.x.scope, manifestFirst: l.manifestSeen}
	for k := range l.x.manifest.globalContentKeys {
		l.early.contentBloom |= bloomBit(strTag(k))
	}
	for id := range l.x.manifest.globalClaimIDs {
		l.early.claimBloom |= bloomBit(strTag(id))
	}
	for s := range l.x.manifest.globalScopes {
		l.early.scopeBloom |= bloomBit(strTag(s))
	}
	for s := range l.x.manifest.privateScopes {
		l.early.scopeBloom |= bloomBit(strTag(s))
	}
	b := l.x.b
	n := min(l.c.Caps.RecordsPerAudit, 1<<12) // room for every record up to the cap, as a rule
	// Not cleared: evalEarly writes each record's entries (they are predicate values, no text).
	if cap(b.slots) < n || cap(b.applies) < n {
		b.slots, b.applies = make([]rules.SlotValues, 0, n), make([]uint32, 0, n)
	}
	b.slots, b.applies = b.slots[:0], b.applies[:0]
}

// evalEarly runs the record stage on record i as read (see above); idTag and contentTag are its
// id's and content key's strTable tags.
func (l *lexReader) evalEarly(i int, rec *record, idTag, contentTag uint32) {
	e, x := l.early, l.x
	b := x.b
	if i < cap(b.slots) && i < cap(b.applies) {
		b.slots, b.applies = b.slots[:i+1], b.applies[:i+1]
	}
	for len(b.slots) <= i {
		b.slots, b.applies = append(b.slots, rules.SlotValues{}), append(b.applies, 0)
	}
	m := &x.manifest
	if rec.facts.Scoped {
		t := x.tupleInfo(rec.tid)
		if !t.mknown {
			if s := rec.facts.ScopeString; e.scopeBloom != 0 && e.scopeBloom&bloomBit(strTag(s)) != 0 {
				t.inGlobal, t.inPrivate = m.globalScopes[s], m.privateScopes[s]
			}
			t.mknown = true
		}
		rec.facts.InGlobalScopes, rec.facts.InPrivateScopes = t.inGlobal, t.inPrivate
	}
	if e.contentBloom != 0 && e.contentBloom&bloomBit(contentTag) != 0 {
		for int(rec.cid) >= len(e.byContent) {
			e.byContent = append(e.byContent, 0)
		}
		if e.byContent[rec.cid] == 0 {
			e.byContent[rec.cid] = 1
			if m.globalContentKeys[rec.content] {
				e.byContent[rec.cid] = 2
			}
		}
		rec.facts.InGlobalContentKeys = e.byContent[rec.cid] == 2
	}
	if e.claimBloom != 0 && e.claimBloom&bloomBit(idTag) != 0 {
		rec.facts.InGlobalClaimIDs = m.globalClaimIDs[rec.id]
	}
	act := e.act
	act.Record = &rec.facts
	applies, err := l.ps.EvalRecordStage(act)
	if err != nil {
		b.slots[i], b.applies[i] = rules.SlotValues{}, 0
		return // state.records evaluates it again and fails the same way
	}
	rec.early = true
	rec.setStage(act)
	b.slots[i], b.applies[i] = act.Values(), applies
}

// earlyDone reports whether the early results stand for the export as read, and leaves the
// activation to the state when they do.
func (l *lexReader) earlyDone() {
	e, x := l.early, l.x
	if e == nil || (l.manifestSeen && !e.manifestFirst) || e.scope != x.scope {
		return
	}
	x.early = e.act
}

// setStage keeps what the record stage decided of r, from the activation that evaluated it.
func (r *record) setStage(act *rules.RecordActivation) {
	r.live = act.Live
	r.template, r.eligible, r.contested = act.Get(rules.Template), act.Get(rules.Eligible), act.Get(rules.Contested)
	r.m1, r.m3, r.anchor = act.Get(rules.M1), act.Get(rules.M3), act.Get(rules.CycleAnchor)
	r.malformed, r.nonSharing = act.Get(rules.MalformedMarker), act.Get(rules.NonSharing)
	r.splitState = act.Get(rules.SplitState)
}
