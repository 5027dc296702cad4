package mutlog

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// The whole-log mode: one mutation log of any length, given as one file or as several parts,
// audited as one log on the caller's machine (issue 28). It is a local check beyond the published
// caps, never the service's audit.
//
// A part is a mutation-log object like any other: the same header (every member but events and
// snapshot: format, forget_mode, scope_dimensions, principals and the declarations), the same in
// every part, and a consecutive run of the log's events, in order. Only the last part may carry
// the snapshot, the final state the whole log replays to. A part is read through its reader: a
// part within the criteria's body cap is held whole and its members may come in any order; a
// larger one is streamed, one event at a time, and lists its header before its events.
//
// Every decision is the criteria's, exactly as Audit makes it: the events are gathered in chunks
// of at most the criteria's event cap under the header, and each chunk is validated and read by
// the same code as a log of that size (read), so every refusal rule and every fact is the one the
// service would give; the chunks' events then flow, in seq order, through one replay that keeps a
// state per canonical slot only (whole_fold.go).

// PartSource opens one part of a log; it may be called more than once.
type PartSource func() (io.ReadCloser, error)

// WholeRefusal is a refusal of a log read in parts: a criteria refusal, its index counted over
// the whole log, or one of the whole mode's own rules (Local), which say how parts fit together.
// Part is the 1-based part it was found in, 0 when it is the log's as a whole.
type WholeRefusal struct {
	Refusal
	Part  int  `json:"part,omitempty"`
	Local bool `json:"local,omitempty"`
	// Seq is the seq that came out of order (WholeSeqOrder).
	Seq *int64 `json:"seq,omitempty"`
}

// The whole mode's own rules, ranked after every rule of the criteria in this order.
const (
	// WholeHeaderDiffers: a part's header differs from the first part's.
	WholeHeaderDiffers = "whole_header_differs"
	// WholeHeaderAfterEvents: a part over the body cap names a header member after its events
	// (it stops the reading, whatever else the log holds).
	WholeHeaderAfterEvents = "whole_header_after_events"
	// WholeSnapshotNotLast: a part other than the last carries a snapshot.
	WholeSnapshotNotLast = "whole_snapshot_not_last"
	// WholeSeqOrder: an event's seq is not after the seqs already replayed, a whole event cap of
	// events later (the mode orders the events by seq within that window, as Audit orders a log
	// under the cap; a log with a seq that is out of place by more, or repeated that far apart, is
	// refused).
	WholeSeqOrder = "whole_seq_order"
)

var localRules = []string{WholeHeaderDiffers, WholeHeaderAfterEvents, WholeSnapshotNotLast, WholeSeqOrder}

// eventIndexed are the refusal rules whose index counts events (refuse.go): in the whole mode it
// counts them over the whole log.
var eventIndexed = map[string]bool{"event_not_object": true, "event_seq_invalid": true, "event_seq_duplicate": true,
	"event_op_invalid": true, "event_key_invalid": true, "event_principal_invalid": true,
	"event_version_invalid": true, "envelope_invalid": true}

// errNotJSON stops the reading of every part: a part that is not JSON refuses the log
// (export_required), whatever the other parts hold.
var errNotJSON = errors.New("export_required")

// errHeaderLate stops the reading too: a part over the body cap named a header member after its
// events, which were read under the header as it stood (WholeHeaderAfterEvents).
var errHeaderLate = errors.New(WholeHeaderAfterEvents)

// placeholder is the one event of a chunk that carries snapshot entries only: a reassignment of an
// empty session passes every event rule under any header and names no slot.
const placeholder = `{"seq":1,"op":"reassign","session":{}}`

type member struct {
	name string
	raw  []byte // compact
}

// wholeRead is one whole-log audit in progress.
type wholeRead struct {
	ms   *rules.MutLogSet
	caps rules.MutLogCaps
	// header is the first part's header, sorted by name; prefix opens every chunk with it.
	header []member
	prefix []byte
	// part is the part being read (1-based), parts their number; hdr the part's own header.
	part, parts int
	hdr         []member
	hdrDone     bool
	held        bool // the part is within the body cap and held whole
	// buf holds the chunk being gathered: n events (or entries) from global index off.
	buf    []byte
	n, off int
	total  int   // events read so far, over all parts
	starts []int // the global index of each part's first event
	snapN  int   // snapshot entries read so far
	best   *WholeRefusal
	f      *fold
	sbuf   []byte // the snapshot chunk being gathered, sn entries
	sn     int
	// fast: read by the fast reader (whole_cut.go), cut its cutter; slow: a chunk read other
	// than the cutter cut it, and the fast reader stops.
	fast, slow bool
	cut        cutter
	// holdBytes is the size up to which a part is held whole (the body cap), cutBuf the size of
	// the buffer the cutter starts with; tests make them small.
	holdBytes, cutBuf int
	// chunkNo numbers the event chunks read; bufOf holds the buffers of those whose events wait
	// in the window (waiting counts them), free the buffers to reuse; the pinned chunk's is
	// never reused.
	chunkNo, pinned int32
	bufOf           map[int32][]byte
	waiting         []int // by chunk number
	free            [][]byte
}

