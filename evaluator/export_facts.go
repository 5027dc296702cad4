package evaluator

import (
	"strconv"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// factField is the fact a record member's name fills, nil for every other member (scope keys and
// content are read separately).
func factField(r *rules.Record, name string) **rules.Value {
	switch name {
	case "replaced_by":
		return &r.ReplacedBy
	case "superseded_by":
		return &r.SupersededBy
	case "is_deleted":
		return &r.IsDeleted
	case "invalid_at":
		return &r.InvalidAt
	case "expired_at":
		return &r.ExpiredAt
	case "lifecycle_state":
		return &r.LifecycleState
	case "state":
		return &r.State
	case "shared":
		return &r.Shared
	case "sharing":
		return &r.Sharing
	case "is_template":
		return &r.IsTemplate
	case "template_id":
		return &r.TemplateID
	case "base_template_id":
		return &r.BaseTemplateID
	case "source_passage":
		return &r.SourcePassage
	case "file_id":
		return &r.FileID
	case "record_class":
		return &r.RecordClass
	case "source":
		return &r.Source
	case "attributed_scope":
		return &r.AttributedScope
	case "history_scope":
		return &r.HistoryScope
	case "storage_scope":
		return &r.StorageScope
	case "group_id":
		return &r.GroupID
	case "episode_group_ids":
		return &r.EpisodeGroupIDs
	case "endpoint_group_ids":
		return &r.EndpointGroupIDs
	case "origin_claim_id":
		return &r.OriginClaimID
	case "origin_scope":
		return &r.OriginScope
	}
	return nil
}

// metaField is the fact a member of a record's metadata object fills (M1 at metadata level).
func metaField(r *rules.Record, name string) **rules.Value {
	switch name {
	case "shared":
		return &r.MetaShared
	case "sharing":
		return &r.MetaSharing
	}
	return nil
}

// factNames are the member names factField knows.
var factNames = []string{"replaced_by", "superseded_by", "is_deleted", "invalid_at", "expired_at", "lifecycle_state", "state", "shared", "sharing", "is_template", "template_id", "base_template_id", "source_passage", "file_id", "record_class", "source", "attributed_scope", "history_scope", "storage_scope", "group_id", "episode_group_ids", "endpoint_group_ids", "origin_claim_id", "origin_scope"}

// absentValue is the one, read-only, absent member every record shares.
var absentValue = rules.AbsentValue

// absentRecord is a record whose every fact is an absent member.
var absentRecord = func() rules.Record {
	var r rules.Record
	for _, n := range factNames {
		*factField(&r, n) = absentValue
	}
	for _, n := range []string{"shared", "sharing"} {
		*metaField(&r, n) = absentValue
	}
	return r
}()

// arena holds the facts of one export's records: every present member's Value, and the string
// entries of every Value's Strs. Both are sized up front (factCount) and never grow, so the
// pointers into them stay valid.
type arena struct {
	vals []rules.Value
	strs []string
}

// recordFacts reduces a record's members to typed values for the rules, in one pass, writing into
// the record's own facts.
func recordFacts(f *rules.Record, r *jsontree.Value, ar *arena) {
	*f = absentRecord
	obj := r.Obj()
	for i := range obj {
		m := &obj[i]
		if at := factField(f, m.Name); at != nil {
			*at = ar.put(&m.Val)
			continue
		}
		if m.Name == "metadata" && m.Val.Kind() == jsontree.Object {
			meta := m.Val.Obj()
			for j := range meta {
				if at := metaField(f, meta[j].Name); at != nil {
					*at = ar.put(&meta[j].Val)
				}
			}
		}
	}
}

// factCount counts the members that become facts, and the string entries of their Strs.
func factCount(recs []jsontree.Value) (facts, strs int) {
	count := func(v *jsontree.Value) {
		facts++
		switch v.Kind() {
		case jsontree.String:
			strs++
		case jsontree.Array:
			arr := v.Arr()
			for i := range arr {
				if arr[i].Kind() == jsontree.String {
					strs++
				}
			}
		}
	}
	var r rules.Record
	for i := range recs {
		obj := recs[i].Obj()
		for j := range obj {
			m := &obj[j]
			if factField(&r, m.Name) != nil {
				count(&m.Val)
			} else if m.Name == "metadata" && m.Val.Kind() == jsontree.Object {
				meta := m.Val.Obj()
				for k := range meta {
					if metaField(&r, meta[k].Name) != nil {
						count(&meta[k].Val)
					}
				}
			}
		}
	}
	return facts, strs
}

// put reduces one JSON value to a rules.Value ("set" as READINGS defines it) in the arena.
func (ar *arena) put(v *jsontree.Value) *rules.Value {
	at := len(ar.strs)
	n := 0
	switch v.Kind() {
	case jsontree.String:
		ar.strs = append(ar.strs, v.Str())
	case jsontree.Array:
		arr := v.Arr()
		n = len(arr)
		for _, e := range arr {
			if e.Kind() == jsontree.String {
				ar.strs = append(ar.strs, e.Str())
			}
		}
	case jsontree.Object:
		n = len(v.Obj())
	}
	return ar.value(v.Kind(), v.Str(), v.Bool(), n, at)
}

// value adds the rules.Value of a member of kind k to the arena: s and b are a string's or a
// bool's value, n counts an array's elements or an object's members, and the string entries
// (a string's own, an array's strings) are ar.strs[at:], appended already. Both readers (put for
// the tree, lexValue for the read-once path) end here, so that a fact is one thing whoever read it.
func (ar *arena) value(k jsontree.Kind, s string, b bool, n, at int) *rules.Value {
	out := rules.Value{Kind: k.String(), Present: k != jsontree.Absent && k != jsontree.Null}
	switch k {
	case jsontree.String:
		out.Str, out.Set, out.Items = s, s != "", 1
		out.Strs = ar.strs[at : at+1 : at+1]
	case jsontree.Bool:
		out.Bool, out.Set, out.Items = b, b, 1
	case jsontree.Number:
		out.Set, out.Items = true, 1
	case jsontree.Array:
		out.Set, out.Items = n > 0, int64(n)
		if m := len(ar.strs); m > at {
			out.Strs = ar.strs[at:m:m]
		}
	case jsontree.Object:
		out.Set, out.Items = n > 0, 1
	}
	// Appending may move the arena; the facts already handed out keep pointing at the array
	// they were cut from, which nothing writes again.
	ar.vals = append(ar.vals, out)
	return &ar.vals[len(ar.vals)-1]
}

// templateIdentity is the identity (jsontree.Value.Identity: equal for equal JSON values) of the
// record's template_id member, or of its base_template_id when base is set: what template
// lineage compares (L-4).
func (r *record) templateIdentity(base bool) string {
	name, f, text := "template_id", r.facts.TemplateID, r.tmplText
	if base {
		name, f, text = "base_template_id", r.facts.BaseTemplateID, r.baseText
	}
	if r.raw != nil {
		return r.raw.Get(name).Identity()
	}
	switch f.Kind {
	case "string":
		return strconv.Quote(f.Str)
	case "bool":
		return strconv.FormatBool(f.Bool)
	}
	// A number, an array or an object: read again from its text as written, which the read-once
	// path kept (rare: the rules compare these only for template lineage).
	var s jsontree.Slabs
	v, err := jsontree.Decode([]byte(text), jsontree.Options{MaxDepth: len(text) + 1}, &s)
	if err != nil {
		return "" // not reached: the whole body was read under the same strictness
	}
	return v.Identity()
}

// release gives the export's buffers back; the export must not be used afterwards.
