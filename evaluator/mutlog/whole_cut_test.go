package mutlog

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"testing/iotest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scopehygiene/scope-hygiene/gen/forget"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// The fast reader (whole_cut.go) is held to the reference reader of whole.go: whenever it gives a
// report, the reference gives the same report, byte for byte; and on the logs the whole mode is
// for (valid logs, whatever their whitespace, held or streamed, cut anywhere) it does give one.

var cutEnd = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// readerKind is how a test hands a part's bytes to the readers.
type readerKind int

const (
	inMemory readerKind = iota // one bytes.Reader
	oneByte                    // one byte a Read
)

// cutConfig is a reading of the parts: how they are read, the size up to which a part is held,
// and the size of the cutter's first buffer.
type cutConfig struct {
	rk        readerKind
	holdBytes int
	cutBuf    int
}

func (cfg cutConfig) sources(parts [][]byte) []PartSource {
	out := make([]PartSource, len(parts))
	for i, b := range parts {
		out[i] = func() (io.ReadCloser, error) {
			var r io.Reader = bytes.NewReader(b)
			if cfg.rk == oneByte {
				r = iotest.OneByteReader(r)
			}
			return io.NopCloser(r), nil
		}
	}
	return out
}

func (cfg cutConfig) reader(ms *rules.MutLogSet, n int) *wholeRead {
	w := newWholeRead(ms, n)
	if cfg.holdBytes >= 0 {
		w.holdBytes = cfg.holdBytes
	}
	if cfg.cutBuf > 0 {
		w.cutBuf = cfg.cutBuf
	}
	return w
}

// OutcomeJSON is a result as the tests compare it, in this package's tests and its external ones
// (whole_test.go): the error, else the report's JSON (res), else the refusal's (ref).
func OutcomeJSON[R any](t testing.TB, res *R, ref any, err error) string {
	t.Helper()
	if err != nil {
		return "error: " + err.Error()
	}
	var v any = res
	if res == nil {
		v = ref
	}
	b, jerr := json.Marshal(v)
	if jerr != nil {
		t.Fatal(jerr)
	}
	return string(b)
}

// fastAndReference reads the parts both ways: the fast reader's report ("" when it stopped)
// and the reference's answer.
func fastAndReference(t testing.TB, ms *rules.MutLogSet, cfg cutConfig, parts [][]byte) (fast, ref string) {
	t.Helper()
	if res := cfg.reader(ms, len(parts)).auditFast(cfg.sources(parts), cutEnd); res != nil {
		fast = OutcomeJSON(t, res, nil, nil)
	}
	res, r, err := cfg.reader(ms, len(parts)).audit(cfg.sources(parts), cutEnd)
	return fast, OutcomeJSON(t, res, r, err)
}

var cutConfigs = []cutConfig{
	{rk: inMemory, holdBytes: -1},                 // as shipped
	{rk: inMemory, holdBytes: 0, cutBuf: 7},       // every part streamed, the buffer grown and refilled
	{rk: oneByte, holdBytes: 0, cutBuf: 64},       // streamed, one byte a read
	{rk: oneByte, holdBytes: 100, cutBuf: 1},      // the held/streamed boundary at 100 bytes
	{rk: inMemory, holdBytes: 1 << 30, cutBuf: 3}, // every part held
}

// spaced is the log with whitespace around every token, as a writer might indent it.
func spaced(t testing.TB, body []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, body, " \r", "\t "); err != nil {
		t.Fatal(err)
	}
	return append(append([]byte("\n "), b.Bytes()...), " \n"...)
}

// splitParts cuts a log into parts at the given event indexes, each part's header first.
func splitParts(t testing.TB, body []byte, cuts []int) [][]byte {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	var evs []json.RawMessage
	if err := json.Unmarshal(top["events"], &evs); err != nil {
		t.Fatal(err)
	}
	snap, hasSnap := top["snapshot"]
	delete(top, "snapshot")
	delete(top, "events")
	head, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	from := 0
	for i, c := range append(cuts, len(evs)) {
		b := append(bytes.Clone(head[:len(head)-1]), `,"events":[`...)
		for j, e := range evs[from:c] {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, e...)
		}
		b = append(b, ']')
		if hasSnap && i == len(cuts) {
			b = append(append(b, `,"snapshot":`...), snap...)
		}
		out = append(out, append(b, '}'))
		from = c
	}
	return out
}

