package rules

// The typed inputs of the criteria's CEL expressions. Go decodes an export into these facts; every
// decision about them is made by an expression in criteria.yaml. Field names in CEL are the `cel`
// tags (snake_case), so a misspelt field is a type error at load, never a silent false at run time.

// Value is one JSON member of a record as submitted, reduced to what rules may test. Only the
// field matching Kind carries a value; the others are zero.
type Value struct {
	// The fields are in this order so that a Value is 72 bytes, not 80, and what the rules test
	// most (kind, present, set, bool, items) shares its first 32 bytes: the record stage's memo
	// key reads them for every record, and the facts of a max-size export are hundreds of them.

	// Kind is one of "absent", "null", "string", "bool", "number", "array", "object".
	Kind string `cel:"kind"`
	// Present is true when the member exists and is not null (READINGS R-4: null means absent).
	Present bool `cel:"present"`
	// Set is true when the member is present and none of null, false, "", [] or {} (READINGS).
	Set bool `cel:"set"`
	// Bool is the value when Kind is "bool", else false.
	Bool bool `cel:"bool"`
	// Items counts the entries of an array, or 1 for a lone value that is present.
	Items int64 `cel:"items"`
	// Str is the value when Kind is "string", else "".
	Str string `cel:"str"`
	// Strs holds the string entries of an array, or the one string of a lone string value
	// a lone value given for an id list is a list of one).
	Strs []string `cel:"strs"`
}

// AbsentValue is the one, read-only, absent member that records may share: the fused programs'
// memo keys it with one byte instead of its members.
var AbsentValue = &Value{Kind: "absent"}

// Record is one submitted record as the per-record rules see it. Its members are pointers so that
// CEL selects a field without copying the struct; an absent member points at a shared, read-only
// absent Value, and no Value is ever modified after the record is built.
type Record struct {
	// The bools come first, together, so that they take 8 bytes rather than 24 with padding, and
	// so that a walk over the records that reads them (state.records) reads one cache line of
	// each record.

	// Scoped is true when the record carries a scope value that counts on a declared key
	// (Letta: a non-empty attached_to set).
	Scoped bool `cel:"scoped"`
	// Global is true when the record lives in the global partition (M2, R-10).
	Global bool `cel:"global"`
	// SupersedesTarget is true when another record's supersedes names this record.
	SupersedesTarget bool `cel:"supersedes_target"`
	// Manifest declarations that name this record (M3, R-19, R-20).
	InGlobalScopes      bool `cel:"in_global_scopes"`
	InPrivateScopes     bool `cel:"in_private_scopes"`
	InGlobalContentKeys bool `cel:"in_global_content_keys"`
	InGlobalClaimIDs    bool `cel:"in_global_claim_ids"`
	// M4Resolves is the outcome of the M4 pointer walk; false before the walk and
	// when the record carries no pointer.
	M4Resolves bool `cel:"m4_resolves"`
	// KeyCount is the number of declared keys on which the record carries a counting value.
	KeyCount int64 `cel:"key_count"`
	// ScopeString is the record's printed scope; "" when unscoped.
	ScopeString string `cel:"scope_string"`

	ReplacedBy     *Value `cel:"replaced_by"`
	SupersededBy   *Value `cel:"superseded_by"`
	IsDeleted      *Value `cel:"is_deleted"`
	InvalidAt      *Value `cel:"invalid_at"`
	ExpiredAt      *Value `cel:"expired_at"`
	LifecycleState *Value `cel:"lifecycle_state"`
	State          *Value `cel:"state"`

	Shared      *Value `cel:"shared"`
	Sharing     *Value `cel:"sharing"`
	MetaShared  *Value `cel:"meta_shared"`
	MetaSharing *Value `cel:"meta_sharing"`

	IsTemplate     *Value `cel:"is_template"`
	TemplateID     *Value `cel:"template_id"`
	BaseTemplateID *Value `cel:"base_template_id"`
	SourcePassage  *Value `cel:"source_passage"`
	FileID         *Value `cel:"file_id"`
	RecordClass    *Value `cel:"record_class"`

	Source           *Value `cel:"source"`
	AttributedScope  *Value `cel:"attributed_scope"`
	HistoryScope     *Value `cel:"history_scope"`
	StorageScope     *Value `cel:"storage_scope"`
	GroupID          *Value `cel:"group_id"`
	EpisodeGroupIDs  *Value `cel:"episode_group_ids"`
	EndpointGroupIDs *Value `cel:"endpoint_group_ids"`
	OriginClaimID    *Value `cel:"origin_claim_id"`
	OriginScope      *Value `cel:"origin_scope"`
}

