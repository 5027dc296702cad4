package pack

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Version is the version of pack written into every package manifest.
const Version = "2.0.0"

// Package layout: the file names inside a Memory Portability Package directory.
const (
	ManifestName  = "manifest.json"     // the manifest, RFC 8785 canonical bytes
	SignatureName = "manifest.sig.json" // the detached signature (or the explicit unsigned marker)
	InventoryName = "inventory.json"    // the inventory (human-facing; digested in the manifest)
	// RecordIndexName is the record index: one row per submission record (its lineage and
	// digests), a sealed member of its own so that the manifest stays small.
	RecordIndexName = "records.json"
	PackageKindID   = "memory_portability_package"
	// EventLogName is the append-only event log of the package's operations (pack/portability);
	// it is not sealed: the manifest does not list it and verification reads it separately.
	EventLogName = "events.jsonl"
	// PackageProfile names this layout and its rules (docs/pack.md).
	PackageProfile = "scope-hygiene-pack/2"
)

// Package kinds (WM-MEM-012): a snapshot stands for the whole dump as captured; a selection
// for a declared subset of it (a scope-filtered export, search results).
const (
	KindSnapshot  = "snapshot"
	KindSelection = "selection"
)

// PackageOptions are the package-level declarations of the operator.
type PackageOptions struct {
	// ID is the package identity, required: a generated identifier (NewPackageID in
	// pack/portability) or one the operator gives. It is never derived from file names or
	// content digests, so two different packages never share one by construction.
	ID string
	// Revision numbers the package's revisions (1 for the first).
	Revision int
	// PriorRevisionRef is the revision reference ("sha256:" and the hex SHA-256 of the prior
	// revision's manifest) this revision supersedes; empty for revision 1.
	PriorRevisionRef string
	// KeepNames keeps the input file names as given in the manifest and inventory; otherwise
	// each input is named by a positional label (records-1, history-1, ...).
	KeepNames bool
	// EmptySelectionReason, when set, allows a package with no records: an empty authorized
	// selection, stated with its reason.
	EmptySelectionReason string
	// Kind is snapshot or selection; empty chooses selection when the pack is declared
	// scope-filtered or read search results, snapshot otherwise.
	Kind string
	// CaptureTime is when the package was made; Cutoff the time the dump stands for.
	CaptureTime, Cutoff time.Time
	// TargetCriteriaID is the criteria the submission is made for (from the criteria file).
	TargetCriteriaID string
}

// Manifest of a Memory Portability Package. Canonicalised per RFC 8785 it is the manifest file;
// its SHA-256 is the package digest that the detached signature covers.
type PackageManifest struct {
	Kind                string          `json:"kind"`
	Profile             string          `json:"profile"`
	PackageID           string          `json:"package_id"`
	Revision            int             `json:"revision"`
	PackageKind         string          `json:"package_kind"`
	CaptureTime         string          `json:"capture_time"`
	Cutoff              string          `json:"cutoff"`
	SourceSystem        string          `json:"source_system"`
	SourceFormatVersion string          `json:"source_format_version"`
	PackVersion         string          `json:"pack_version"`
	PriorRevisionRef    string          `json:"prior_revision_ref,omitempty"`
	NamePolicy          string          `json:"name_policy"`
	EmptySelection      string          `json:"empty_selection_reason,omitempty"`
	TargetCriteriaID    string          `json:"target_criteria_id"`
	Family              string          `json:"family"`
	Form                string          `json:"form"`
	Variant             string          `json:"variant"`
	DigestAlgorithm     string          `json:"digest_algorithm"`
	Inputs              []InventoryFile `json:"inputs"`
	Members             []PackageMember `json:"members"`
	// Records is the record index (the member records.json), loaded by VerifyPackage and
	// LoadRecordIndex; it is not a member of the manifest itself.
	Records   []MemberRecord `json:"-"`
	Totals    PackageTotals  `json:"totals"`
	Omissions []Omission     `json:"omissions"`
}

// PackageMember is one file inside the package.
type PackageMember struct {
	Path    string `json:"path"`
	Role    string `json:"role"` // submission_part, inventory
	Bytes   int    `json:"bytes"`
	SHA256  string `json:"sha256"`
	Records int    `json:"records,omitempty"`
}

