package evaluator

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// The local whole-store check (issue 28): one export of any size, or any number of parts of one
// export, analysed as one export, outside the published caps and never as a signed audit. It reads
// each part twice through a reader, one record at a time, but tokenizes it once, and keeps per
// content key, record id and scope only what the factors need:
//
//   - pass 1 (the index) tokenizes the part with jsontext's strict decoder, notes where each
//     record's bytes lie, reads each record's id, content key, supersedes and origin_claim_id from
//     the decoder's own tokens (no value tree; whole_tokens.go), counts each content key,
//     remembers every record id and the pointers' targets, and checks that the parts' headers
//     agree;
//   - pass 2 (the fold) reads each record's bytes where pass 1 found them (no tokenizing), decodes
//     it, runs the refusal rules that are not about the caps, and evaluates the record with the
//     criteria's programs exactly as the service's record stage does (liveness, predicates,
//     marks, conflict applicability, conflicts), adding it to the counts. A record that can take part in a cross-record decision (its content key occurs
//     twice or more, it holds or is the target of an M4 pointer) is kept as its bytes;
//   - the kept records then go through the service's own stages as one reduced export (the M4
//     walk, the cluster programs, the duplicate groups), with the counts, gates and coverage of
//     the whole put in place of the reduced export's.
//
// Every record of a content key that occurs twice is kept, and the records a pointer chain can
// reach are kept, so each cluster, duplicate group and walk sees exactly the records the service
// would see in one export: the factors are the service's. Content keys and ids are held as keyed
// 128-bit hashes under a key drawn per run (hash/maphash): two distinct strings collide with
// probability about n²/2¹²⁹, under 10⁻²⁶ for 10⁶ records, and a collision could only merge two
// content keys or two ids, never in practice.

// WholePart is one input of a local whole-store check: a name for messages (the path the user
// gave) and a way to read its bytes from the start, once per pass.
type WholePart struct {
	Name string
	Open func() (io.ReadCloser, error)
}

// WholePartInfo is one part as the report lists it.
type WholePartInfo struct {
	Name    string `json:"name"`
	Records int    `json:"records"`
}

// WholeReport is the result of a local whole-store check: the report of the parts analysed as one
// export, under the statement of what it is not.
type WholeReport struct {
	// Mode says plainly that this is a local check beyond the published caps, not a signed audit.
	Mode string `json:"mode"`
	// Certification is the criteria's own sentence that a report is never a whole-store
	// certification, read from its scope text.
	Certification string          `json:"certification"`
	Kind          string          `json:"kind"`
	Parts         []WholePartInfo `json:"parts"`
	Report        *Report         `json:"report"`
	// Closing repeats Mode and Certification last, so that the output ends as it begins.
	Closing string `json:"closing"`
}

// WholeRefusal is a refusal of one part by a rule that is not about the caps.
type WholeRefusal struct {
	Part    string   `json:"part"`
	Refusal *Refusal `json:"refusal"`
}

// WholeKind is the kind of a WholeReport.
const WholeKind = "local_whole_store_check"

// WholeMode is the statement every output of the local whole-store check opens and closes with,
// for a criteria revision whose id is id.
func WholeMode(id string) string {
	return "local whole-store check beyond the published caps — not a signed " + id + " audit"
}

// WholeNotice is the one line that opens and closes every output of the check: WholeMode, then
// the criteria's own words that a report is never a whole-store certification.
func WholeNotice(c *rules.Criteria) string {
	n := WholeMode(c.CriteriaID) + "."
	if cert := WholeCertification(c); cert != "" {
		n += " " + cert
	}
	return n
}

// WholeCertification is the sentence of the criteria's scope text that says a report is never a
// whole-store certification ("" when the scope text has none).
func WholeCertification(c *rules.Criteria) string {
	return rules.SentenceWith(c.Texts.ScopeText, "whole-store certification")
}

// errWholeNoParts is the error of a check given nothing to read.
var errWholeNoParts = errors.New("whole-store check: no part given")

// AuditWhole analyses parts as one export. A refusal names the part it applies to; an error is a
// part that cannot be read, parts whose headers disagree (naming the part and the member), or a
// rule that failed at run time (errors.Is(err, rules.ErrRuleFailed)).
func AuditWhole(ps *rules.ProgramSet, parts []WholePart, checkEnd time.Time) (*WholeReport, *WholeRefusal, error) {
	if len(parts) == 0 {
		return nil, nil, errWholeNoParts
	}
	idx := newWholeIndex()
	for i := range parts {
		if ref, err := idx.indexPart(ps, parts[i], i); ref != nil || err != nil {
			return nil, ref, err
		}
	}
	f, err := newWholeFold(ps, idx)
	if err != nil {
		return nil, nil, err
	}
	defer f.release()
	infos := make([]WholePartInfo, len(parts))
	for i := range parts {
		if ref, err := f.foldPart(parts[i], i); ref != nil || err != nil {
			return nil, ref, err
		}
		infos[i] = WholePartInfo{Name: parts[i].Name, Records: idx.parts[i].records}
	}
	rep, err := f.audit(checkEnd)
	if err != nil {
		return nil, nil, err
	}
	c := ps.Criteria()
	mode, cert := WholeMode(c.CriteriaID), WholeCertification(c)
	return &WholeReport{Mode: mode, Certification: cert, Kind: WholeKind, Parts: infos, Report: rep,
		Closing: WholeNotice(c)}, nil, nil
}

