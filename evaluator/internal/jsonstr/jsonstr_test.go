package jsonstr

import (
	"bytes"
	"testing"
)

// plainRef is Plain byte by byte: what the word-at-a-time loop must find.
func plainRef(s string, j int) int {
	for j < len(s) && s[j] >= 0x20 && s[j] != '"' && s[j] != '\\' {
		j++
	}
	return j
}

var seeds = []string{
	``, `"`, `abc"`, `abcdefgh"`, `abcdefghijklmnop"`, "abcdefg\x01hij\"", `abc\n"`, `\u00e9\ud83d\ude00"`,
	`\ud83d"`, `\ude00"`, `\ud83d\u0041"`, `\x"`, `\u12"`, `\`, `abc`, "\xff\xfe\"", "\u00e9\u2028 plain \"",
	`a\"b\\c\/d\be\ff\ng\rh\ti"`, "\x7f\x80\x1f\"",
}

// check holds Plain and PlainName to plainRef at every start (and PlainName to Fingerprint), Skip to Unescape (verdict and end) and
// Fingerprint to equality (equal strings, equal fingerprints; short strings, the converse too).
func check(t *testing.T, s string) {
	t.Helper()
	for j := 0; j <= len(s); j++ {
		if got, want := Plain(s, j), plainRef(s, j); got != want {
			t.Fatalf("Plain(%q, %d) = %d, want %d", s, j, got, want)
		}
		if end, fp := PlainName(s, j); end != plainRef(s, j) || fp != Fingerprint(s[j:end]) {
			t.Fatalf("PlainName(%q, %d) = %d %x, want %d %x", s, j, end, fp, plainRef(s, j), Fingerprint(s[j:plainRef(s, j)]))
		}
		_, wantNext, wantOK := Unescape(nil, s, j)
		next, ok := Skip(s, j)
		if ok != wantOK || (ok && next != wantNext) {
			t.Fatalf("Skip(%q, %d) = %d %v, Unescape %d %v", s, j, next, ok, wantNext, wantOK)
		}
	}
	for i := 0; i <= len(s); i++ {
		a, b := s[:i], s[i:]
		fa, fb := Fingerprint(a), Fingerprint(b)
		if a == b && fa != fb {
			t.Fatalf("Fingerprint(%q) differs from itself", a)
		}
		if len(a) < 8 && len(b) < 8 && a != b && fa == fb {
			t.Fatalf("short strings %q and %q share a fingerprint", a, b)
		}
		if fa != Fingerprint(string(bytes.Clone([]byte(a)))) {
			t.Fatalf("Fingerprint(%q) depends on where the string is", a)
		}
	}
}

func TestPlainSkipFingerprint(t *testing.T) {
	for _, s := range seeds {
		check(t, s)
	}
}

// FuzzPlainSkipFingerprint holds Plain, Skip and Fingerprint to their byte-by-byte references on
// arbitrary bytes.
func FuzzPlainSkipFingerprint(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { check(t, string(b)) })
}
