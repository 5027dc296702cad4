package jsontree

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The reference for Decode: the jsontext decoder in its strict default (duplicate names and
// invalid UTF-8 or lone surrogates refused), with the depth limit and the byte-order-mark rule of
// R-3 and FE-R-3. It is what both engines decoded with before they shared this parser (the
// mutation-log engine token by token, exactly as below), so Decode must accept exactly what it
// accepts, and read the same values.

// refDecode parses a request body under R-3 and FE-R-3: UTF-8 JSON text without a byte-order mark, no duplicate
// member names, no escape decoding to a lone surrogate, nesting at most maxDepth levels (the
// top-level value is level 1).
func refDecode(body []byte, maxDepth int) (Value, error) {
	if !utf8.Valid(body) || bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
		return Value{}, ErrNotJSON
	}
	d := jsontext.NewDecoder(bytes.NewReader(body))
	v, err := refReadValue(d, 1, maxDepth)
	if err != nil {
		return Value{}, ErrNotJSON
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return Value{}, ErrNotJSON
	}
	return v, nil
}

// refReadValue reads one value whose containers, if it is one, sit at the given level. Depth counts
// arrays and objects only: a scalar adds no level.
func refReadValue(d *jsontext.Decoder, level, maxDepth int) (Value, error) {
	t, err := d.ReadToken()
	if err != nil {
		return Value{}, ErrNotJSON
	}
	if k := t.Kind(); (k == '[' || k == '{') && level > maxDepth {
		return Value{}, ErrNotJSON
	}
	switch t.Kind() {
	case 'n':
		return Value{kind: Null}, nil
	case 't':
		return boolVal(true), nil
	case 'f':
		return boolVal(false), nil
	case '"':
		return textVal(String, t.String()), nil
	case '0':
		return textVal(Number, t.String()), nil // the literal, for value identity only
	case '[':
		var arr []Value
		for d.PeekKind() != ']' {
			e, err := refReadValue(d, level+1, maxDepth)
			if err != nil {
				return Value{}, err
			}
			arr = append(arr, e)
		}
		if _, err := d.ReadToken(); err != nil {
			return Value{}, ErrNotJSON
		}
		return arrVal(arr), nil
	case '{':
		var obj []Member
		for d.PeekKind() != '}' {
			nt, err := d.ReadToken()
			if err != nil || nt.Kind() != '"' {
				return Value{}, ErrNotJSON
			}
			name := nt.String() // the token is void after the next read
			e, err := refReadValue(d, level+1, maxDepth)
			if err != nil {
				return Value{}, err
			}
			obj = append(obj, Member{Name: name, Val: e})
		}
		if _, err := d.ReadToken(); err != nil {
			return Value{}, ErrNotJSON
		}
		return objVal(obj), nil
	}
	return Value{}, ErrNotJSON
}

func decodeAgrees(t *testing.T, body []byte, depth int) {
	t.Helper()
	got, gotErr := Decode(body, Options{MaxDepth: depth}, &Slabs{})
	want, wantErr := refDecode(body, depth)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("Decode(%q): error %v, reference error %v", body, gotErr, wantErr)
	}
	if gotErr == nil && got.Identity() != want.Identity() {
		t.Fatalf("Decode(%q) = %s, reference %s", body, got.Identity(), want.Identity())
	}
	// In place (the body handed over) it decodes to the same tree.
	if inPlace, err := Decode(body, Options{MaxDepth: depth, Owned: true}, &Slabs{}); (err == nil) != (gotErr == nil) || (err == nil && inPlace.Identity() != got.Identity()) {
		t.Fatalf("Decode(%q) in place: %v, copied: %v", body, err, gotErr)
	}
	if gotErr == nil && got.kind == Object && want.kind == Object {
		g, w := got.Obj(), want.Obj()
		for i := range g { // member order and names exactly (identity sorts them)
			if g[i].Name != w[i].Name {
				t.Fatalf("Decode(%q): member %d named %q, reference %q", body, i, g[i].Name, w[i].Name)
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
	`{"a":{"a":1,"b":2},"b":{"b":1},"a":0}`, `{"k":{"k":{"k":1}},"j":1,"k":2}`, `{"a":{"b":{}},"b":[{"a":1,"a":2}]}`,
	`{"abcdefghij":1,"abcdefghiJ":2,"abcdefghij":3}`, `{"abcdefgh_1234567":1,"abcdefgh_7654321":2,"abcdefgh_1234567":3}`,
	bigObject(40, `"k3":0`), bigObject(40, `"end":0`), bigObject(40, `"k39":{"k39":1},"x":{"k0":[`+bigObject(33, `"k32":1`)+`]}`),
}

// bigObject is an object of n members past the duplicate scan, each holding an object, and then
// the members last (which may repeat a name).
func bigObject(n int, last string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `"k%d":{"x":1,"y":[1,{"z":2}]},`, i)
	}
	return b.String() + last + "}"
}

