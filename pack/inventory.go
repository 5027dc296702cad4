package pack

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"time"
)

// Inventory describes one pack for the caller: what was read, what was produced, what was
// dropped, derived or left absent, and the digest of the exact submission bytes. It stays with
// the caller; the service never asks for it.
type Inventory struct {
	Kind     string          `json:"kind"`
	Note     string          `json:"note"`
	Source   string          `json:"source"`
	Family   string          `json:"family"`
	Form     string          `json:"form"`
	Variant  string          `json:"variant"`
	Inputs   []InventoryFile `json:"inputs"`
	Records  RecordCounts    `json:"records"`
	Fields   FieldReport     `json:"fields"`
	Absent   []AbsentField   `json:"absent_in_native_format"`
	Unresolv map[string]int  `json:"unresolved"`
	Counts   map[string]int  `json:"counts"`
	Notes    []string        `json:"notes"`
	Output   []OutputPart    `json:"submission"`
	Splits   []string        `json:"split_notes,omitempty"`
	// HashOnlyDropped counts, per field, the record fields a hash-only pack dropped because the
	// audit does not read them.
	HashOnlyDropped map[string]int `json:"hash_only_fields_dropped,omitempty"`
	// SourceValues says how source values were submitted in hash-only form.
	SourceValues string `json:"hash_only_source_values,omitempty"`
	// Omissions lists every part of the input not converted, with counts, blocking or not.
	Omissions []Omission `json:"omissions"`
	// ExpiryCutoff is the time expiration dates were compared with (RFC 3339), when one was set:
	// a record expired before it is marked expired, so the pack's meaning depends on it.
	ExpiryCutoff string `json:"expiry_cutoff,omitempty"`

	prov     map[string]provenance
	dropped  map[string]int
	derived  map[string]int
	kept     map[string]bool
	derivedN map[string]string
}

