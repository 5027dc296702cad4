// Package pack turns native memory-store dumps (Mem0, Graphiti, Zep Cloud, Letta, claim JSONL)
// into one submission for the memory-scope-hygiene/v1 audit, on the caller's machine.
//
// The package never guesses a scope: a scope key is copied only where the native format carries
// it, or stamped from what the caller states (a flag or a file name naming the listing's scope).
// What the native format lacks stays absent, and the Inventory says so. Errors name files, item
// indices and counts only, never any part of an export. Packages of submissions (build, sign,
// verify) are pack/mpp's job; their record after sealing is pack/portability's.
package pack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Version is the version of pack, written into every package manifest.
const Version = "2.0.0"

// Caps published by the criteria (input_contract.caps).
const (
	// MaxRecords is the published record cap per audit.
	MaxRecords = 1000
	// MaxBodyBytes is the published request-body cap in bytes.
	MaxBodyBytes = 262144
	// maxDepth is the nesting limit of R-3 (the top-level value is level 1).
	maxDepth = 64
)

// Forms of a submission.
const (
	// FormFullText carries content_text on every record.
	FormFullText = "full_text"
	// FormHashOnly carries content_hash on every record.
	FormHashOnly = "hash_only"
)

// Source names a native dump format accepted by Pack.
type Source string

// The accepted sources.
const (
	Mem0Platform Source = "mem0-platform"
	Mem0OSS      Source = "mem0-oss"
	Graphiti     Source = "graphiti"
	ZepCloud     Source = "zep-cloud"
	LettaAF      Source = "letta-af"
	LettaAPI     Source = "letta-api"
	ClaimsJSONL  Source = "claims-jsonl"
)

// Sources lists every accepted source in a stable order.
var Sources = []Source{Mem0Platform, Mem0OSS, Graphiti, ZepCloud, LettaAF, LettaAPI, ClaimsJSONL}

// variants published per family (criteria input_contract_text).
var familyVariants = map[string][]string{
	"mem0":         {"platform", "oss"},
	"zep_graphiti": {"graphiti", "zep_cloud"},
	"letta":        {"mixed", "blocks", "passages"},
	"generic":      {"claim-jsonl"},
}

// File is one input file: the name the caller gave and its exact bytes.
type File struct {
	Name string
	Data []byte
	// Raw, when set, is the file's exact bytes and Data was derived from it (a Mem0 history.db
	// read into JSON Lines by the caller): sizes and digests are of Raw.
	Raw []byte
}

// Inputs groups the files of one pack by role.
type Inputs struct {
	// Records are the main dumps (memories, edges, .af files, API dumps, claim lines).
	Records []File
	// History are Mem0 history / events dumps (DELETE events mark records deleted).
	History []File
	// Episodes are Graphiti episode listings (uuid, group_id) for episode_group_ids.
	Episodes []File
	// Nodes are Graphiti node listings (uuid, group_id) for endpoint_group_ids.
	Nodes []File
	// Passages are Letta passage dumps (archival and source passages).
	Passages []File
	// Archives are Letta archive-to-agent resolutions (L-3).
	Archives []File
}

// InputRoles name the roles of Inputs' file lists, in the order Lists gives them.
var InputRoles = []string{"records", "history", "episodes", "nodes", "passages", "archives"}

// Lists are the file lists of in, in the order of InputRoles.
func (in Inputs) Lists() [][]File {
	return [][]File{in.Records, in.History, in.Episodes, in.Nodes, in.Passages, in.Archives}
}

// ManifestOptions are the caller's manifest declarations. Content keys are given as text; in
// hash-only form they are hashed like the records' content.
type ManifestOptions struct {
	// DeclaredScopeKeys replaces the family's default keys when DeclaredSet is true.
	DeclaredScopeKeys []string
	// DeclaredSet says DeclaredScopeKeys was given (an empty list declares no keys).
	DeclaredSet bool
	// GlobalScopes are scope strings treated as M1-marked (M3-a).
	GlobalScopes []string
	// GlobalContentKeys are content texts declared global (M3-b); hashed in hash-only form.
	GlobalContentKeys []string
	// GlobalContentHashes are content keys given already hashed (hash-only form only).
	GlobalContentHashes []string
	// GlobalClaimIDs are record ids declared canonical global originals (M3-c).
	GlobalClaimIDs []string
	// PrivateScopes are scope strings declared non-sharing.
	PrivateScopes []string
	// ScopeFiltered declares a scope-filtered Mem0 export.
	ScopeFiltered bool
	// MultiScope declares a multi-scope Zep/Graphiti submission.
	MultiScope bool
}