// TestDecodeMatchesReference: Decode and the jsontext reference agree on the seeds, at a depth
// limit that some of them cross.
func TestDecodeMatchesReference(t *testing.T) {
	for _, s := range decodeSeeds {
		decodeAgrees(t, []byte(s), 3)
		decodeAgrees(t, []byte(s), 64)
	}
}

// FuzzDecodeMatchesReference: Decode and the jsontext reference agree on arbitrary bytes.
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		decodeAgrees(t, body, 3)
		decodeAgrees(t, body, 64)
	})
}

// TestDepthAtTheCap: both rule sets cap nesting at 64 with the top-level container at level 1 and
// scalars adding none (R-51, FE-R-3); a container at level 65 is refused, a scalar inside level 64
// is not. The reference agrees at the boundary, for arrays, objects and a mix.
func TestDepthAtTheCap(t *testing.T) {
	nest := func(levels int, open, close, inner string) []byte {
		return []byte(strings.Repeat(open, levels) + inner + strings.Repeat(close, levels))
	}
	for _, c := range []struct {
		body []byte
		ok   bool
	}{
		{nest(64, "[", "]", ""), true},
		{nest(64, "[", "]", `"s"`), true},
		{nest(65, "[", "]", ""), false},
		{nest(64, `{"a":`, "}", "1"), true},
		{nest(63, `{"a":`, "}", "{}"), true},
		{nest(64, `{"a":`, "}", "{}"), false},
		{nest(32, `[{"a":`, "}]", "null"), true},
		{nest(32, `[{"a":`, "}]", "[]"), false},
	} {
		_, err := Decode(c.body, Options{MaxDepth: 64}, &Slabs{})
		if (err == nil) != c.ok {
			t.Errorf("Decode(%.40q...) at depth 64: error %v, want accepted %v", c.body, err, c.ok)
		}
		decodeAgrees(t, c.body, 64)
	}
}

// TestSlabsReused: a tree decoded into reset slabs reads the same as one decoded into fresh ones,
// and after Reset the slabs hold a whole tree in one slab each.
func TestSlabsReused(t *testing.T) {
	var s Slabs
	var b strings.Builder
	b.WriteString(`{"xs":[`)
	for i := range 3000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"i":%d,"s":"v\u00e9%d"}`, i, i)
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	first, err := Decode(body, Options{MaxDepth: 64}, &s)
	if err != nil {
		t.Fatal(err)
	}
	want := first.Identity()
	s.Reset()
	grown := s.Bytes()
	for range 2 {
		v, err := Decode(body, Options{MaxDepth: 64}, &s)
		if err != nil || v.Identity() != want {
			t.Fatalf("after Reset: %v, tree differs: %v", err, v.Identity() != want)
		}
		s.Reset()
		if s.Bytes() != grown {
			t.Fatalf("slabs %d B after a second export, %d B after the first", s.Bytes(), grown)
		}
	}
}
