package mutlog

import (
	"sort"

	"github.com/go-json-experiment/json/jsontext"
)

// events gathers a part's events into chunks of at most the event cap. A chunk may span parts:
// a log under the cap is then one chunk however it is split, and answers as Audit does.
func (w *wholeRead) events(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '[' {
		// Not an array: the chunk of this one member says which rule refuses it.
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		w.check(w.chunk(append([]byte(`"events":`), v...)), 0)
		return nil
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := w.addEvent(v); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// addEvent adds one event, as its bytes, to the chunk being gathered, and reads the chunk once it
// holds the event cap.
func (w *wholeRead) addEvent(v []byte) error {
	if w.n == 0 {
		// The chunk's body is gathered in place: the header, then the events as read. Its
		// buffer is its own while its events wait in the window (the log read from it keeps
		// strings of it), then reused.
		var b []byte
		if k := len(w.free); k > 0 {
			b, w.free = w.free[k-1][:0], w.free[:k-1]
		} else {
			b = make([]byte, 0, max(cap(w.buf), 4096))
		}
		w.buf = append(append(b, w.prefix...), `"events":[`...)
	} else {
		w.buf = append(w.buf, ',')
	}
	w.buf = append(w.buf, v...)
	w.n++
	w.total++
	if w.n == w.caps.EventsPerAudit {
		return w.flushEvents()
	}
	return nil
}

// flushEvents validates and reads the gathered chunk, and hands its events to the fold.
func (w *wholeRead) flushEvents() error {
	if w.n == 0 {
		return nil
	}
	l := w.check(append(w.buf, ']', '}'), w.off)
	n := w.n
	w.off += n
	w.n = 0
	if w.fast && l != nil && len(l.events) != n {
		w.slow = true
		return errSlow
	}
	if l != nil && w.best == nil {
		no := w.chunkNo
		w.chunkNo++
		if w.f.gl == nil {
			w.pinned = no // the log keeps this chunk's header strings (the principals, the dimensions)
		}
		w.bufOf[no] = w.buf
		err := w.f.addEvents(w, l, no)
		releaseEvents(l) // the window holds copies of the events: their slice serves the next chunk
		return err
	}
	return nil
}

// pendingIn counts the events of chunk no that wait in the window; once none does, the chunk's
// buffer is free for a later chunk, unless the log keeps strings of it.
func (w *wholeRead) pendingIn(no int32, d int) {
	if int(no) >= len(w.waiting) {
		w.waiting = append(w.waiting, make([]int, int(no)+1-len(w.waiting))...)
	}
	w.waiting[no] += d
	if w.waiting[no] > 0 {
		return
	}
	if b, ok := w.bufOf[no]; ok && no != w.pinned {
		if len(w.free) < 2 {
			w.free = append(w.free, b)
		}
		delete(w.bufOf, no)
	}
}

// snapshot reads the last part's snapshot in chunks of at most the snapshot cap, each under the
// header with one placeholder event.
func (w *wholeRead) snapshot(dec *jsontext.Decoder) error {
	if w.part != w.parts {
		w.refuseLocal(WholeSnapshotNotLast, w.part)
		return dec.SkipValue()
	}
	if dec.PeekKind() != '[' {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		w.snapChunk(append([]byte(`"snapshot":`), v...))
		return nil
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	w.snapBegin()
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		w.snapAdd(v)
	}
	w.snapEnd()
	_, err := dec.ReadToken()
	return err
}

// snapBegin, snapAdd and snapEnd gather the snapshot's entries, as their bytes, in chunks of at
// most the snapshot cap.
func (w *wholeRead) snapBegin() {
	w.sn, w.sbuf = 0, append(w.sbuf[:0], `"snapshot":[`...)
}

func (w *wholeRead) snapAdd(v []byte) {
	if w.sn > 0 {
		w.sbuf = append(w.sbuf, ',')
	}
	w.sbuf = append(w.sbuf, v...)
	if w.sn++; w.sn == w.caps.SnapshotEntries {
		w.snapFlush()
	}
}

func (w *wholeRead) snapEnd() {
	if w.sn > 0 || w.snapN == 0 {
		w.snapFlush() // an empty snapshot is a snapshot too
	}
}

func (w *wholeRead) snapFlush() {
	w.snapChunk(append(w.sbuf, ']'))
	w.snapN += w.sn
	w.snapBegin()
}

func (w *wholeRead) snapChunk(snap []byte) {
	l := w.check(w.chunk([]byte(`"events":[`+placeholder+`]`), snap), w.snapN)
	if w.fast && l != nil && len(l.snapshot) != w.sn {
		w.slow = true
		return
	}
	if l != nil && w.best == nil {
		w.f.addSnapshot(w.ms, l)
	}
}

// chunk is a log body of the header and the given members. Each chunk has bodies of its own: the
// log read from it may keep strings of it (the pending events, the principals table).
func (w *wholeRead) chunk(tail ...[]byte) []byte {
	n := len(w.prefix) + 2
	for _, t := range tail {
		n += len(t) + 1
	}
	b := append(make([]byte, 0, n), w.prefix...)
	if len(b) == 0 {
		b = append(b, '{') // no part has given a header yet
	}
	for i, t := range tail {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t...)
	}
	if len(tail) == 0 && len(b) > 1 {
		b = b[:len(b)-1] // the prefix's trailing comma
	}
	return append(b, '}')
}

// check validates and reads one chunk as read does for a whole log; a refusal is kept with its
// index counted over the whole log (off is the chunk's first event or snapshot entry).
func (w *wholeRead) check(body []byte, off int) *log {
	l, r := readIn(w.ms, body, false, w.f.sp)
	if r == nil {
		return l
	}
	wr := &WholeRefusal{Refusal: *r, Part: w.part}
	if r.Index != nil && (eventIndexed[r.Rule] || r.Rule == "snapshot_invalid") {
		i := *r.Index + off
		wr.Index = &i
		if eventIndexed[r.Rule] {
			wr.Part = w.partOf(i)
		}
	}
	w.refuse(wr)
	return nil
}

// partOf is the 1-based part that holds the log's event i.
func (w *wholeRead) partOf(i int) int {
	return sort.Search(len(w.starts), func(p int) bool { return w.starts[p] > i })
}