// WholeResult is a whole-log audit: the report, as Audit would make it for the log the parts make
// together, and the events each part gave.
type WholeResult struct {
	Report     *Report
	PartEvents []int
}

// AuditWhole audits the log the parts make together, in the order given. A refusal is the log's;
// an error is a part that cannot be read or a rule that failed at run time
// (errors.Is(err, rules.ErrRuleFailed)).
func AuditWhole(ms *rules.MutLogSet, parts []PartSource, checkEnd time.Time) (*WholeResult, *WholeRefusal, error) {
	if res := newWholeRead(ms, len(parts)).auditFast(parts, checkEnd); res != nil {
		return res, nil, nil
	}
	return newWholeRead(ms, len(parts)).audit(parts, checkEnd)
}

// audit is the reference reader's audit (whole.go, whole_chunk.go): every refusal and error of
// the mode is its answer.
func (w *wholeRead) audit(parts []PartSource, checkEnd time.Time) (*WholeResult, *WholeRefusal, error) {
	for i, open := range parts {
		w.part = i + 1
		w.starts = append(w.starts, w.total)
		if err := w.readPart(open); err != nil {
			if errors.Is(err, errNotJSON) {
				return nil, w.refusal(newRefusal("export_required"), w.part), nil
			}
			if errors.Is(err, errHeaderLate) {
				return nil, &WholeRefusal{Refusal: *newRefusal(WholeHeaderAfterEvents), Part: w.part, Local: true}, nil
			}
			return nil, nil, err
		}
	}
	if err := w.flushEvents(); err != nil {
		return nil, nil, err
	}
	if w.total == 0 {
		// No part gave an event: the log's own answer (events_empty, or a header rule before it),
		// ranked with what the snapshot's chunks found.
		w.check(w.chunk([]byte(`"events":[]`)), 0)
	}
	rep, ref, err := w.f.finish(w, checkEnd)
	if rep == nil {
		return nil, ref, err
	}
	return w.result(rep), nil, nil
}

// auditFast audits the parts with the fast reader (whole_cut.go); nil when it stopped, and the
// parts are then read again by the reference reader.
func (w *wholeRead) auditFast(parts []PartSource, checkEnd time.Time) *WholeResult {
	w.fast = true
	for i, open := range parts {
		w.part = i + 1
		w.starts = append(w.starts, w.total)
		if err := w.fastPart(open); err != nil {
			return nil
		}
	}
	if err := w.flushEvents(); err != nil || w.best != nil || w.slow || w.total == 0 {
		return nil
	}
	rep, ref, err := w.f.finish(w, checkEnd)
	if rep == nil || ref != nil || err != nil {
		return nil
	}
	return w.result(rep)
}

func newWholeRead(ms *rules.MutLogSet, parts int) *wholeRead {
	caps := ms.Criteria().Caps
	return &wholeRead{ms: ms, caps: caps, parts: parts, f: newFold(ms), holdBytes: caps.BodyBytes, cutBuf: 1 << 20,
		pinned: -1, bufOf: map[int32][]byte{}}
}

// result is the report with the events each part gave.
func (w *wholeRead) result(rep *Report) *WholeResult {
	res := &WholeResult{Report: rep, PartEvents: make([]int, w.parts)}
	for i, s := range w.starts {
		end := w.total
		if i+1 < len(w.starts) {
			end = w.starts[i+1]
		}
		res.PartEvents[i] = end - s
	}
	return res
}

// refusal wraps a criteria refusal found in part p.
func (w *wholeRead) refusal(r *Refusal, p int) *WholeRefusal {
	return &WholeRefusal{Refusal: *r, Part: p}
}