// MemberRecord is one submission record: where it is in the package, where it came from, its
// class, the digest of the exact source bytes it was made from, and the digest of the record as
// submitted (SHA-256 of its RFC 8785 canonical form).
type MemberRecord struct {
	ID           string `json:"id"`
	Part         string `json:"part"`
	Index        int    `json:"index"`
	Class        string `json:"class"`
	SourceFile   string `json:"source_file"`
	Location     string `json:"location"`
	SourceSHA256 string `json:"source_sha256"`
	RecordSHA256 string `json:"record_sha256"`
}

// PackageTotals are the byte and count totals of a package.
type PackageTotals struct {
	InputFiles           int `json:"input_files"`
	InputBytes           int `json:"input_bytes"`
	OutputBytes          int `json:"output_bytes"`
	Records              int `json:"records"`
	Parts                int `json:"parts"`
	OmissionsBlocking    int `json:"omissions_blocking"`
	OmissionsNonBlocking int `json:"omissions_non_blocking"`
}

// Built is a package ready to be written: every file by its path, the manifest and its digest.
type Built struct {
	Files    map[string][]byte
	Manifest *PackageManifest
	// Digest is "sha256:" + the hex SHA-256 of the canonical manifest bytes.
	Digest string
}

var sourceFormats = map[Source]string{
	Mem0Platform: "Mem0 Platform memory objects (get_all pages, v1/v2 list shape), history events",
	Mem0OSS:      "Mem0 OSS get_all results and history.db rows",
	Graphiti:     "Graphiti EntityEdge (Python and TypeScript field names), MCP facts",
	ZepCloud:     "Zep Cloud v3 entity edges",
	LettaAF:      "Letta agent file v2 (multi-entity .af)",
	LettaAPI:     "Letta API v1 agents, blocks, passages, archives",
	ClaimsJSONL:  "generic claim lines (memory-scope-hygiene/v1 claim-jsonl)",
}

// PartName is the path of submission part k (1-based) of n inside a package.
func PartName(k, n int) string {
	if n == 1 {
		return "submission.json"
	}
	return fmt.Sprintf("submission.part%d.json", k)
}