// key128 is a keyed 128-bit hash of a string: two maphash values under two per-run seeds.
type key128 struct{ a, b uint64 }

// wholeIndex is what pass 1 learns of all the parts. Ids and content keys are gathered as lists
// of hashes (24 bytes a record with the id's place, 16 for the content key) in chunks, flattened
// and sorted once at the end: a map of a million keys would take three to four times the memory.
type wholeIndex struct {
	s1, s2   maphash.Seed
	idAt     chunked[idPlace]    // every record id and its place, until finish
	ids      []key128            // the distinct ids, sorted (after finish)
	contents []key128            // every record's content key, sorted and distinct (after finish)
	keys     chunked[key128]     // every record's content key, until finish
	repeated map[key128]struct{} // the content keys of two records or more (after finish)
	targets  map[key128]uint8    // supersedes targets: bit 0 named, bit 1 named by another record
	pointers map[key128]struct{}
	parts    []partIndex
	header   *wholeHeader // the first part's
	dangling int
}

// idPlace is a record id's hash and where the record stands.
type idPlace struct {
	k           key128
	part, index int32
}

// partIndex is what pass 1 learns of one part.
type partIndex struct {
	records int
	dupAt   int // the index of its first record whose id an earlier record has (-1: none)
	hdr     *wholeHeader
	spans   spans // where each record lies, until pass 2 has read the part
}

func newWholeIndex() *wholeIndex {
	return &wholeIndex{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), repeated: map[key128]struct{}{},
		targets: map[key128]uint8{}, pointers: map[key128]struct{}{}}
}

func (idx *wholeIndex) key(s string) key128 {
	return key128{maphash.String(idx.s1, s), maphash.String(idx.s2, s)}
}

func compareKeys(a, b key128) int {
	if c := cmp.Compare(a.a, b.a); c != 0 {
		return c
	}
	return cmp.Compare(a.b, b.b)
}

// has reports whether the sorted list keys holds k.
func has(keys []key128, k key128) bool {
	_, ok := slices.BinarySearchFunc(keys, k, compareKeys)
	return ok
}

// superseded reports whether another record's supersedes names id.
func (idx *wholeIndex) superseded(id string) bool {
	return len(idx.targets) > 0 && idx.targets[idx.key(id)]&2 != 0
}

// kept reports whether a record takes part in a cross-record decision: its content key occurs
// twice or more, it holds a pointer, or a pointer names it.
func (idx *wholeIndex) kept(id, content string, pointer bool) bool {
	if pointer {
		return true
	}
	if _, ok := idx.repeated[idx.key(content)]; ok {
		return true
	}
	if len(idx.pointers) == 0 {
		return false
	}
	_, named := idx.pointers[idx.key(id)]
	return named
}

// finish settles what needs every part: the ids an earlier record has (record_id_duplicate, in
// each part its first), the distinct ids and content keys, the repeated content keys, and the
// dangling supersedes targets.
func (idx *wholeIndex) finish() {
	idAt := idx.idAt.flat()
	slices.SortFunc(idAt, func(a, b idPlace) int {
		if c := compareKeys(a.k, b.k); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.part, b.part), cmp.Compare(a.index, b.index))
	})
	ids := make([]key128, 0, len(idAt))
	for i, p := range idAt {
		if i > 0 && p.k == idAt[i-1].k {
			// Not the first record with this id: a duplicate where it stands.
			if pi := &idx.parts[p.part]; pi.dupAt < 0 || int(p.index) < pi.dupAt {
				pi.dupAt = int(p.index)
			}
			continue
		}
		ids = append(ids, p.k)
	}
	idx.ids = ids
	idx.contents = idx.keys.flat()
	slices.SortFunc(idx.contents, compareKeys)
	n := 0
	for i, k := range idx.contents {
		if i > 0 && k == idx.contents[i-1] {
			idx.repeated[k] = struct{}{}
			continue
		}
		idx.contents[n] = k
		n++
	}
	idx.contents = slices.Clip(idx.contents[:n])
	idx.dangling = 0
	for k := range idx.targets {
		if !has(idx.ids, k) {
			idx.dangling++
		}
	}
}

// partError is the static error of a part that cannot be read.
func partError(name string, err error) error {
	return fmt.Errorf("whole-store check: part %s: %w", name, err)
}
