package jsonlex

import (
	"strconv"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonstr"
	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
)

// The reference for Reader is the tree decoder both engines used before it
// (evaluator/internal/jsontree, itself held to jsontext's strict decoder): on every input the
// Reader must accept exactly what Decode accepts, and read the same values in the same order.

const testDepth = 8

// dumpTree writes a decoded value in a form both sides can write: kinds, strings quoted, members
// in text order.
func dumpTree(b *strings.Builder, v *jsontree.Value) {
	switch v.Kind() {
	case jsontree.Null:
		b.WriteString("n")
	case jsontree.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case jsontree.String:
		b.WriteString(strconv.Quote(v.Str()))
	case jsontree.Number:
		b.WriteString("#" + v.Str())
	case jsontree.Array:
		b.WriteByte('[')
		arr := v.Arr()
		for i := range arr {
			dumpTree(b, &arr[i])
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case jsontree.Object:
		b.WriteByte('{')
		for _, m := range v.Obj() {
			b.WriteString(strconv.Quote(m.Name) + ":")
			dumpTree(b, &m.Val)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	}
}

// dumpReader reads one value as dumpTree writes it.
func dumpReader(b *strings.Builder, r *Reader) {
	switch r.Peek() {
	case Null:
		r.Null()
		b.WriteString("n")
	case Bool:
		b.WriteString(strconv.FormatBool(r.Bool()))
	case String:
		b.WriteString(strconv.Quote(r.Str()))
	case Number:
		b.WriteString("#" + r.Num())
	case Array:
		b.WriteByte('[')
		for r.Array(); r.More(); {
			dumpReader(b, r)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for r.Object(); ; {
			name, ok := r.Member()
			if !ok {
				break
			}
			b.WriteString(strconv.Quote(name) + ":")
			dumpReader(b, r)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		r.fail()
	}
}

// compare fails t when the Reader and the tree decoder disagree on body, in verdict or values;
// skip also reads it with Skip, which must give the same verdict.
func compare(t *testing.T, r *Reader, body []byte) {
	t.Helper()
	var slabs jsontree.Slabs
	v, err := jsontree.Decode(body, jsontree.Options{MaxDepth: testDepth}, &slabs)
	var want strings.Builder
	if err == nil {
		dumpTree(&want, &v)
	}
	r.Reset(body, testDepth)
	var got strings.Builder
	dumpReader(&got, r)
	ok := r.Done()
	if ok != (err == nil) {
		t.Fatalf("%q: reader accepts %v, decoder %v", body, ok, err == nil)
	}
	if ok && got.String() != want.String() {
		t.Fatalf("%q: reader read %s, decoder %s", body, got.String(), want.String())
	}
	r.Reset(body, testDepth)
	r.Skip()
	if r.Done() != ok {
		t.Fatalf("%q: Skip accepts %v, decoder %v", body, !ok, ok)
	}
}

var cases = []string{
	``, ` `, `0`, `-0`, `01`, `-`, `1.`, `1.5e`, `1e+5`, `1E-5`, `-12.5e10`, `.5`, `+1`,
	`"a"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`, `"\x"`, `"a` + "\x01" + `"`,
	`"\/\b\f\n\r\t\\\""`, `"\u12"`, `"\uZZZZ"`, `"abc`, `"\`,
	`true`, `false`, `null`, `tru`, `nul`, `nulll`, `truex`,
	`[]`, `[1,]`, `[,1]`, `[1 2]`, `[1,2]`, `[[[]]]`, ` [ 1 , [ ] ] `, `[`, `]`, `[1]]`,
	`{}`, `{"a":1}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a" : 1 , "b" : [ ] }`, `{"a"}`, `{"a":}`,
	`{a:1}`, `{"a":1,}`, `{,"a":1}`, `{"a":1}{}`, `{"a":1} x`, `{"a":{"a":{"a":1}}}`,
	`[[[[[[[[1]]]]]]]]`, `[[[[[[[[[1]]]]]]]]]`, `{"a":[[[[[[[{}]]]]]]]}`, "\xef\xbb\xbf{}", "{\"a\":\"\xff\"}",
	"\t\n\r {}\n", "\v{}",
	`{"a":{"a":1,"b":2},"b":{"b":1},"a":0}`, `{"k":{"k":{"k":1}},"j":1,"k":2}`, `{"a":{"b":{}},"b":[{"a":1,"a":2}]}`,
	`{"abcdefghij":1,"abcdefghiJ":2,"abcdefghij":3}`, `{"abcdefgh_1234567":1,"abcdefgh_7654321":2,"abcdefgh_1234567":3}`,
	`{"a\u0062":1,"ab":2}`, `["a\tb", {"\t":"\u00e9"}, "\ud83d\ude00x"]`, `[1,{"a":[true,false,null,-0.5e3]},"x"] `,
}

func TestReaderMatchesDecoder(t *testing.T) {
	var r Reader
	for _, c := range cases {
		compare(t, &r, []byte(c))
	}
	// Objects past the scan limit index their names; a duplicate far apart is still found.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 40; i++ {
		b.WriteString(`"k` + strconv.Itoa(i) + `":{"x":1,"y":[1,{"z":2}]},`)
	}
	big := b.String()
	compare(t, &r, []byte(big+`"end":0}`))
	compare(t, &r, []byte(big+`"k3":0}`))
	compare(t, &r, []byte(`[`+big+`"k39":0},`+big+`"k0":0}]`))
	compare(t, &r, []byte(`[`+big+`"end":0},`+big+`"end":0}]`))
}

// FuzzReaderMatchesDecoder holds the Reader to the tree decoder on arbitrary bytes.
func FuzzReaderMatchesDecoder(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{"format":"mutation-log","events":[{"seq":1,"op":"write","key":{"scope":{"t":"a"},"name":"k"},"version":0}]}`))
	var r Reader
	f.Fuzz(func(t *testing.T, body []byte) { compare(t, &r, body) })
}

// TestMemberFingerprint holds MemberFingerprint's fingerprint to jsonstr.Fingerprint of the name
// it returns, escaped names and names of every length around the eight-byte words included: a
// caller that looks a name up by it must find exactly the names equal to it.
func TestMemberFingerprint(t *testing.T) {
	names := []string{"", "a", "id", "abcdefg", "abcdefgh", "abcdefghi", "episode_group_ids",
		"endpoint_group_ids", `a\u0062`, `\u00e9t\u00e9`, `long_name_with_an_escape\n_in_it`, `\"q\"`}
	var r Reader
	for _, raw := range names {
		r.Reset([]byte(`{"`+raw+`":1}`), testDepth)
		r.Object()
		name, fp, ok := r.MemberFingerprint()
		if !ok {
			t.Fatalf("%q: not read", raw)
		}
		if want := jsonstr.Fingerprint(name); fp != want {
			t.Errorf("%q: fingerprint %#x, jsonstr.Fingerprint %#x", raw, fp, want)
		}
	}
}