// rank orders refusals as the criteria order their rules, then the whole mode's own; an earlier
// item, then an earlier part, first.
func (w *wholeRead) rank(r *WholeRefusal) (int, int, int) {
	i := slices.Index(w.ms.Criteria().Refusals, r.Rule)
	if r.Local {
		i = len(w.ms.Criteria().Refusals) + slices.Index(localRules, r.Rule)
	}
	idx := -1
	if r.Index != nil {
		idx = *r.Index
	}
	return i, idx, r.Part
}

// refuse keeps the first refusal by rank: every chunk is still validated after one, so that the
// answer is the rule the criteria rank first over the whole log, as Audit would give it.
func (w *wholeRead) refuse(r *WholeRefusal) {
	if w.best == nil {
		w.best = r
		return
	}
	a1, b1, c1 := w.rank(r)
	a2, b2, c2 := w.rank(w.best)
	if a1 < a2 || (a1 == a2 && (b1 < b2 || (b1 == b2 && c1 < c2))) {
		w.best = r
	}
}

func (w *wholeRead) refuseLocal(rule string, part int) {
	w.refuse(&WholeRefusal{Refusal: *newRefusal(rule), Part: part, Local: true})
}

// readPart reads one part: held whole when it is within the body cap, else streamed.
func (w *wholeRead) readPart(open PartSource) error {
	rc, err := open()
	if err != nil {
		return err
	}
	defer rc.Close()
	er := &errReader{r: rc}
	head, err := io.ReadAll(io.LimitReader(er, int64(w.holdBytes)+1))
	if err != nil {
		return err
	}
	w.hdr, w.hdrDone = w.hdr[:0], false
	w.held = len(head) <= w.holdBytes
	if w.held {
		// Small: its header is read first, wherever it stands, then its events.
		if err := w.members(jsontext.NewDecoder(bytes.NewReader(head)), true); err != nil {
			return err
		}
		w.headerDone()
		return w.members(jsontext.NewDecoder(bytes.NewReader(head)), false)
	}
	err = w.members(jsontext.NewDecoder(io.MultiReader(bytes.NewReader(head), er)), false)
	if er.err != nil {
		return er.err
	}
	return err
}

// errReader keeps the reader's own error apart from the decoder's verdict on the bytes.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// members reads a part's top-level object. With headerOnly it keeps the header and skips the
// rest; otherwise it reads the events and the snapshot, and the header when it is not yet known.
func (w *wholeRead) members(dec *jsontext.Decoder, headerOnly bool) error {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errNotJSON // export_required: not JSON, or not an object
	}
	sawEvents := false
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return errNotJSON
		}
		name := tok.String()
		switch {
		case (name == "events" || name == "snapshot") && headerOnly:
			err = dec.SkipValue()
		case name == "events":
			sawEvents = true
			w.headerDone()
			err = w.events(dec)
		case name == "snapshot":
			w.headerDone()
			err = w.snapshot(dec)
		case w.hdrDone:
			if !w.held {
				return errHeaderLate // the chunks before were read under a part of the header
			}
			err = dec.SkipValue()
		default:
			var v jsontext.Value
			if v, err = dec.ReadValue(); err == nil {
				v = slices.Clone(v)
				err = v.Compact()
				w.hdr = append(w.hdr, member{name: name, raw: v})
			}
		}
		if err != nil {
			return notJSON(err)
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return errNotJSON
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return errNotJSON // something after the object
	}
	if headerOnly {
		return nil
	}
	w.headerDone()
	if !sawEvents {
		w.check(w.chunk(), 0) // this part has no events: events_required
	}
	return nil
}

func notJSON(err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errNotJSON
	}
	return err
}

// headerDone closes the part's header: the first part's becomes the log's, every other must
// equal it.
func (w *wholeRead) headerDone() {
	if w.hdrDone {
		return
	}
	w.hdrDone = true
	slices.SortFunc(w.hdr, func(a, b member) int {
		if a.name < b.name {
			return -1
		}
		if a.name > b.name {
			return 1
		}
		return 0
	})
	if w.part == 1 {
		w.header = slices.Clone(w.hdr)
		w.prefix = append(w.prefix[:0], '{')
		for _, m := range w.header {
			w.prefix = appendMember(w.prefix, m.name, m.raw)
			w.prefix = append(w.prefix, ',')
		}
		return
	}
	if !slices.EqualFunc(w.hdr, w.header, func(a, b member) bool { return a.name == b.name && bytes.Equal(a.raw, b.raw) }) {
		w.refuseLocal(WholeHeaderDiffers, w.part)
	}
}

func appendMember(b []byte, name string, raw []byte) []byte {
	q, _ := jsontext.AppendQuote(b, name)
	return append(append(q, ':'), raw...)
}