// BuildPackage assembles a package from a pack result, its inputs and the submission parts (one
// part, or the parts of a split). It is pure: the caller writes Files.
func BuildPackage(res *Result, in Inputs, parts []*Submission, po PackageOptions) (*Built, error) {
	if len(parts) == 0 {
		return nil, errors.New("pack: package: no submission parts")
	}
	if po.ID == "" {
		return nil, errors.New("pack: package: the package id is required")
	}
	if po.Revision < 1 || (po.Revision == 1) != (po.PriorRevisionRef == "") {
		return nil, errors.New("pack: package: revision 1 has no prior revision; every later revision names one")
	}
	empty := 0
	for _, p := range parts {
		if len(p.Records) == 0 {
			empty++
		}
	}
	if empty > 0 {
		if po.EmptySelectionReason == "" || len(parts) != 1 {
			return nil, errors.New("pack: package: a part holds no records (an empty selection needs its reason stated)")
		}
		parts = nil
	}
	if po.TargetCriteriaID == "" {
		return nil, errors.New("pack: package: the target criteria id is required")
	}
	if po.CaptureTime.IsZero() {
		return nil, errors.New("pack: package: the capture time is required")
	}
	inv := res.Inventory
	files := map[string][]byte{}
	inputs := map[string][]byte{}
	labels := map[string]string{}
	for k, fs := range [][]File{in.Records, in.History, in.Episodes, in.Nodes, in.Passages, in.Archives} {
		for i, f := range fs {
			if po.KeepNames && !utf8.ValidString(f.Name) {
				return nil, errors.New("pack: package: an input file name is not valid UTF-8 (--keep-names records names as given): rename the file")
			}
			if prev, dup := inputs[f.Name]; dup && !bytes.Equal(prev, f.Data) {
				return nil, errors.New("pack: package: two different input files share one name")
			}
			inputs[f.Name] = f.Data
			if _, ok := labels[f.Name]; !ok {
				labels[f.Name] = inputRoles[k] + "-" + strconv.Itoa(i+1)
			}
		}
	}
	namePolicy := NamesKept
	if !po.KeepNames {
		namePolicy = NamesLabelled
		inv.Relabel(labels)
		byLabel := map[string][]byte{}
		for name, b := range inputs {
			byLabel[labels[name]] = b
		}
		inputs = byLabel
	}
	m := &PackageManifest{
		Kind: PackageKindID, Profile: PackageProfile, Revision: max(po.Revision, 1),
		CaptureTime: po.CaptureTime.UTC().Format(time.RFC3339), SourceSystem: string(inv.Source),
		SourceFormatVersion: sourceFormats[Source(inv.Source)], PackVersion: Version,
		TargetCriteriaID: po.TargetCriteriaID, Family: res.Submission.Family, Form: res.Submission.Form,
		Variant: res.Submission.Variant, DigestAlgorithm: "sha-256", Inputs: inv.Inputs,
		Omissions: inv.Omissions, Records: []MemberRecord{}, PackageID: po.ID,
		PriorRevisionRef: po.PriorRevisionRef, NamePolicy: namePolicy, EmptySelection: po.EmptySelectionReason,
	}
	if len(parts) == 0 {
		m.PackageKind = KindSelection
	}
	cut := po.Cutoff
	if cut.IsZero() {
		cut = po.CaptureTime
	}
	m.Cutoff = cut.UTC().Format(time.RFC3339)
	if po.Kind != "" {
		m.PackageKind = po.Kind
	}
	if m.PackageKind == "" {
		m.PackageKind = KindSnapshot
		if res.Submission.Manifest != nil && res.Submission.Manifest.ScopeFiltered || hasPart(inv, "mem0: memories not returned by the search") {
			m.PackageKind = KindSelection
		}
	}
	if m.PackageKind != KindSnapshot && m.PackageKind != KindSelection {
		return nil, fmt.Errorf("pack: package kind %q: expected %s or %s", m.PackageKind, KindSnapshot, KindSelection)
	}
	caches := map[string]*sourceCache{}
	var outParts []OutputPart
	for k, sub := range parts {
		body, err := sub.Marshal()
		if err != nil {
			return nil, err
		}
		name := PartName(k+1, len(parts))
		files[name] = body
		outParts = append(outParts, Part(name, len(sub.Records), body))
		m.Members = append(m.Members, PackageMember{Path: name, Role: "submission_part", Bytes: len(body), SHA256: SHA256Hex(body), Records: len(sub.Records)})
		recs, err := partRecords(body)
		if err != nil {
			return nil, err
		}
		for i, raw := range recs {
			r := sub.Records[i]
			id, _ := r["id"].(string)
			class, _ := r["record_class"].(string)
			mr := MemberRecord{ID: id, Part: name, Index: i, Class: class, RecordSHA256: canonicalDigest(raw)}
			if p, ok := inv.prov[id]; ok {
				mr.SourceFile, mr.Location = p.file, p.loc
				if caches[p.file] == nil {
					caches[p.file] = newSourceCache(inputs[p.file])
				}
				if src, ok := caches[p.file].at(p.loc); ok {
					mr.SourceSHA256 = SHA256Hex(src)
				}
			}
			if mr.SourceSHA256 == "" {
				return nil, fmt.Errorf("pack: package: record at index %d of %s: its source bytes were not found", i, name)
			}
			m.Records = append(m.Records, mr)
		}
		m.Totals.OutputBytes += len(body)
	}
	inv.SetOutputs(outParts, inv.Splits)
	ib, err := inv.Marshal()
	if err != nil {
		return nil, err
	}
	files[InventoryName] = ib
	m.Members = append(m.Members, PackageMember{Path: InventoryName, Role: "inventory", Bytes: len(ib), SHA256: SHA256Hex(ib)})
	for _, f := range m.Inputs {
		m.Totals.InputFiles++
		m.Totals.InputBytes += f.Bytes
	}
	idx, err := marshalRecordIndex(m.Records)
	if err != nil {
		return nil, err
	}
	files[RecordIndexName] = idx
	m.Members = append(m.Members, PackageMember{Path: RecordIndexName, Role: "record_index", Bytes: len(idx), SHA256: SHA256Hex(idx), Records: len(m.Records)})
	m.Totals.Records = len(m.Records)
	m.Totals.Parts = len(parts)
	m.Totals.OmissionsBlocking, m.Totals.OmissionsNonBlocking = inv.OmissionTotals()
	mb, err := CanonicalManifest(m)
	if err != nil {
		return nil, err
	}
	files[ManifestName] = mb
	return &Built{Files: files, Manifest: m, Digest: "sha256:" + SHA256Hex(mb)}, nil
}

