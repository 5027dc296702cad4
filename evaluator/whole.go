package evaluator

import (
	"errors"
	"hash/maphash"
	"io"
	"slices"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// The local whole-store check (issue 28): one export of any size, or any number of parts of one
// export, analysed as one export, outside the published caps and never as a signed audit. It
// reads each part once, through a splitter that cuts the records out of the stream one by one
// (whole_scan.go), reads them strictly a batch at a time (the pull reader of whole_lex.go, the
// tree decoder for a batch it leaves), and evaluates each as it is read:
//
//   - every record goes through the refusal rules that are not about the caps and through the
//     service's record stage (liveness, predicates, marks, conflict applicability, conflicts),
//     and is added to the counts of the whole; its id and content key go into two hash tables
//     (whole_table.go) that find a repeated id, a repeated content key, and where a record lies;
//   - a record that takes part in a cross-record decision is kept as its bytes: its content key
//     occurs twice or more, it holds an M4 pointer, or a pointer names it. What decides this, and
//     R-14's supersedes targets, may come after the record: a record that turns out to be kept,
//     or superseded, is read again where it lies at the end, its contribution taken back and
//     redone (wholeFold.settle);
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
//
// The refusals come in the order a reader of every part before any evaluation would give them: a
// part that is not JSON, or whose header disagrees with the first part's, at once; any other
// refusal only once every part has been read, the first part's first.

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
	f := newWholeFold(ps, len(parts))
	defer f.release()
	ref, err := f.run(parts, nil)
	if errors.Is(err, errRestart) {
		// A member follows a part's records: read every part's header first, then start again.
		f.release()
		known, perr := prepass(parts)
		if perr != nil {
			return nil, nil, perr
		}
		f = newWholeFold(ps, len(parts))
		ref, err = f.run(parts, known)
		if errors.Is(err, errRestart) {
			return nil, nil, errPartChanged
		}
	}
	if ref != nil || err != nil {
		return nil, ref, err
	}
	if err := f.settle(parts); err != nil {
		return nil, nil, err
	}
	infos := make([]WholePartInfo, len(parts))
	for i := range parts {
		infos[i] = WholePartInfo{Name: parts[i].Name, Records: f.parts[i].records}
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

// prepass reads every part's header, cutting its records out without decoding them: the headers
// a second run starts from when a member follows some part's records. It stops at a part that is
// not JSON, which the run meets in its turn.
func prepass(parts []WholePart) ([]*wholeHeader, error) {
	known := make([]*wholeHeader, len(parts))
	var buf []byte
	for i, p := range parts {
		hdr := newWholeHeader()
		var err error
		buf, err = readPart(p, hdr, nil, buf, nil)
		switch {
		case errors.Is(err, errSyntax):
			return known, nil
		case err != nil && !errors.Is(err, errRestart):
			return nil, err
		}
		known[i] = hdr
	}
	return known, nil
}

// key128 is a keyed 128-bit hash of a string: two maphash values under two per-run seeds.
type key128 struct{ a, b uint64 }

// wholeIndex is what the check learns of the records' ids and content keys across every part.
type wholeIndex struct {
	s1, s2   maphash.Seed
	ids      keyTable         // every record id, with the ordinal of its first record
	contents keyTable         // every content key, with its first record and how many records have it
	targets  map[key128]uint8 // supersedes targets: bit 0 named, bit 1 named by another record
	pointers map[key128]struct{}
	// at and size are where each record lies in its part, by ordinal; firsts is each part's first
	// ordinal.
	at     chunked[int64]
	size   chunked[uint32]
	firsts []uint32
}

func newWholeIndex() *wholeIndex {
	return &wholeIndex{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(),
		targets: map[key128]uint8{}, pointers: map[key128]struct{}{}}
}

func (idx *wholeIndex) key(s string) key128 {
	return key128{maphash.String(idx.s1, s), maphash.String(idx.s2, s)}
}

// superseded reports whether another record's supersedes names the id whose key is k.
func (idx *wholeIndex) superseded(k key128) bool {
	return len(idx.targets) > 0 && idx.targets[k]&2 != 0
}

// repeated reports whether two records or more have the content key k.
func (idx *wholeIndex) repeated(k key128) bool {
	s := idx.contents.get(k)
	return s != nil && s.repeated()
}

// named reports whether an origin_claim_id names the id whose key is k.
func (idx *wholeIndex) named(k key128) bool {
	if len(idx.pointers) == 0 {
		return false
	}
	_, ok := idx.pointers[k]
	return ok
}

// dangling counts the supersedes targets that are no record's id.
func (idx *wholeIndex) dangling() int {
	n := 0
	for k := range idx.targets {
		if idx.ids.get(k) == nil {
			n++
		}
	}
	return n
}

// part is the part of the record with ordinal o.
func (idx *wholeIndex) part(o uint32) int {
	i, found := slices.BinarySearch(idx.firsts, o)
	if !found {
		i--
	}
	for i+1 < len(idx.firsts) && idx.firsts[i+1] == o {
		i++ // parts without records share their first ordinal with the next
	}
	return i
}