// Options control one pack.
type Options struct {
	Source Source
	// AllowEmpty accepts inputs that hold no records: a package's empty authorized selection
	// (a submission itself needs at least one record).
	AllowEmpty bool
	// HashOnly produces the hash_only form: content_hash replaces content_text.
	HashOnly bool
	// KeepMetadata keeps full metadata in hash-only form (default: only the M1 markers
	// shared/sharing are kept, so no free text leaves).
	KeepMetadata bool
	// Cutoff is the capture cutoff: the time the dump stands for. Mem0 expiration dates are
	// compared with it. The zero time means unknown (expiration dates are then not compared).
	Cutoff time.Time
	// HashSourceKey, in hash-only form, replaces each source value by HashSource(key, value).
	HashSourceKey []byte
	// Variant overrides the source's default variant (must be published for the family).
	Variant string
	// Manifest holds the manifest declarations.
	Manifest ManifestOptions
	// GraphID stamps graph_id on every Zep Cloud record (a standalone-graph listing).
	GraphID string
	// UserID stamps a Zep Cloud user-graph listing: graph_id "user:<id>" and user_id "<id>".
	UserID string
	// AgentAliases maps file-local Letta .af agent ids (as emitted, e.g. "af2:agent-0") to
	// server agent ids, so blocks and passages of one agent share a scope. Explicit only.
	AgentAliases map[string]string
}

// Record is one flat submission record. Keys follow the criteria's record fields.
type Record map[string]any

// Manifest is the submission manifest (only members the caller declared are present).
type Manifest struct {
	DeclaredScopeKeys *[]string `json:"declared_scope_keys,omitempty"`
	ScopeFiltered     bool      `json:"scope_filtered,omitempty"`
	MultiScope        bool      `json:"multi_scope,omitempty"`
	GlobalScopes      []string  `json:"global_scopes,omitempty"`
	GlobalContentKeys []string  `json:"global_content_keys,omitempty"`
	GlobalClaimIDs    []string  `json:"global_claim_ids,omitempty"`
	PrivateScopes     []string  `json:"private_scopes,omitempty"`
}

func (m *Manifest) empty() bool {
	return m == nil || (m.DeclaredScopeKeys == nil && !m.ScopeFiltered && !m.MultiScope &&
		len(m.GlobalScopes) == 0 && len(m.GlobalContentKeys) == 0 &&
		len(m.GlobalClaimIDs) == 0 && len(m.PrivateScopes) == 0)
}

// Submission is the body submitted to the service.
type Submission struct {
	Family   string    `json:"family"`
	Form     string    `json:"form"`
	Variant  string    `json:"variant,omitempty"`
	Manifest *Manifest `json:"manifest,omitempty"`
	Records  []Record  `json:"records"`
}

// Result is the outcome of Pack: the submission and its inventory (which stays local).
type Result struct {
	Submission *Submission
	Inventory  *Inventory
}

// Marshal returns the exact submission bytes: compact JSON, keys sorted inside records, no HTML
// escaping, no trailing newline.
func (s *Submission) Marshal() ([]byte, error) {
	return MarshalCompact(s)
}

