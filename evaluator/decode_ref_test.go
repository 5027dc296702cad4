package evaluator

import (
	"bytes"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The reference for decode: the jsontext decoder in its strict default (duplicate names and
// invalid UTF-8 or lone surrogates refused), with the R-3 depth limit and the byte-order-mark rule.
// decode must accept exactly what it accepts, and read the same values.

// refDecode parses a request body under R-3: UTF-8 JSON text without a byte-order mark, no duplicate
// member names, no escape decoding to a lone surrogate, nesting at most maxDepth levels (the
// top-level value is level 1).
func refDecode(body []byte, maxDepth int) (jval, error) {
	if !utf8.Valid(body) || bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
		return jval{}, errNotExport
	}
	d := jsontext.NewDecoder(bytes.NewReader(body))
	v, err := refReadValue(d, 1, maxDepth)
	if err != nil {
		return jval{}, errNotExport
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return jval{}, errNotExport
	}
	return v, nil
}

// refReadValue reads one value whose containers, if it is one, sit at the given level. Depth counts
// arrays and objects only: a scalar adds no level.
func refReadValue(d *jsontext.Decoder, level, maxDepth int) (jval, error) {
	t, err := d.ReadToken()
	if err != nil {
		return jval{}, errNotExport
	}
	if k := t.Kind(); (k == '[' || k == '{') && level > maxDepth {
		return jval{}, errNotExport
	}
	switch t.Kind() {
	case 'n':
		return jval{kind: kNull}, nil
	case 't':
		return boolVal(true), nil
	case 'f':
		return boolVal(false), nil
	case '"':
		return textVal(kString, t.String()), nil
	case '0':
		return textVal(kNumber, t.String()), nil // the literal, for value identity only
	case '[':
		var arr []jval
		for d.PeekKind() != ']' {
			e, err := refReadValue(d, level+1, maxDepth)
			if err != nil {
				return jval{}, err
			}
			arr = append(arr, e)
		}
		if _, err := d.ReadToken(); err != nil {
			return jval{}, errNotExport
		}
		return arrVal(arr), nil
	case '{':
		var obj []member
		for d.PeekKind() != '}' {
			nt, err := d.ReadToken()
			if err != nil || nt.Kind() != '"' {
				return jval{}, errNotExport
			}
			name := nt.String() // the token is void after the next read
			e, err := refReadValue(d, level+1, maxDepth)
			if err != nil {
				return jval{}, err
			}
			obj = append(obj, member{name: name, val: e})
		}
		if _, err := d.ReadToken(); err != nil {
			return jval{}, errNotExport
		}
		return objVal(obj), nil
	}
	return jval{}, errNotExport
}

func decodeAgrees(t *testing.T, body []byte, depth int) {
	t.Helper()
	b := getBuffers()
	defer b.release()
	got, gotErr := decode(body, false, depth, b)
	want, wantErr := refDecode(body, depth)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("decode(%q): error %v, reference error %v", body, gotErr, wantErr)
	}
	if gotErr == nil && got.identity() != want.identity() {
		t.Fatalf("decode(%q) = %s, reference %s", body, got.identity(), want.identity())
	}
	// In place (the body handed over) it decodes to the same tree.
	b2 := getBuffers()
	defer b2.release()
	if inPlace, err := decode(body, true, depth, b2); (err == nil) != (gotErr == nil) || (err == nil && inPlace.identity() != got.identity()) {
		t.Fatalf("decode(%q) in place: %v, copied: %v", body, err, gotErr)
	}
	if gotErr == nil && got.kind == kObject && want.kind == kObject {
		g, w := got.obj(), want.obj()
		for i := range g { // member order and names exactly (identity sorts them)
			if g[i].name != w[i].name {
				t.Fatalf("decode(%q): member %d named %q, reference %q", body, i, g[i].name, w[i].name)
			}
		}
	}
}

var decodeSeeds = []string{
	`{}`, `[]`, ` {"a" : [1, -0, 0.5e+3, 1E-2, true, false, null, "x"]} `, `"s"`, `12`, `-`, `01`, `1.`, `1e`, `.5`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"\ud83d\ude00":"\u00e9\n\t\"\\\/\b\f\r"}`, `"\ud800"`, `"\udc00"`,
	`"\ud800\u0041"`, `"\ud800\udbff"`, `"\u12"`, `"\x"`, "\"a\tb\"", "\"\x01\"", `[1,]`, `{"a":1,}`, `{,}`, `[,1]`,
	`{"a" 1}`, `{"a":}`, `{1:2}`, `[1 2]`, `tru`, `nul`, `falsey`, `[[[]]]`, `[[[[]]]]`, `{"a":{"b":{"c":{}}}}`,
	`{"a":[{"b":[{"c":[]}]}]}`, "\xef\xbb\xbf{}", "{\"a\":\"\xff\"}", `[] []`, ``, ` `, `"unterminated`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k17":7,"k3":8}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":0,"k11":1,"k12":2,"k13":3,"k14":4,"k15":5,"k16":6,"k17":7,"k18":8}`,
	"[\u2028]", "\"\u2028\"", `"\u0000"`, `1.0e+400`, `-0.0E-0`,
}

// TestDecodeMatchesReference: decode and the jsontext reference agree on the seeds, at a depth
// limit that some of them cross.
func TestDecodeMatchesReference(t *testing.T) {
	for _, s := range decodeSeeds {
		decodeAgrees(t, []byte(s), 3)
		decodeAgrees(t, []byte(s), 64)
	}
}

// FuzzDecodeMatchesReference: decode and the jsontext reference agree on arbitrary bytes.
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		decodeAgrees(t, body, 3)
		decodeAgrees(t, body, 64)
	})
}