// Cluster is what the cluster rules see of one content key's live scoped records. Copies are the
// live non-global members; counts are over copies unless named otherwise.
type Cluster struct {
	// Letta is true for the Letta family, whose scopes are sets (L-1, L-2).
	Letta bool `cel:"letta" meaning:"the family is Letta, whose scopes are sets (L-1, L-2)"`
	// Copies is the number of live non-global members.
	Copies int64 `cel:"copies" meaning:"copies: live non-global members, the ones the precedence judges"`
	// Globals is the number of global members (listed, never judged).
	Globals int64 `cel:"globals" meaning:"global members, listed and never judged (M2)"`
	// DistinctScopes is the number of distinct scopes among copies.
	DistinctScopes int64 `cel:"distinct_scopes" meaning:"distinct scopes among the copies"`
	// DisjointPair is true when two copies have disjoint scope sets (Letta, L-2).
	DisjointPair bool `cel:"disjoint_pair" meaning:"two copies have disjoint scope sets (Letta, L-2)"`
	// Covered counts copies for which the `covered` predicate holds.
	Covered int64 `cel:"covered" meaning:"copies covered by a marker (M1, M3 or a resolving M4 pointer)"`
	// Malformed counts copies for which `malformed_marker` holds.
	Malformed int64 `cel:"malformed" meaning:"copies with a malformed marker: shared present and not a boolean (N4)"`
	// Contradictions counts copies for which `contradiction` holds.
	Contradictions int64 `cel:"contradictions" meaning:"copies that contradict their own declaration (N3)"`
	// BrokenPointers counts copies carrying an M4 pointer that does not resolve.
	BrokenPointers int64 `cel:"broken_pointers" meaning:"copies whose M4 pointer does not resolve (N2)"`
	// KeySets is the number of distinct sets of declared keys carried by copies (N5).
	KeySets int64 `cel:"key_sets" meaning:"distinct sets of declared scope keys among the copies (N5)"`
	// Sourced counts copies carrying a counting source.
	Sourced int64 `cel:"sourced" meaning:"copies carrying a source"`
	// DistinctSources is the number of distinct counting sources among copies.
	DistinctSources int64 `cel:"distinct_sources" meaning:"distinct sources among the copies (B5)"`
	// WithTemplateID counts copies with template_id set; TemplateIDs counts its distinct string values.
	WithTemplateID int64 `cel:"with_template_id" meaning:"copies with a template_id"`
	TemplateIDs    int64 `cel:"template_ids" meaning:"distinct template_id values"`
	// WithBaseTemplateID and BaseTemplateIDs are the same for base_template_id.
	WithBaseTemplateID int64 `cel:"with_base_template_id" meaning:"copies with a base_template_id"`
	BaseTemplateIDs    int64 `cel:"base_template_ids" meaning:"distinct base_template_id values"`
}

// Submission is what the assessability gates see of the whole export.
type Submission struct {
	// ScopeKeys is the declared key list in declared order (Letta: ["attached_to"]).
	ScopeKeys []string `cel:"scope_keys"`
	// ScopeKeysSource is "family_default", "manifest" or "attached_to".
	ScopeKeysSource string `cel:"scope_keys_source"`
	Records         int64  `cel:"records"`
	Live            int64  `cel:"live"`
	Eligible        int64  `cel:"eligible"`
	// DistinctScopes counts distinct scopes over all records that have one.
	DistinctScopes int64 `cel:"distinct_scopes"`
	// LiveNonGlobalScopes counts distinct scopes over the live, scoped, non-global records: the
	// scopes a cross-scope cluster could span.
	LiveNonGlobalScopes int64 `cel:"live_non_global_scopes"`
	// ScopeFiltered and MultiScope are the manifest flags, true only when JSON true.
	ScopeFiltered bool `cel:"scope_filtered"`
	MultiScope    bool `cel:"multi_scope"`
	// ManifestPresent is true when the export carries a manifest object.
	ManifestPresent bool `cel:"manifest_present"`
	// ConflictCheckedRecords counts records to which at least one conflict sub-check applies.
	ConflictCheckedRecords int64 `cel:"conflict_checked_records"`
}
