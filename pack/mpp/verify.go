package mpp

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/gowebpki/jcs"

	"github.com/scopehygiene/scope-hygiene/pack"
)

// Verification is the outcome of Verify.
type Verification struct {
	Manifest   *Manifest
	Digest     string // sha256:<hex> of the manifest bytes
	Signed     bool
	SignedBy   string // key id, when signed and checked
	Signature  SignatureState
	Mismatches []string
}

func (v *Verification) bad(f string, a ...any) {
	v.Mismatches = append(v.Mismatches, fmt.Sprintf(f, a...))
}

// Verify re-computes every digest of a package (files by path, as read from its directory) and
// checks the signature with pub (nil: a signed package is reported unchecked as a mismatch).
// With sources (input files by name), it also re-computes the input digests and the source
// digest of every record. Mismatches name files, records and counts, never content.
func Verify(files map[string][]byte, pub ed25519.PublicKey, sources map[string][]byte) *Verification {
	v := &Verification{}
	mb, m := v.readManifest(files)
	if m == nil {
		return v
	}
	v.checkManifestValues(m)
	v.verifySignature(files, mb, pub)
	if pub != nil && v.Signature != SigVerified {
		v.bad("%s: signature state %s; --key %s asks for a verified signature by that key", SignatureName, v.Signature, KeyID(pub))
	}
	partRecs := v.checkMembers(files, m)
	v.checkIndex(m, partRecs, sources)
	v.checkTotals(m, partRecs)
	if sources != nil {
		v.checkInputs(m, sources)
	}
	return v
}

