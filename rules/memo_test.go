package rules

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"cel.dev/cel-go/cel"
)

func str(s string) *Value {
	return &Value{Kind: "string", Present: true, Set: s != "", Str: s, Strs: []string{s}, Items: 1}
}

func strs(ss ...string) *Value {
	return &Value{Kind: "array", Present: true, Set: len(ss) > 0, Strs: ss, Items: int64(len(ss))}
}

var absentV = &Value{Kind: "absent"}

// zepRecord is a record whose conflict fields name scopes.
func zepRecord(group, attributed string, episodes ...string) *Record {
	r := &Record{Scoped: true, ScopeString: group}
	for _, f := range []**Value{&r.ReplacedBy, &r.SupersededBy, &r.IsDeleted, &r.InvalidAt, &r.ExpiredAt,
		&r.LifecycleState, &r.State, &r.Shared, &r.Sharing, &r.MetaShared, &r.MetaSharing, &r.IsTemplate,
		&r.TemplateID, &r.BaseTemplateID, &r.SourcePassage, &r.FileID, &r.RecordClass, &r.Source,
		&r.AttributedScope, &r.HistoryScope, &r.StorageScope, &r.GroupID, &r.EpisodeGroupIDs,
		&r.EndpointGroupIDs, &r.OriginClaimID, &r.OriginScope} {
		*f = absentV
	}
	r.GroupID, r.AttributedScope, r.EpisodeGroupIDs = str(group), str(attributed), strs(episodes...)
	return r
}

// TestMemoKeyByEqualityPattern: the fused conflict checks compare strings for equality only, so
// records that differ only in the names of their scopes share a key, and records whose strings
// are equal in a different pattern do not. A string equal to a literal of the program keeps its
// identity.
func TestMemoKeyByEqualityPattern(t *testing.T) {
	ps, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	p := &ps.fast.record[fusedConflicts].proj
	if !p.canon || p.whole {
		t.Fatalf("conflict checks: canon %v whole %v, want an equality-only projection", p.canon, p.whole)
	}
	a := ps.NewRecordActivation(Scope{Family: "zep_graphiti", Form: "full_text", Variant: "graphiti"})
	key := func(r *Record) []byte {
		a.Record = r
		return append([]byte(nil), p.key(a)...)
	}
	same := key(zepRecord("g001", "g001", "g001", "g002"))
	for name, tc := range map[string]struct {
		r    *Record
		want bool
	}{
		"renamed scopes":           {zepRecord("g107", "g107", "g107", "g009"), true},
		"attributed elsewhere":     {zepRecord("g107", "g009", "g107", "g009"), false},
		"episodes all own":         {zepRecord("g107", "g107", "g107", "g107"), false},
		"scope equal to a literal": {zepRecord("string", "string", "string", "g002"), false},
		"scope equal to family":    {zepRecord("zep_graphiti", "zep_graphiti", "zep_graphiti", "g002"), false},
	} {
		if got := bytes.Equal(key(tc.r), same); got != tc.want {
			t.Errorf("%s: same key %v, want %v", name, got, tc.want)
		}
	}
}

// TestEqualityOnlyAnalysis: a program that does anything with a string but compare it for
// equality is keyed verbatim.
func TestEqualityOnlyAnalysis(t *testing.T) {
	base, err := baseEnv()
	if err != nil {
		t.Fatal(err)
	}
	base, err = base.Extend(cel.Variable("record", cel.ObjectType(recordType)))
	if err != nil {
		t.Fatal(err)
	}
	for text, canon := range map[string]bool{
		`record.group_id.str == record.attributed_scope.str`:                true,
		`record.group_id.str in ["a", "b"]`:                                 true,
		`record.episode_group_ids.strs.exists(g, g != record.group_id.str)`: true,
		`size(record.episode_group_ids.strs) == 2`:                          true,
		`record.group_id.str.startsWith("g")`:                               false,
		`record.group_id.str < record.attributed_scope.str`:                 false,
		`size(record.group_id.str) > 3`:                                     false,
		`record.group_id.str + "x" == record.attributed_scope.str`:          false,
		`(record.scoped ? record.group_id.str : "x") == record.source.str`:  false,
		`record.episode_group_ids.strs.exists(g, g.endsWith("1"))`:          false,
	} {
		ast, iss := base.Compile(text)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", text, iss.Err())
		}
		if got := projectionOf(ast, nil).canon; got != canon {
			t.Errorf("%s: canon %v, want %v", text, got, canon)
		}
	}
}