// Name policies of a manifest: input file names kept as given, or positional labels.
const (
	NamesKept     = "kept"
	NamesLabelled = "labels"
)

// inputRoles name the input roles in the order of Inputs' lists (the labels' prefixes).
var inputRoles = []string{"records", "history", "episodes", "nodes", "passages", "archives"}

func hasPart(inv *Inventory, part string) bool {
	for _, o := range inv.Omissions {
		if o.Part == part {
			return true
		}
	}
	return false
}

// partRecords returns the exact bytes of each record of a submission body.
func partRecords(body []byte) ([]json.RawMessage, error) {
	var top struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, errors.New("pack: package: a submission part is not a submission object")
	}
	return top.Records, nil
}

// canonicalDigest is the hex SHA-256 of the RFC 8785 form of a JSON value ("" if it has none).
func canonicalDigest(raw []byte) string {
	c, err := jcs.Transform(raw)
	if err != nil {
		return ""
	}
	return SHA256Hex(c)
}

// CanonicalManifest is the manifest's RFC 8785 canonical bytes.
func CanonicalManifest(m *PackageManifest) ([]byte, error) {
	return CanonicalJSON(m, "pack: manifest")
}

// CanonicalJSON is the RFC 8785 canonical form of v's JSON encoding. Its errors begin with
// what (a static name of the value, such as "pack: manifest"), so they carry no content.
func CanonicalJSON(v any, what string) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	c, err := jcs.Transform(raw)
	if err != nil {
		return nil, errors.New(what + ": canonicalisation failed")
	}
	return c, nil
}

// Signature is the detached signature file: the manifest's digest and either an Ed25519
// signature over the exact manifest bytes or the explicit statement that the package is unsigned.
type Signature struct {
	Manifest       string `json:"manifest"`
	ManifestSHA256 string `json:"manifest_sha256"`
	Unsigned       bool   `json:"unsigned,omitempty"`
	Alg            string `json:"alg,omitempty"`
	KeyID          string `json:"key_id,omitempty"`
	Value          string `json:"value,omitempty"`
}

// KeyID names an Ed25519 public key: "ed25519:" and the first 8 bytes of its SHA-256 in hex
// (the form the service uses for its report key).
func KeyID(pub ed25519.PublicKey) string {
	s := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(s[:8])
}