// readManifest reads the manifest and checks its form; m is nil when there is none to read.
func (v *Verification) readManifest(files map[string][]byte) (mb []byte, m *Manifest) {
	mb, ok := files[ManifestName]
	if !ok {
		v.bad("%s: missing", ManifestName)
		return nil, nil
	}
	v.Digest = "sha256:" + pack.SHA256Hex(mb)
	m = &Manifest{}
	dec := json.NewDecoder(bytes.NewReader(mb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(m); err != nil {
		v.bad("%s: not a package manifest", ManifestName)
		return nil, nil
	}
	v.Manifest = m
	if c, err := jcs.Transform(mb); err != nil || !bytes.Equal(c, mb) {
		v.bad("%s: not in RFC 8785 canonical form", ManifestName)
	}
	if m.Kind != PackageKindID || m.Profile != PackageProfile {
		v.bad("%s: kind or profile is not %s / %s", ManifestName, PackageKindID, PackageProfile)
	}
	return mb, m
}

// checkManifestValues holds a manifest to the values the published schema allows for the members
// a verifier relies on (the full schema is checked by the pack command).
func (v *Verification) checkManifestValues(m *Manifest) {
	if m.DigestAlgorithm != "sha-256" {
		v.bad("%s: digest algorithm %q is not sha-256", ManifestName, m.DigestAlgorithm)
	}
	if m.Revision < 1 {
		v.bad("%s: revision %d is below 1", ManifestName, m.Revision)
	}
	if (m.Revision == 1) != (m.PriorRevisionRef == "") {
		v.bad("%s: revision %d and its prior revision reference disagree", ManifestName, m.Revision)
	}
	if m.PackageKind != KindSnapshot && m.PackageKind != KindSelection {
		v.bad("%s: package kind %q is neither %s nor %s (delta packages are not supported)", ManifestName, m.PackageKind, KindSnapshot, KindSelection)
	}
	if m.Form != pack.FormFullText && m.Form != pack.FormHashOnly {
		v.bad("%s: form %q is not published", ManifestName, m.Form)
	}
	if m.NamePolicy != NamesKept && m.NamePolicy != NamesLabelled {
		v.bad("%s: name policy %q is neither %s nor %s", ManifestName, m.NamePolicy, NamesKept, NamesLabelled)
	}
	if m.PackageID == "" {
		v.bad("%s: no package id", ManifestName)
	}
}

// checkMembers re-computes every listed member's digest, loads the record index into m and
// returns each submission part's records by path. Every file of the package is listed, the index
// among them.
func (v *Verification) checkMembers(files map[string][]byte, m *Manifest) map[string][]json.RawMessage {
	listed := map[string]bool{ManifestName: true, SignatureName: true, EventLogName: true}
	partRecs := map[string][]json.RawMessage{}
	indexed := false
	for _, mem := range m.Members {
		listed[mem.Path] = true
		b, ok := files[mem.Path]
		if !ok {
			v.bad("%s: listed in the manifest, missing from the package", mem.Path)
			continue
		}
		v.checkBytes(mem.Path, b, mem.Bytes, mem.SHA256)
		switch mem.Role {
		case RoleRecordIndex:
			recs, err := ParseRecordIndex(b)
			if err != nil {
				v.bad("%s: not a record index", mem.Path)
				continue
			}
			m.Records = recs
			indexed = true
		case RoleSubmissionPart:
			recs, err := partRecords(b)
			if err != nil {
				v.bad("%s: not a submission", mem.Path)
				continue
			}
			if len(recs) != mem.Records {
				v.bad("%s: %d records; the manifest lists %d", mem.Path, len(recs), mem.Records)
			}
			partRecs[mem.Path] = recs
		}
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if !listed[p] {
			v.bad("%s: in the package, not listed in the manifest", p)
		}
	}
	if !indexed {
		v.bad("the manifest lists no record index (%s)", RecordIndexName)
	}
	return partRecs
}

// checkIndex holds every row of the record index to the record it names (its id and digest) and,
// with sources, to the source bytes it was made from.
func (v *Verification) checkIndex(m *Manifest, partRecs map[string][]json.RawMessage, sources map[string][]byte) {
	if (len(m.Records) == 0) != (m.EmptySelection != "") {
		v.bad("%s: %d records; an empty selection states its reason and only an empty one does", ManifestName, len(m.Records))
	}
	if m.NamePolicy == NamesLabelled {
		for k, r := range m.Records {
			if !isLabel(r.SourceFile) {
				v.bad("record %d of the index: its source is not an input label, though the names are labelled", k)
				break
			}
		}
	}
	seen := map[string]bool{}
	caches := map[string]*pack.SourceCache{}
	for k, r := range m.Records {
		if seen[r.ID] {
			v.bad("record %d of the index: its id repeats an earlier record", k)
		}
		seen[r.ID] = true
		recs, ok := partRecs[r.Part]
		if !ok || r.Index < 0 || r.Index >= len(recs) {
			v.bad("record %d of the index: %s has no record at index %d", k, r.Part, r.Index)
			continue
		}
		var idOnly struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(recs[r.Index], &idOnly)
		if idOnly.ID != r.ID {
			v.bad("record %d of the index: %s index %d carries another id", k, r.Part, r.Index)
		}
		if canonicalDigest(recs[r.Index]) != r.RecordSHA256 {
			v.bad("record %d of the index (%s index %d): record digest differs", k, r.Part, r.Index)
		}
		src, ok := sources[r.SourceFile]
		if !ok {
			continue
		}
		if caches[r.SourceFile] == nil {
			caches[r.SourceFile] = pack.NewSourceCache(src)
		}
		if b, ok := caches[r.SourceFile].At(r.Location); !ok || pack.SHA256Hex(b) != r.SourceSHA256 {
			v.bad("record %d of the index: source bytes at %s %s differ", k, r.SourceFile, r.Location)
		}
	}
}

// checkTotals holds the manifest's totals to the parts and the omissions it lists.
func (v *Verification) checkTotals(m *Manifest, partRecs map[string][]json.RawMessage) {
	n := 0
	for _, recs := range partRecs {
		n += len(recs)
	}
	if n != len(m.Records) || m.Totals.Records != len(m.Records) {
		v.bad("the parts hold %d records, the manifest lists %d (totals say %d)", n, len(m.Records), m.Totals.Records)
	}
	b, nb := pack.OmissionTotals(m.Omissions)
	if b != m.Totals.OmissionsBlocking || nb != m.Totals.OmissionsNonBlocking {
		v.bad("omission totals %d blocking, %d non-blocking; the omissions add up to %d and %d", m.Totals.OmissionsBlocking, m.Totals.OmissionsNonBlocking, b, nb)
	}
}

// checkInputs re-computes the digest of every input the manifest lists from the sources given.
func (v *Verification) checkInputs(m *Manifest, sources map[string][]byte) {
	for _, in := range m.Inputs {
		src, ok := sources[in.File]
		if !ok {
			v.bad("input %s: not found among the sources given", in.File)
			continue
		}
		v.checkBytes("input "+in.File, src, in.Bytes, in.SHA256)
	}
}

// checkBytes holds the bytes of what (a member's path, an input) to the size and digest the
// manifest lists.
func (v *Verification) checkBytes(what string, b []byte, size int, sha string) {
	if got := pack.SHA256Hex(b); len(b) != size || got != sha {
		v.bad("%s: %d bytes, digest %s; the manifest lists %d bytes, digest %s", what, len(b), short(got), size, short(sha))
	}
}

// short is a digest cut for a message a person reads.
func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}