// MarshalCompact is the JSON form of every file pack writes: compact, no HTML escaping, no
// trailing newline.
func MarshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("pack: encode: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// CapError reports a submission over the published caps.
type CapError struct {
	Records, Bytes int
}

func (e *CapError) Error() string {
	return fmt.Sprintf("pack: submission over the published caps: %d records (cap %d), %d bytes (cap %d); use --split to write parts that each fit",
		e.Records, MaxRecords, e.Bytes, MaxBodyBytes)
}

// CheckCaps returns a *CapError when the marshalled submission is over a published cap.
func CheckCaps(nRecords int, body []byte) error {
	if nRecords > MaxRecords || len(body) > MaxBodyBytes {
		return &CapError{Records: nRecords, Bytes: len(body)}
	}
	return nil
}

// Pack reads the inputs in the given source format and builds one submission and its inventory.
// It does not check the caps; see CheckCaps and Split.
func Pack(in Inputs, opt Options) (*Result, error) {
	inv := newInventory(opt)
	for k, fs := range in.Lists() {
		inv.addFiles(InputRoles[k], fs)
	}
	inv.inputOmissions(in)
	if len(in.Records) == 0 && !(isLetta(opt.Source) && len(in.Passages) > 0) {
		return nil, errors.New("pack: no input files")
	}
	if err := checkRoles(in, opt.Source); err != nil {
		return nil, err
	}
	family, variant, recs, err := convert(in, opt, inv)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 && !opt.AllowEmpty {
		return nil, errors.New("pack: the inputs hold no records (a submission needs at least one)")
	}
	if opt.Variant != "" {
		if !contains(familyVariants[family], opt.Variant) {
			return nil, fmt.Errorf("pack: variant %q is not published for family %s", opt.Variant, family)
		}
		variant = opt.Variant
	}
	if err := checkUniqueIDs(recs); err != nil {
		return nil, err
	}
	form := FormFullText
	if opt.HashOnly {
		form = FormHashOnly
		applyHashOnly(recs, opt, inv)
	}
	man, err := buildManifest(opt)
	if err != nil {
		return nil, err
	}
	for i, r := range recs {
		if d := depth(map[string]any(r)); d+2 > maxDepth {
			return nil, fmt.Errorf("pack: record at index %d nests %d levels deep; the submission limit is %d", i, d+2, maxDepth)
		}
	}
	sub := &Submission{Family: family, Form: form, Variant: variant, Manifest: man, Records: recs}
	inv.setRecords(sub)
	return &Result{Submission: sub, Inventory: inv}, nil
}

// inputOmissions declares, per input file, the objects with a repeated member name and the
// characters decoding replaced: what was read may not be what the store meant.
func (inv *Inventory) inputOmissions(in Inputs) {
	for _, fs := range in.Lists() {
		for _, f := range fs {
			n := replacedChars(f.Data)
			if v, err := decodeValue(f.Data); err == nil {
				if inner, ok := v.(string); ok { // a double-encoded document (some .af files)
					n += replacedChars([]byte(inner))
				}
			}
			d := duplicateMembers(f.Data)
			inv.omit("objects with a repeated member name (the last value was read)", OmissionCompatibility, d, true,
				"a JSON object names one member twice; decoders disagree on which value counts, so what was read may not be what the store meant")
			inv.omit("characters replaced by U+FFFD (lone UTF-16 surrogates, invalid UTF-8)", OmissionCompatibility, n, true,
				"JSON decoding replaces each with U+FFFD: the text is not submitted exactly as written, so its content hash differs from the source's and duplicates may be merged or missed")
		}
	}
}

// convert converts the inputs by their source: the submission's family and variant and its
// records.
func convert(in Inputs, opt Options, inv *Inventory) (family, variant string, recs []Record, err error) {
	switch opt.Source {
	case Mem0Platform, Mem0OSS:
		family = "mem0"
		variant = "platform"
		if opt.Source == Mem0OSS {
			variant = "oss"
		}
		recs, err = buildMem0(in, opt, inv)
	case Graphiti:
		family, variant = "zep_graphiti", "graphiti"
		recs, err = buildGraphiti(in, inv)
	case ZepCloud:
		family, variant = "zep_graphiti", "zep_cloud"
		recs, err = buildZepCloud(in, opt, inv)
	case LettaAF, LettaAPI:
		family = "letta"
		recs, variant, err = buildLetta(in, opt, inv)
	case ClaimsJSONL:
		family, variant = "generic", "claim-jsonl"
		recs, err = buildClaims(in, inv)
		if err == nil {
			err = checkClaimsForm(recs, opt.HashOnly)
		}
	default:
		return "", "", nil, fmt.Errorf("pack: unknown source %q", string(opt.Source))
	}
	return family, variant, recs, err
}

func isLetta(s Source) bool { return s == LettaAF || s == LettaAPI }

func checkRoles(in Inputs, s Source) error {
	type role struct {
		name  string
		files []File
		ok    bool
	}
	roles := []role{
		{"history", in.History, s == Mem0Platform || s == Mem0OSS},
		{"episodes", in.Episodes, s == Graphiti},
		{"nodes", in.Nodes, s == Graphiti},
		{"passages", in.Passages, isLetta(s)},
		{"archives", in.Archives, isLetta(s)},
	}
	for _, r := range roles {
		if len(r.files) > 0 && !r.ok {
			return fmt.Errorf("pack: %s files are not used by source %s", r.name, string(s))
		}
	}
	return nil
}

func buildManifest(opt Options) (*Manifest, error) {
	mo := opt.Manifest
	m := &Manifest{
		ScopeFiltered:  mo.ScopeFiltered,
		MultiScope:     mo.MultiScope,
		GlobalScopes:   dedupe(mo.GlobalScopes),
		GlobalClaimIDs: dedupe(mo.GlobalClaimIDs),
		PrivateScopes:  dedupe(mo.PrivateScopes),
	}
	if mo.DeclaredSet {
		keys := dedupe(mo.DeclaredScopeKeys)
		if keys == nil {
			keys = []string{}
		}
		m.DeclaredScopeKeys = &keys
	}
	var ck []string
	for _, k := range mo.GlobalContentKeys {
		if opt.HashOnly {
			ck = append(ck, HashContent(k))
		} else {
			ck = append(ck, k)
		}
	}
	if len(mo.GlobalContentHashes) > 0 {
		if !opt.HashOnly {
			return nil, errors.New("pack: global content hashes need the hash-only form (--hash-only)")
		}
		ck = append(ck, mo.GlobalContentHashes...)
	}
	m.GlobalContentKeys = dedupe(ck)
	if m.empty() {
		return nil, nil
	}
	return m, nil
}

func checkUniqueIDs(recs []Record) error {
	seen := make(map[string]int, len(recs))
	for i, r := range recs {
		id, _ := r["id"].(string)
		if id == "" {
			return fmt.Errorf("pack: record at index %d has no id", i)
		}
		if j, ok := seen[id]; ok {
			return fmt.Errorf("pack: records at index %d and %d share one id", j, i)
		}
		seen[id] = i
	}
	return nil
}

func dedupe(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// depth is the nesting depth of a decoded JSON value (a scalar is 0, an empty object 1).
func depth(v any) int {
	switch t := v.(type) {
	case map[string]any:
		d := 0
		for _, x := range t {
			d = max(d, depth(x))
		}
		return d + 1
	case Record:
		return depth(map[string]any(t))
	case []any:
		d := 0
		for _, x := range t {
			d = max(d, depth(x))
		}
		return d + 1
	case []string:
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
