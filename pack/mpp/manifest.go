// Package mpp builds, signs and verifies Memory Portability Packages (WM-MEM-012): the sealed
// folder of a pack's submission parts, its inventory, its record index and the manifest that
// digests them all, with a detached signature over the manifest. It is pure (files come in and go
// out as bytes) and imports nothing from the service; pack/portability keeps the package's record
// once it is sealed.
package mpp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"

	"github.com/scopehygiene/scope-hygiene/pack"
)

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

// Name policies of a manifest: input file names kept as given, or positional labels.
const (
	NamesKept     = "kept"
	NamesLabelled = "labels"
)

// Member roles: what each sealed file of a package is (Member.Role).
const (
	RoleSubmissionPart = "submission_part"
	RoleInventory      = "inventory"
	RoleRecordIndex    = "record_index"
)

// Manifest of a Memory Portability Package. Canonicalised per RFC 8785 it is the manifest file;
// its SHA-256 is the package digest that the detached signature covers.
type Manifest struct {
	Kind                string               `json:"kind"`
	Profile             string               `json:"profile"`
	PackageID           string               `json:"package_id"`
	Revision            int                  `json:"revision"`
	PackageKind         string               `json:"package_kind"`
	CaptureTime         string               `json:"capture_time"`
	Cutoff              string               `json:"cutoff"`
	SourceSystem        string               `json:"source_system"`
	SourceFormatVersion string               `json:"source_format_version"`
	PackVersion         string               `json:"pack_version"`
	PriorRevisionRef    string               `json:"prior_revision_ref,omitempty"`
	NamePolicy          string               `json:"name_policy"`
	EmptySelection      string               `json:"empty_selection_reason,omitempty"`
	TargetCriteriaID    string               `json:"target_criteria_id"`
	Family              string               `json:"family"`
	Form                string               `json:"form"`
	Variant             string               `json:"variant"`
	DigestAlgorithm     string               `json:"digest_algorithm"`
	Inputs              []pack.InventoryFile `json:"inputs"`
	Members             []Member             `json:"members"`
	// Records is the record index (the member records.json), loaded by Verify and
	// LoadRecordIndex; it is not a member of the manifest itself.
	Records   []Record        `json:"-"`
	Totals    Totals          `json:"totals"`
	Omissions []pack.Omission `json:"omissions"`
}

// Member is one file inside the package.
type Member struct {
	Path    string `json:"path"`
	Role    string `json:"role"` // submission_part, inventory, record_index
	Bytes   int    `json:"bytes"`
	SHA256  string `json:"sha256"`
	Records int    `json:"records,omitempty"`
}

// Record is one submission record: where it is in the package, where it came from, its class,
// the digest of the exact source bytes it was made from, and the digest of the record as
// submitted (SHA-256 of its RFC 8785 canonical form).
type Record struct {
	ID           string `json:"id"`
	Part         string `json:"part"`
	Index        int    `json:"index"`
	Class        string `json:"class"`
	SourceFile   string `json:"source_file"`
	Location     string `json:"location"`
	SourceSHA256 string `json:"source_sha256"`
	RecordSHA256 string `json:"record_sha256"`
}

// Totals are the byte and count totals of a package.
type Totals struct {
	InputFiles           int `json:"input_files"`
	InputBytes           int `json:"input_bytes"`
	OutputBytes          int `json:"output_bytes"`
	Records              int `json:"records"`
	Parts                int `json:"parts"`
	OmissionsBlocking    int `json:"omissions_blocking"`
	OmissionsNonBlocking int `json:"omissions_non_blocking"`
}

// PartName is the path of submission part k (1-based) of n inside a package.
func PartName(k, n int) string {
	if n == 1 {
		return "submission.json"
	}
	return fmt.Sprintf("submission.part%d.json", k)
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
	return pack.SHA256Hex(c)
}

// CanonicalManifest is the manifest's RFC 8785 canonical bytes.
func CanonicalManifest(m *Manifest) ([]byte, error) {
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
