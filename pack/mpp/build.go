package mpp

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/scopehygiene/scope-hygiene/pack"
)

// Options are the package-level declarations of the operator.
type Options struct {
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

// Built is a package ready to be written: every file by its path, the manifest and its digest.
type Built struct {
	Files    map[string][]byte
	Manifest *Manifest
	// Digest is "sha256:" + the hex SHA-256 of the canonical manifest bytes.
	Digest string
}

// sourceFormats describe, for a manifest, the native format versions each source reads.
var sourceFormats = map[pack.Source]string{
	pack.Mem0Platform: "Mem0 Platform memory objects (get_all pages, v1/v2 list shape), history events",
	pack.Mem0OSS:      "Mem0 OSS get_all results and history.db rows",
	pack.Graphiti:     "Graphiti EntityEdge (Python and TypeScript field names), MCP facts",
	pack.ZepCloud:     "Zep Cloud v3 entity edges",
	pack.LettaAF:      "Letta agent file v2 (multi-entity .af)",
	pack.LettaAPI:     "Letta API v1 agents, blocks, passages, archives",
	pack.ClaimsJSONL:  "generic claim lines (memory-scope-hygiene/v1 claim-jsonl)",
}

// searchOmission is the omission part of a pack that read search results (a selection).
const searchOmission = "mem0: memories not returned by the search"

// Build assembles a package from a pack result, its inputs and the submission parts (one part,
// or the parts of a split). It is pure: the caller writes Files.
func Build(res *pack.Result, in pack.Inputs, parts []*pack.Submission, po Options) (*Built, error) {
	parts, err := checkOptions(parts, po)
	if err != nil {
		return nil, err
	}
	inv := res.Inventory
	inputs, namePolicy, err := nameInputs(inv, in, po.KeepNames)
	if err != nil {
		return nil, err
	}
	m := newManifest(res, po, namePolicy)
	if err := setPackageKind(m, res, po.Kind, len(parts)); err != nil {
		return nil, err
	}
	b := &Built{Files: map[string][]byte{}, Manifest: m}
	outParts, err := b.addParts(parts, inv, inputs)
	if err != nil {
		return nil, err
	}
	inv.SetOutputs(outParts, inv.Splits)
	if err := b.addMember(InventoryName, RoleInventory, 0, inv.Marshal); err != nil {
		return nil, err
	}
	for _, f := range m.Inputs {
		m.Totals.InputFiles++
		m.Totals.InputBytes += f.Bytes
	}
	index := func() ([]byte, error) { return marshalRecordIndex(m.Records) }
	if err := b.addMember(RecordIndexName, RoleRecordIndex, len(m.Records), index); err != nil {
		return nil, err
	}
	m.Totals.Records = len(m.Records)
	m.Totals.Parts = len(parts)
	m.Totals.OmissionsBlocking, m.Totals.OmissionsNonBlocking = inv.OmissionTotals()
	mb, err := CanonicalManifest(m)
	if err != nil {
		return nil, err
	}
	b.Files[ManifestName] = mb
	b.Digest = "sha256:" + pack.SHA256Hex(mb)
	return b, nil
}

// checkOptions checks the operator's declarations against the parts; the parts it returns are
// none for a stated empty selection.
func checkOptions(parts []*pack.Submission, po Options) ([]*pack.Submission, error) {
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
	return parts, nil
}

// nameInputs returns the input files by the name the package gives them (as given, or by
// positional label, relabelling the inventory) and the name policy that says which.
func nameInputs(inv *pack.Inventory, in pack.Inputs, keepNames bool) (map[string][]byte, string, error) {
	inputs := map[string][]byte{}
	labels := map[string]string{}
	for k, fs := range in.Lists() {
		for i, f := range fs {
			if keepNames && !utf8.ValidString(f.Name) {
				return nil, "", errors.New("pack: package: an input file name is not valid UTF-8 (--keep-names records names as given): rename the file")
			}
			if prev, dup := inputs[f.Name]; dup && !bytes.Equal(prev, f.Data) {
				return nil, "", errors.New("pack: package: two different input files share one name")
			}
			inputs[f.Name] = f.Data
			if _, ok := labels[f.Name]; !ok {
				labels[f.Name] = pack.InputRoles[k] + "-" + strconv.Itoa(i+1)
			}
		}
	}
	if keepNames {
		return inputs, NamesKept, nil
	}
	inv.Relabel(labels)
	byLabel := map[string][]byte{}
	for name, b := range inputs {
		byLabel[labels[name]] = b
	}
	return byLabel, NamesLabelled, nil
}

// newManifest is the manifest of a package before its members are added.
func newManifest(res *pack.Result, po Options, namePolicy string) *Manifest {
	inv := res.Inventory
	cut := po.Cutoff
	if cut.IsZero() {
		cut = po.CaptureTime
	}
	return &Manifest{
		Kind: PackageKindID, Profile: PackageProfile, Revision: max(po.Revision, 1),
		CaptureTime: po.CaptureTime.UTC().Format(time.RFC3339), Cutoff: cut.UTC().Format(time.RFC3339),
		SourceSystem: inv.Source, SourceFormatVersion: sourceFormats[pack.Source(inv.Source)], PackVersion: pack.Version,
		TargetCriteriaID: po.TargetCriteriaID, Family: res.Submission.Family, Form: res.Submission.Form,
		Variant: res.Submission.Variant, DigestAlgorithm: "sha-256", Inputs: inv.Inputs,
		Omissions: inv.Omissions, Records: []Record{}, PackageID: po.ID,
		PriorRevisionRef: po.PriorRevisionRef, NamePolicy: namePolicy, EmptySelection: po.EmptySelectionReason,
	}
}

// setPackageKind sets the package kind the operator declared or, undeclared, the one the pack
// implies: a selection when it holds no parts, is declared scope-filtered or read search results.
func setPackageKind(m *Manifest, res *pack.Result, kind string, nParts int) error {
	switch {
	case kind != "":
		m.PackageKind = kind
	case nParts == 0:
		m.PackageKind = KindSelection
	case res.Submission.Manifest != nil && res.Submission.Manifest.ScopeFiltered || hasOmission(res.Inventory, searchOmission):
		m.PackageKind = KindSelection
	default:
		m.PackageKind = KindSnapshot
	}
	if m.PackageKind != KindSnapshot && m.PackageKind != KindSelection {
		return fmt.Errorf("pack: package kind %q: expected %s or %s", m.PackageKind, KindSnapshot, KindSelection)
	}
	return nil
}

func hasOmission(inv *pack.Inventory, part string) bool {
	for _, o := range inv.Omissions {
		if o.Part == part {
			return true
		}
	}
	return false
}

// addMember adds a sealed file made by marshal to the package and lists it in the manifest.
func (b *Built) addMember(path, role string, records int, marshal func() ([]byte, error)) error {
	body, err := marshal()
	if err != nil {
		return err
	}
	b.Files[path] = body
	b.Manifest.Members = append(b.Manifest.Members, Member{Path: path, Role: role, Bytes: len(body), SHA256: pack.SHA256Hex(body), Records: records})
	return nil
}

// addParts adds the submission parts and indexes their records; it returns the parts as the
// inventory lists them.
func (b *Built) addParts(parts []*pack.Submission, inv *pack.Inventory, inputs map[string][]byte) ([]pack.OutputPart, error) {
	m := b.Manifest
	caches := map[string]*pack.SourceCache{}
	var outParts []pack.OutputPart
	for k, sub := range parts {
		name := PartName(k+1, len(parts))
		if err := b.addMember(name, RoleSubmissionPart, len(sub.Records), sub.Marshal); err != nil {
			return nil, err
		}
		body := b.Files[name]
		outParts = append(outParts, pack.Part(name, len(sub.Records), body))
		recs, err := partRecords(body)
		if err != nil {
			return nil, err
		}
		for i, raw := range recs {
			r := sub.Records[i]
			id, _ := r["id"].(string)
			class, _ := r["record_class"].(string)
			mr := Record{ID: id, Part: name, Index: i, Class: class, RecordSHA256: canonicalDigest(raw)}
			if file, loc, ok := inv.Provenance(id); ok {
				mr.SourceFile, mr.Location = file, loc
				if caches[file] == nil {
					caches[file] = pack.NewSourceCache(inputs[file])
				}
				if src, ok := caches[file].At(loc); ok {
					mr.SourceSHA256 = pack.SHA256Hex(src)
				}
			}
			if mr.SourceSHA256 == "" {
				return nil, fmt.Errorf("pack: package: record at index %d of %s: its source bytes were not found", i, name)
			}
			m.Records = append(m.Records, mr)
		}
		m.Totals.OutputBytes += len(body)
	}
	return outParts, nil
}