// TestFastEqualsReference: on 60 random logs the whole mode reports on, whole and cut, compact and
// spaced, held and streamed, the fast reader reports and its report is the reference's.
func TestFastEqualsReference(t *testing.T) {
	ms := loadSet(t)
	reported := 0
	for i := range 60 {
		body, err := forget.RandomLog(2828, i)
		if err != nil {
			t.Fatal(err)
		}
		var n struct{ Events []json.RawMessage }
		if json.Unmarshal(body, &n) != nil || len(n.Events) < 2 {
			continue
		}
		first := splitParts(t, body, nil)[0] // the header before the events, as a streamed part needs
		inputs := [][][]byte{{body}, {spaced(t, body)}, {first}, {spaced(t, first)},
			splitParts(t, body, []int{1, len(n.Events) / 2})}
		for _, cfg := range cutConfigs {
			for k, parts := range inputs {
				fast, ref := fastAndReference(t, ms, cfg, parts)
				if fast == "" {
					if bytes.HasPrefix([]byte(ref), []byte(`{"Report"`)) {
						t.Fatalf("log %d input %d %+v: the fast reader stopped on a log the reference reports on", i, k, cfg)
					}
					continue
				}
				reported++
				if fast != ref {
					t.Fatalf("log %d input %d %+v:\n fast %s\n ref  %s", i, k, cfg, fast, ref)
				}
			}
		}
	}
	t.Logf("%d readings reported on by both readers", reported)
	if reported == 0 {
		t.Fatal("no log reported on")
	}
}

// FuzzFastReader holds the fast reader to the reference on any bytes: as one part, and cut in
// two at a byte the input picks, every part held or every part streamed through a small buffer
// one byte a read; whenever the fast reader gives a report, it is the reference's answer.
func FuzzFastReader(f *testing.F) {
	ms := loadSet(f)
	for i := range 6 {
		b, err := forget.RandomLog(7, i)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(spaced(f, b))
	}
	f.Add([]byte(`{"format":"mutation-log","events":[{"seq":1,"op":"reassign","session":{}}] , "x":"\u0041\"]}"}`))
	f.Add([]byte(`{"events":[1 2]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 1<<16 {
			return
		}
		at := 0
		if len(body) > 0 {
			at = int(body[0]) * len(body) / 256
		}
		for _, cfg := range []cutConfig{{rk: inMemory, holdBytes: -1}, {rk: oneByte, holdBytes: 0, cutBuf: 5}} {
			for _, parts := range [][][]byte{{body}, {body[:at], body[at:]}} {
				if fast, ref := fastAndReference(t, ms, cfg, parts); fast != "" && fast != ref {
					t.Fatalf("%+v, %d part(s):\n fast %s\n ref  %s", cfg, len(parts), fast, ref)
				}
			}
		}
	})
}

// TestCutterFindsValueEnds: on valid values, escapes and brackets in strings among them, the
// cutter cuts where jsontext reads, whatever the size of the reads and of its buffer.
func TestCutterFindsValueEnds(t *testing.T) {
	vals := []string{`"a\\"`, `"\\\""`, `"\\\\\\\\"`, `{"a":"}\"]","b":[{}]}`, `[1,{"b":[]},"[\\"]`, `-1.5e3`,
		`true`, `null`, `0`, `""`, `{}`, `[[[]]]`, `"\u005c\""`, `{"k\"{":{"x":"\\\\\"}"}}`}
	var all []byte
	for i, v := range vals {
		if !jsontext.Value(v).IsValid() {
			t.Fatalf("value %d is not valid JSON", i)
		}
		if i > 0 {
			all = append(all, " ,\n"...)
		}
		all = append(all, v...)
	}
	all = append(append([]byte("["), all...), ']')
	for _, size := range []int{1, 2, 3, 8, 64} {
		for _, one := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(all)
			if one {
				r = iotest.OneByteReader(r)
			}
			c := &cutter{src: r, buf: make([]byte, 0, size)}
			if !c.expect('[') {
				t.Fatal("no [")
			}
			for i, want := range vals {
				s, ok := c.value()
				if !ok || string(c.buf[s.from:s.to]) != want {
					t.Fatalf("size %d one %v: value %d: %q, want %q", size, one, i, c.buf[s.from:s.to], want)
				}
				if b, _ := c.space(); b != ',' && b != ']' {
					t.Fatalf("size %d one %v: after value %d: %q", size, one, i, b)
				}
				c.pos++
			}
		}
	}
}