// SignManifest returns the signature file for manifest bytes: signed with priv, or, with a nil
// key, explicitly unsigned.
func SignManifest(manifest []byte, priv ed25519.PrivateKey) ([]byte, error) {
	s := Signature{Manifest: ManifestName, ManifestSHA256: SHA256Hex(manifest)}
	if priv == nil {
		s.Unsigned = true
	} else {
		s.Alg = "Ed25519"
		s.KeyID = KeyID(priv.Public().(ed25519.PublicKey))
		s.Value = base64.StdEncoding.EncodeToString(ed25519.Sign(priv, manifest))
	}
	b, err := marshalCompact(s)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SignatureState is what a package's signature file proves, kept distinct so that nothing but a
// verified Ed25519 signature by the expected key is ever taken as signature evidence.
type SignatureState string

// Signature states.
const (
	SigVerified   SignatureState = "verified"    // Ed25519 over the manifest, by the key given
	SigInvalid    SignatureState = "invalid"     // malformed, or does not verify over the manifest
	SigUnknownKey SignatureState = "unknown_key" // signed by a key other than the one given
	SigUnsigned   SignatureState = "unsigned"    // the explicit unsigned marker
	SigMACOnly    SignatureState = "mac_only"    // a shared-secret MAC: no asymmetric evidence
	SigUnchecked  SignatureState = "unchecked"   // signed, but no key was given to check it
	SigMissing    SignatureState = "missing"     // no signature file
)

// Verification is the outcome of VerifyPackage.
type Verification struct {
	Manifest   *PackageManifest
	Digest     string // sha256:<hex> of the manifest bytes
	Signed     bool
	SignedBy   string // key id, when signed and checked
	Signature  SignatureState
	Mismatches []string
}

// VerifyPackage re-computes every digest of a package (files by path, as read from its
// directory) and checks the signature with pub (nil: a signed package is reported unchecked as a
// mismatch). With sources (input files by name), it also re-computes the input digests and the
// source digest of every record. Mismatches name files, records and counts, never content.
func VerifyPackage(files map[string][]byte, pub ed25519.PublicKey, sources map[string][]byte) *Verification {
	v := &Verification{}
	bad := func(f string, a ...any) { v.Mismatches = append(v.Mismatches, fmt.Sprintf(f, a...)) }
	mb, ok := files[ManifestName]
	if !ok {
		bad("%s: missing", ManifestName)
		return v
	}
	v.Digest = "sha256:" + SHA256Hex(mb)
	var m PackageManifest
	dec := json.NewDecoder(bytes.NewReader(mb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		bad("%s: not a package manifest", ManifestName)
		return v
	}
	v.Manifest = &m
	if c, err := jcs.Transform(mb); err != nil || !bytes.Equal(c, mb) {
		bad("%s: not in RFC 8785 canonical form", ManifestName)
	}
	if m.Kind != PackageKindID || m.Profile != PackageProfile {
		bad("%s: kind or profile is not %s / %s", ManifestName, PackageKindID, PackageProfile)
	}
	checkManifestValues(&m, bad)
	verifySignature(v, files, mb, pub, bad)
	if pub != nil && v.Signature != SigVerified {
		bad("%s: signature state %s; --key %s asks for a verified signature by that key", SignatureName, v.Signature, KeyID(pub))
	}
	listed := map[string]bool{ManifestName: true, SignatureName: true, EventLogName: true}
	partRecs := map[string][]json.RawMessage{}
	indexed := false
	for _, mem := range m.Members {
		listed[mem.Path] = true
		b, ok := files[mem.Path]
		if !ok {
			bad("%s: listed in the manifest, missing from the package", mem.Path)
			continue
		}
		if len(b) != mem.Bytes || SHA256Hex(b) != mem.SHA256 {
			bad("%s: %d bytes, digest %s; the manifest lists %d bytes, digest %s", mem.Path, len(b), short(SHA256Hex(b)), mem.Bytes, short(mem.SHA256))
		}
		if mem.Role == "record_index" {
			recs, err := ParseRecordIndex(b)
			if err != nil {
				bad("%s: not a record index", mem.Path)
				continue
			}
			m.Records = recs
			indexed = true
		}
		if mem.Role == "submission_part" {
			recs, err := partRecords(b)
			if err != nil {
				bad("%s: not a submission", mem.Path)
				continue
			}
			if len(recs) != mem.Records {
				bad("%s: %d records; the manifest lists %d", mem.Path, len(recs), mem.Records)
			}
			partRecs[mem.Path] = recs
		}
	}
	for _, p := range sortedKeys(files) {
		if !listed[p] {
			bad("%s: in the package, not listed in the manifest", p)
		}
	}
	if !indexed {
		bad("the manifest lists no record index (%s)", RecordIndexName)
	}
	if (len(m.Records) == 0) != (m.EmptySelection != "") {
		bad("%s: %d records; an empty selection states its reason and only an empty one does", ManifestName, len(m.Records))
	}
	if m.NamePolicy == NamesLabelled {
		for k, r := range m.Records {
			if !isLabel(r.SourceFile) {
				bad("record %d of the index: its source is not an input label, though the names are labelled", k)
				break
			}
		}
	}
	seen := map[string]bool{}
	caches := map[string]*sourceCache{}
	for k, r := range m.Records {
		if seen[r.ID] {
			bad("record %d of the index: its id repeats an earlier record", k)
		}
		seen[r.ID] = true
		recs, ok := partRecs[r.Part]
		if !ok || r.Index < 0 || r.Index >= len(recs) {
			bad("record %d of the index: %s has no record at index %d", k, r.Part, r.Index)
			continue
		}
		var idOnly struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(recs[r.Index], &idOnly)
		if idOnly.ID != r.ID {
			bad("record %d of the index: %s index %d carries another id", k, r.Part, r.Index)
		}
		if canonicalDigest(recs[r.Index]) != r.RecordSHA256 {
			bad("record %d of the index (%s index %d): record digest differs", k, r.Part, r.Index)
		}
		if sources != nil {
			src, ok := sources[r.SourceFile]
			if !ok {
				continue
			}
			if caches[r.SourceFile] == nil {
				caches[r.SourceFile] = newSourceCache(src)
			}
			if b, ok := caches[r.SourceFile].at(r.Location); !ok || SHA256Hex(b) != r.SourceSHA256 {
				bad("record %d of the index: source bytes at %s %s differ", k, r.SourceFile, r.Location)
			}
		}
	}
	n := 0
	for _, recs := range partRecs {
		n += len(recs)
	}
	if n != len(m.Records) || m.Totals.Records != len(m.Records) {
		bad("the parts hold %d records, the manifest lists %d (totals say %d)", n, len(m.Records), m.Totals.Records)
	}
	b, nb := 0, 0
	for _, o := range m.Omissions {
		if o.Blocking {
			b += o.Count
		} else {
			nb += o.Count
		}
	}
	if b != m.Totals.OmissionsBlocking || nb != m.Totals.OmissionsNonBlocking {
		bad("omission totals %d blocking, %d non-blocking; the omissions add up to %d and %d", m.Totals.OmissionsBlocking, m.Totals.OmissionsNonBlocking, b, nb)
	}
	if sources != nil {
		for _, in := range m.Inputs {
			src, ok := sources[in.File]
			if !ok {
				bad("input %s: not found among the sources given", in.File)
				continue
			}
			if len(src) != in.Bytes || SHA256Hex(src) != in.SHA256 {
				bad("input %s: %d bytes, digest %s; the manifest lists %d bytes, digest %s", in.File, len(src), short(SHA256Hex(src)), in.Bytes, short(in.SHA256))
			}
		}
	}
	return v
}

// checkManifestValues holds a manifest to the values the published schema allows for the members
// a verifier relies on (the full schema is checked by the pack command).
func checkManifestValues(m *PackageManifest, bad func(string, ...any)) {
	if m.DigestAlgorithm != "sha-256" {
		bad("%s: digest algorithm %q is not sha-256", ManifestName, m.DigestAlgorithm)
	}
	if m.Revision < 1 {
		bad("%s: revision %d is below 1", ManifestName, m.Revision)
	}
	if (m.Revision == 1) != (m.PriorRevisionRef == "") {
		bad("%s: revision %d and its prior revision reference disagree", ManifestName, m.Revision)
	}
	if m.PackageKind != KindSnapshot && m.PackageKind != KindSelection {
		bad("%s: package kind %q is neither %s nor %s (delta packages are not supported)", ManifestName, m.PackageKind, KindSnapshot, KindSelection)
	}
	if m.Form != FormFullText && m.Form != FormHashOnly {
		bad("%s: form %q is not published", ManifestName, m.Form)
	}
	if m.NamePolicy != NamesKept && m.NamePolicy != NamesLabelled {
		bad("%s: name policy %q is neither %s nor %s", ManifestName, m.NamePolicy, NamesKept, NamesLabelled)
	}
	if m.PackageID == "" {
		bad("%s: no package id", ManifestName)
	}
}

func verifySignature(v *Verification, files map[string][]byte, mb []byte, pub ed25519.PublicKey, bad func(string, ...any)) {
	sb, ok := files[SignatureName]
	if !ok {
		v.Signature = SigMissing
		bad("%s: missing (a package is signed or explicitly unsigned)", SignatureName)
		return
	}
	var s Signature
	dec := json.NewDecoder(bytes.NewReader(sb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		v.Signature = SigInvalid
		bad("%s: not a signature file", SignatureName)
		return
	}
	if s.Manifest != ManifestName || s.ManifestSHA256 != SHA256Hex(mb) {
		bad("%s: names manifest digest %s; the manifest's digest is %s", SignatureName, short(s.ManifestSHA256), short(SHA256Hex(mb)))
	}
	if s.Unsigned {
		v.Signature = SigUnsigned
		if s.Alg != "" || s.KeyID != "" || s.Value != "" {
			v.Signature = SigInvalid
			bad("%s: says unsigned and carries a signature", SignatureName)
		}
		return
	}
	v.Signed = true
	sig, err := base64.StdEncoding.DecodeString(s.Value)
	up := strings.ToUpper(s.Alg)
	switch {
	case strings.HasPrefix(up, "HS") || strings.Contains(up, "HMAC") || strings.Contains(up, "MAC"):
		v.Signature = SigMACOnly
		bad("%s: %s is a shared-secret MAC, not an asymmetric signature", SignatureName, "alg")
	case s.Alg != "Ed25519" || err != nil || len(sig) != ed25519.SignatureSize:
		v.Signature = SigInvalid
		bad("%s: malformed Ed25519 signature", SignatureName)
	case pub == nil:
		v.Signature = SigUnchecked
		bad("%s: signed by %s; no key was given to check it (--key)", SignatureName, s.KeyID)
	case s.KeyID != KeyID(pub):
		v.Signature = SigUnknownKey
		bad("%s: signed by %s, not by the given key %s", SignatureName, s.KeyID, KeyID(pub))
	case !ed25519.Verify(pub, mb, sig):
		v.Signature = SigInvalid
		bad("%s: the signature does not verify over %s", SignatureName, ManifestName)
	default:
		v.Signature = SigVerified
		v.SignedBy = s.KeyID
	}
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// ReportCheck is the outcome of CheckReport.
type ReportCheck struct {
	Part       string // the package part the report was made from ("" when none matches)
	Records    int
	IDsNamed   int
	Mismatches []string
}

// CheckReport ties a signed audit report (its signature already checked by the caller) to the
// package part it was made from: the report's criteria id is the package's target, its family,
// form and variant are the package's, and some part holds exactly its record count and every
// record id it names. A split package has one report per part; part ("" = find it) names one.
func CheckReport(m *PackageManifest, report []byte, part string) *ReportCheck {
	rc := &ReportCheck{}
	bad := func(f string, a ...any) { rc.Mismatches = append(rc.Mismatches, fmt.Sprintf(f, a...)) }
	var r struct {
		Kind       string          `json:"kind"`
		CriteriaID string          `json:"criteria_id"`
		Family     string          `json:"family"`
		Form       string          `json:"form"`
		Variant    string          `json:"variant"`
		Records    *int            `json:"records"`
		Factors    json.RawMessage `json:"factors"`
	}
	if err := json.Unmarshal(report, &r); err != nil || r.Records == nil {
		bad("the report is not an audit report (no records count)")
		return rc
	}
	rc.Records = *r.Records
	if r.CriteriaID != m.TargetCriteriaID {
		bad("the report's criteria id %q is not the package's target %q", r.CriteriaID, m.TargetCriteriaID)
	}
	if r.Family != m.Family || r.Form != m.Form || r.Variant != m.Variant {
		bad("the report's family/form/variant %s/%s/%s differ from the package's %s/%s/%s", r.Family, r.Form, r.Variant, m.Family, m.Form, m.Variant)
	}
	ids := ReportRecordIDs(r.Factors)
	rc.IDsNamed = len(ids)
	byPart := map[string]map[string]bool{}
	var partOrder []string
	for _, rec := range m.Records {
		if byPart[rec.Part] == nil {
			byPart[rec.Part] = map[string]bool{}
			partOrder = append(partOrder, rec.Part)
		}
		byPart[rec.Part][rec.ID] = true
	}
	fits := func(p string) (missing int) {
		for _, id := range ids {
			if !byPart[p][id] {
				missing++
			}
		}
		return missing
	}
	if part != "" {
		if byPart[part] == nil {
			bad("the package has no part %s", part)
			return rc
		}
		rc.Part = part
		if len(byPart[part]) != rc.Records {
			bad("the report counts %d records; part %s holds %d", rc.Records, part, len(byPart[part]))
		}
		if n := fits(part); n > 0 {
			bad("%d record ids the report names are not in part %s", n, part)
		}
		return rc
	}
	var match []string
	for _, p := range partOrder {
		if len(byPart[p]) == rc.Records && fits(p) == 0 {
			match = append(match, p)
		}
	}
	switch len(match) {
	case 1:
		rc.Part = match[0]
	case 0:
		counts := make([]string, 0, len(partOrder))
		for _, p := range partOrder {
			counts = append(counts, p+": "+strconv.Itoa(len(byPart[p]))+" records, "+strconv.Itoa(fits(p))+" named ids missing")
		}
		bad("no part of the package matches the report (%d records, %d named ids): %s", rc.Records, len(ids), strings.Join(counts, "; "))
	default:
		bad("%d parts match the report equally (%s): name one with --part", len(match), strings.Join(match, ", "))
	}
	return rc
}

// ReportRecordIDs lists every record id an audit report's factors name: cluster members, the
// duplicate clusters' members and the conflicting records of every sub-check.
func ReportRecordIDs(factors json.RawMessage) []string {
	var f struct {
		Cross struct {
			Clusters []struct {
				Members []struct {
					ID string `json:"id"`
				} `json:"members"`
			} `json:"clusters"`
		} `json:"cross_scope_clusters"`
		Dups struct {
			Clusters []struct {
				Members []string `json:"members"`
			} `json:"clusters"`
		} `json:"duplicates"`
		Conflicts struct {
			Records map[string][]string `json:"records"`
		} `json:"scope_conflicts"`
	}
	_ = json.Unmarshal(factors, &f)
	set := map[string]bool{}
	for _, c := range f.Cross.Clusters {
		for _, m := range c.Members {
			set[m.ID] = true
		}
	}
	for _, c := range f.Dups.Clusters {
		for _, id := range c.Members {
			set[id] = true
		}
	}
	for _, ids := range f.Conflicts.Records {
		for _, id := range ids {
			set[id] = true
		}
	}
	out := sortedKeys(set)
	sort.Strings(out)
	return out
}

// isLabel says whether s is a positional input label (records-1, history-2, ...).
func isLabel(s string) bool {
	for _, r := range inputRoles {
		if n, ok := strings.CutPrefix(s, r+"-"); ok {
			k, err := strconv.Atoi(n)
			return err == nil && k >= 1 && strconv.Itoa(k) == n
		}
	}
	return false
}

// recordColumns are the columns of a record index row; a row's index in its part is its position.
var recordColumns = []string{"id", "class", "source_file", "location", "source_sha256", "record_sha256"}

// recordIndex is the record index file: rows grouped by part, in index order.
type recordIndex struct {
	Kind    string            `json:"kind"`
	Columns []string          `json:"columns"`
	Parts   []recordIndexPart `json:"parts"`
}

type recordIndexPart struct {
	Part string      `json:"part"`
	Rows [][6]string `json:"rows"`
}

// marshalRecordIndex writes the record index of recs (in part and index order).
func marshalRecordIndex(recs []MemberRecord) ([]byte, error) {
	ix := recordIndex{Kind: "record_index", Columns: recordColumns, Parts: []recordIndexPart{}}
	for _, r := range recs {
		if n := len(ix.Parts); n == 0 || ix.Parts[n-1].Part != r.Part {
			ix.Parts = append(ix.Parts, recordIndexPart{Part: r.Part})
		}
		p := &ix.Parts[len(ix.Parts)-1]
		if r.Index != len(p.Rows) {
			return nil, errors.New("pack: record index: records out of index order")
		}
		p.Rows = append(p.Rows, [6]string{r.ID, r.Class, r.SourceFile, r.Location, r.SourceSHA256, r.RecordSHA256})
	}
	b, err := marshalCompact(ix)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseRecordIndex reads a record index (records.json): its columns exactly as written, every
// row six strings; a record's index is its row's position in its part.
func ParseRecordIndex(b []byte) ([]MemberRecord, error) {
	var ix recordIndex
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil || ix.Kind != "record_index" || strings.Join(ix.Columns, ",") != strings.Join(recordColumns, ",") {
		return nil, errors.New("pack: not a record index")
	}
	out := []MemberRecord{}
	seen := map[string]bool{}
	for _, p := range ix.Parts {
		if seen[p.Part] {
			return nil, errors.New("pack: record index: a part is listed twice")
		}
		seen[p.Part] = true
		for i, r := range p.Rows {
			out = append(out, MemberRecord{ID: r[0], Part: p.Part, Index: i, Class: r[1], SourceFile: r[2], Location: r[3], SourceSHA256: r[4], RecordSHA256: r[5]})
		}
	}
	return out, nil
}

// LoadRecordIndex loads m's record index from a package's files when the member is present and
// its bytes are the ones the manifest lists (otherwise m.Records stays empty).
func LoadRecordIndex(files map[string][]byte, m *PackageManifest) {
	for _, mem := range m.Members {
		if mem.Role != "record_index" {
			continue
		}
		if b, ok := files[mem.Path]; ok && SHA256Hex(b) == mem.SHA256 {
			if recs, err := ParseRecordIndex(b); err == nil {
				m.Records = recs
			}
		}
	}
}