// TestMemoKeySharedAbsent: the shared absent member is keyed by one tag, and the strings it
// stands for ("absent", "") keep their identity wherever else they occur, so a record whose other
// string is "" never shares a key with one whose other string is not.
func TestMemoKeySharedAbsent(t *testing.T) {
	base, err := baseEnv()
	if err != nil {
		t.Fatal(err)
	}
	base, err = base.Extend(cel.Variable("record", cel.ObjectType(recordType)))
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := base.Compile(`record.sharing.str == record.state.str || record.sharing.kind == record.state.str`)
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	p := projectionOf(ast, nil)
	if !p.canon {
		t.Fatal("want an equality-only projection")
	}
	a := &RecordActivation{Scope: Scope{Family: "generic", Form: "full_text"}}
	key := func(sharing, state *Value) string {
		a.Record = &Record{Sharing: sharing, State: state}
		return string(p.key(a))
	}
	pairs := []struct {
		name string
		x, y string
	}{
		{"empty vs other", key(AbsentValue, str("")), key(AbsentValue, str("x"))},
		{"kind name vs other", key(AbsentValue, str("absent")), key(AbsentValue, str("y"))},
		{"absent vs empty string", key(AbsentValue, str("x")), key(str(""), str("x"))},
	}
	for _, pr := range pairs {
		if pr.x == pr.y {
			t.Errorf("%s: same key", pr.name)
		}
	}
	if key(AbsentValue, str("x")) != key(AbsentValue, str("z")) {
		t.Error("renamed strings: different keys, want one")
	}
}

// TestKeyBitsFitAWord: appendKey gives every field a projection reads one bit of a 64-bit word,
// so a Record with more than 64 fields would need a wider one.
func TestKeyBitsFitAWord(t *testing.T) {
	if n := recordStruct.NumField(); n > 64 {
		t.Fatalf("Record has %d fields; appendKey's bit word holds 64", n)
	}
}

// TestCanonKeyLongStrings: the equality pattern tells apart strings that agree on their first
// eight bytes (headWord) and differ later, or differ only in length.
func TestCanonKeyLongStrings(t *testing.T) {
	p := projection{canon: true, literals: map[string]bool{}, fields: []fieldUse{
		{off: unsafe.Offsetof(Record{}.ScopeString), kind: reflect.String},
		{off: unsafe.Offsetof(Record{}.AttributedScope), kind: reflect.Pointer, subs: subStr},
	}}
	p.indexLiterals()
	keyOf := func(a, b string) string {
		act := &RecordActivation{Record: &Record{ScopeString: a, AttributedScope: str(b)}}
		return string(p.key(act))
	}
	same := keyOf("abcdefgh-1", "abcdefgh-1")
	for _, pair := range [][2]string{{"abcdefgh-1", "abcdefgh-2"}, {"abcdefgh", "abcdefgh-"}, {"abc", "abc\x00"}, {"abcdefgh-1", "abcdefgh-10"}} {
		if keyOf(pair[0], pair[1]) == same {
			t.Fatalf("%q and %q keyed as equal", pair[0], pair[1])
		}
	}
	if keyOf("0123456789-x", "0123456789-x") != same || keyOf("g1", "g1") != same {
		t.Fatal("equal strings keyed apart")
	}
}

// TestWordKeys: the marks and the conflict applicability read flags only, so they are keyed by a
// word (TestRecordMemoEqualsFresh then holds that memo to fresh evaluation); flags that differ
// give different words, and a kind that is none of the seven leaves the word key to the byte key.
func TestWordKeys(t *testing.T) {
	ps, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{fusedMarks, fusedApplies} {
		if !ps.fast.record[k].proj.word {
			t.Fatalf("fused program %d: not keyed by a word", k)
		}
	}
	for _, k := range []int{fusedLive, fusedPreds, fusedConflicts} {
		if ps.fast.record[k].proj.word {
			t.Fatalf("fused program %d reads strings but is keyed by a word", k)
		}
	}
	p := &ps.fast.record[fusedMarks].proj
	a := ps.NewRecordActivation(Scope{Family: "generic", Form: "full_text"})
	word := func(shared *Value) (uint64, bool) {
		r := zepRecord("g1", "g1")
		r.Shared = shared
		a.Record = r
		return p.wordKey(a)
	}
	yes, _ := word(&Value{Kind: "bool", Present: true, Set: true, Bool: true})
	no, _ := word(&Value{Kind: "bool", Present: true})
	text, _ := word(str("true"))
	abs, _ := word(AbsentValue)
	if yes == no || yes == text || no == abs || text == abs {
		t.Errorf("distinct shared members share a word: %x %x %x %x", yes, no, text, abs)
	}
	if _, ok := word(&Value{Kind: "date"}); ok {
		t.Error("a kind that is none of the seven was keyed by a word")
	}
}