// InventoryFile is one input file: its name as given, size and SHA-256.
type InventoryFile struct {
	Role   string `json:"role"`
	File   string `json:"file"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// RecordCounts counts the packed records.
type RecordCounts struct {
	Total   int            `json:"total"`
	ByClass map[string]int `json:"by_class"`
}

// FieldReport lists native members dropped, kept under metadata._native, and derived fields.
type FieldReport struct {
	Dropped          map[string]int `json:"dropped"`
	KeptInMetadata   []string       `json:"kept_in_metadata_native"`
	Derived          []DerivedField `json:"derived"`
	ScopeFieldsFound map[string]int `json:"scope_fields_on_records"`
}

// DerivedField is a field the converter derived, how, and on how many records.
type DerivedField struct {
	Field   string `json:"field"`
	Records int    `json:"records"`
	How     string `json:"how"`
}

// AbsentField is a field the native format does not carry, left absent in the submission.
type AbsentField struct {
	Field string `json:"field"`
	Note  string `json:"note"`
}

// OutputPart is one written submission (the whole pack, or one part of a split).
type OutputPart struct {
	File    string `json:"file,omitempty"`
	Records int    `json:"records"`
	Bytes   int    `json:"bytes"`
	SHA256  string `json:"sha256"`
}

func newInventory(opt Options) *Inventory {
	cut := ""
	if !opt.Cutoff.IsZero() {
		cut = opt.Cutoff.UTC().Format(time.RFC3339)
	}
	return &Inventory{
		ExpiryCutoff: cut,
		Kind:         "pack_inventory",
		Note:         "This inventory stays with the caller: the service never asks for it and never stores it.",
		Source:       string(opt.Source),
		Unresolv:     map[string]int{},
		Counts:       map[string]int{},
		Notes:        []string{},
		Absent:       []AbsentField{},
		Omissions:    []Omission{},
		dropped:      map[string]int{},
		prov:         map[string]provenance{},
		derived:      map[string]int{},
		kept:         map[string]bool{},
		derivedN:     map[string]string{},
	}
}

// SHA256Hex is the lowercase hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (inv *Inventory) addFiles(role string, fs []File) {
	for _, f := range fs {
		b := f.Data
		if f.Raw != nil {
			b = f.Raw
		}
		inv.Inputs = append(inv.Inputs, InventoryFile{Role: role, File: f.Name, Bytes: len(b), SHA256: SHA256Hex(b)})
	}
}

func (inv *Inventory) drop(field string) { inv.dropped[field]++ }

// provenance is where one record came from: the input file and the item's location in it.
type provenance struct{ file, loc string }

// Provenance is where the record with id came from: its input file (or the file's label, once
// relabelled) and its location in that file (see SourceBytes).
func (inv *Inventory) Provenance(id string) (file, loc string, ok bool) {
	p, ok := inv.prov[id]
	return p.file, p.loc, ok
}

// from records the source of record id (the first call for an id wins: later copies of the
// same record are dropped as duplicates).
func (inv *Inventory) from(id, file, loc string) {
	if _, seen := inv.prov[id]; !seen {
		inv.prov[id] = provenance{file, loc}
	}
}
func (inv *Inventory) hashOnlyDrop(field string) {
	if inv.HashOnlyDropped == nil {
		inv.HashOnlyDropped = map[string]int{}
	}
	inv.HashOnlyDropped[field]++
}
func (inv *Inventory) keep(field string)             { inv.kept[field] = true }
func (inv *Inventory) count(what string, n int)      { inv.Counts[what] += n }
func (inv *Inventory) unresolved(what string, n int) { inv.Unresolv[what] += n }
func (inv *Inventory) note(s string)                 { inv.Notes = append(inv.Notes, s) }
func (inv *Inventory) absent(field, note string) {
	inv.Absent = append(inv.Absent, AbsentField{Field: field, Note: note})
}
func (inv *Inventory) derive(field, how string) {
	inv.derived[field]++
	inv.derivedN[field] = how
}

// scopeFields are the record fields reported in scope_fields_on_records.
var scopeFields = []string{"user_id", "agent_id", "app_id", "run_id", "session_id", "group_id", "graph_id", "attached_to"}

func (inv *Inventory) setRecords(s *Submission) {
	inv.Family, inv.Form, inv.Variant = s.Family, s.Form, s.Variant
	for _, k := range sortedKeys(inv.dropped) {
		inv.omit("dropped member: "+k, OmissionDeclared, inv.dropped[k], false,
			"a search or embedding artefact (or a second spelling of a member), not part of the stored record")
	}
	for _, k := range sortedKeys(inv.HashOnlyDropped) {
		inv.omit("hash-only: record field "+k+" not submitted", OmissionDeclared, inv.HashOnlyDropped[k], false,
			"the audit does not read this field; hash-only form carries only the fields it reads")
	}
	if n := inv.Counts["hash_only_metadata_reduced_to_markers"]; n > 0 {
		inv.omit("hash-only: metadata other than the shared/sharing markers", OmissionDeclared, n, false,
			"free text stays on this machine; only the M1 markers are read by the audit")
	}
	inv.Records = RecordCounts{Total: len(s.Records), ByClass: map[string]int{}}
	found := map[string]int{}
	for _, r := range s.Records {
		c, _ := r["record_class"].(string)
		if c == "" {
			c = "(none)"
		}
		inv.Records.ByClass[c]++
		for _, k := range scopeFields {
			if v, ok := r[k]; ok {
				if k == "attached_to" {
					if l, ok := v.([]string); ok && len(l) == 0 {
						continue
					}
				}
				if isSet(v) || k == "attached_to" {
					found[k]++
				}
			}
		}
	}
	inv.Fields.Dropped = inv.dropped
	inv.Fields.ScopeFieldsFound = found
	inv.Fields.KeptInMetadata = sortedKeys(inv.kept)
	inv.Fields.Derived = []DerivedField{}
	for _, k := range sortedKeys(inv.derived) {
		inv.Fields.Derived = append(inv.Fields.Derived, DerivedField{Field: k, Records: inv.derived[k], How: inv.derivedN[k]})
	}
	sort.SliceStable(inv.Omissions, func(i, j int) bool { return inv.Omissions[i].Part < inv.Omissions[j].Part })
	sort.SliceStable(inv.Absent, func(i, j int) bool { return inv.Absent[i].Field < inv.Absent[j].Field })
}

// SetOutputs records the written submission bytes (one entry per part) and the split notes.
func (inv *Inventory) SetOutputs(parts []OutputPart, splitNotes []string) {
	inv.Output = parts
	inv.Splits = splitNotes
}

// Part returns the OutputPart describing body written to file (file may be "" for stdout).
func Part(file string, records int, body []byte) OutputPart {
	return OutputPart{File: file, Records: records, Bytes: len(body), SHA256: SHA256Hex(body)}
}

// Marshal returns the inventory as indented JSON with a trailing newline.
func (inv *Inventory) Marshal() ([]byte, error) {
	b, err := MarshalCompact(inv)
	if err != nil {
		return nil, err
	}
	var out []byte
	out, err = indent(b)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Omission is one part of the input that was not converted into submission records: a declared
// omission (the part is not memory the audit grades, or the format leaves it out) or a
// compatibility loss (something the audit would read was lost or could not be read). Blocking
// means the loss can change what the audit says about the export.
type Omission struct {
	Part     string `json:"part"`
	Kind     string `json:"kind"`
	Count    int    `json:"count"`
	Blocking bool   `json:"blocking"`
	Why      string `json:"why"`
}

// Omission kinds.
const (
	OmissionDeclared      = "declared_omission"
	OmissionCompatibility = "compatibility_loss"
)

// omit adds n to the omission of part (created on first use with kind, blocking and why).
func (inv *Inventory) omit(part, kind string, n int, blocking bool, why string) {
	if n <= 0 {
		return
	}
	for i := range inv.Omissions {
		if inv.Omissions[i].Part == part {
			inv.Omissions[i].Count += n
			return
		}
	}
	inv.Omissions = append(inv.Omissions, Omission{Part: part, Kind: kind, Count: n, Blocking: blocking, Why: why})
}

// OmissionTotals sums the inventory's omission counts split into blocking and non-blocking.
func (inv *Inventory) OmissionTotals() (blocking, nonBlocking int) {
	return OmissionTotals(inv.Omissions)
}

// OmissionTotals sums omission counts split into blocking and non-blocking.
func OmissionTotals(omissions []Omission) (blocking, nonBlocking int) {
	for _, o := range omissions {
		if o.Blocking {
			blocking += o.Count
		} else {
			nonBlocking += o.Count
		}
	}
	return blocking, nonBlocking
}

// Relabel replaces every input file name the inventory carries (inputs, provenance, notes) by
// the label labels gives it, so that a package can travel without the caller's file names.
func (inv *Inventory) Relabel(labels map[string]string) {
	for i := range inv.Inputs {
		if l, ok := labels[inv.Inputs[i].File]; ok {
			inv.Inputs[i].File = l
		}
	}
	for id, p := range inv.prov {
		if l, ok := labels[p.file]; ok {
			p.file = l
			inv.prov[id] = p
		}
	}
	names := sortedKeys(labels)
	// the longest name first, so that a name that contains another is replaced whole
	sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for i, n := range inv.Notes {
		for _, name := range names {
			if name != "" {
				n = strings.ReplaceAll(n, name, labels[name])
			}
		}
		inv.Notes[i] = n
	}
}
