package sign

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gowebpki/jcs"
)

func testSigner(t *testing.T) *Signer {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return NewSigner(ed25519.NewKeyFromSeed(seed))
}

type result struct {
	Kind    string         `json:"kind"`
	Records int            `json:"records"`
	Line    string         `json:"verdict_line"`
	Factors map[string]any `json:"factors"`
}

func sample() result {
	return result{Kind: "precheck_result", Records: 12, Line: "MEMORY SCOPE-HYGIENE — records: 12 · <&>",
		Factors: map[string]any{"b": map[string]any{"status": "NOT ASSESSABLE"}, "a": []int{3, 1}}}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	s := testSigner(t)
	doc, err := s.Sign(sample())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Verify(doc, s.Public())
	if err != nil {
		t.Fatalf("Verify: %v\n%s", err, doc)
	}
	if b.KeyID != s.KeyID() || b.Alg != Alg {
		t.Fatalf("block = %+v", b)
	}
	// The signed document is JCS: keys sorted, no whitespace, signature member present.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil || m[Member] == nil {
		t.Fatalf("document: %v %s", err, doc)
	}
	// Deterministic (Ed25519 is deterministic).
	doc2, _ := s.Sign(sample())
	if string(doc) != string(doc2) {
		t.Fatal("signing is not deterministic")
	}
}

func TestVerifyFailsOnEveryChangedByte(t *testing.T) {
	s := testSigner(t)
	doc, err := s.Sign(sample())
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc {
		for _, delta := range []byte{1, 0x20} {
			mod := append([]byte(nil), doc...)
			mod[i] ^= delta
			if _, err := Verify(mod, s.Public()); err == nil {
				t.Fatalf("byte %d ^ %#x still verifies", i, delta)
			}
		}
	}
	cases := map[string][]byte{
		"trailing newline": append(append([]byte(nil), doc...), '\n'),
		"leading space":    append([]byte(" "), doc...),
		"truncated":        doc[:len(doc)-1],
	}
	for name, mod := range cases {
		if _, err := Verify(mod, s.Public()); err == nil {
			t.Errorf("%s: still verifies", name)
		}
	}
}

func TestVerifyErrors(t *testing.T) {
	s := testSigner(t)
	other := NewSigner(ed25519.NewKeyFromSeed(make([]byte, 32)))
	doc, _ := s.Sign(sample())
	unsigned, _ := Canonical(sample())
	forged, _ := other.Sign(sample())
	// Same key id as s but a signature from another key.
	var m map[string]any
	json.Unmarshal(forged, &m)
	m[Member].(map[string]any)["key_id"] = s.KeyID()
	swapped, _ := Canonical(m)
	tests := []struct {
		name string
		doc  []byte
		want error
	}{
		{"not json", []byte("nope"), ErrNotJSON},
		{"array", []byte("[1]"), ErrNotJSON},
		{"pretty printed", []byte("{\n \"a\": 1}"), ErrNotCanonical},
		{"duplicate member", []byte(`{"a":1,"a":1}`), ErrNotCanonical},
		{"unsigned", unsigned, ErrUnsigned},
		{"other key", doc, nil},
		{"wrong key id", forged, ErrUnknownKey},
		{"forged value", swapped, ErrBadSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(tc.doc, s.Public())
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if _, err := Verify(tc.doc, other.Public()); !errors.Is(err, ErrUnknownKey) {
					t.Fatalf("Verify under another key: %v, want ErrUnknownKey", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSignRefusesExistingSignatureMember(t *testing.T) {
	if _, err := testSigner(t).Sign(map[string]any{"signature": 1}); err == nil {
		t.Fatal("Sign accepted a result with a signature member")
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "var", "signing-key.pem")
	var wg sync.WaitGroup
	ids := make([]string, 8)
	created := make([]bool, 8)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s, c, err := LoadOrCreateKey(path)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i], created[i] = s.KeyID(), c
		}(i)
	}
	wg.Wait()
	n := 0
	for i := range ids {
		if ids[i] != ids[0] {
			t.Fatalf("concurrent first runs disagree on the key: %v", ids)
		}
		if created[i] {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d runs report creating the key, want 1", n)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", st.Mode().Perm())
	}
	s, c, err := LoadOrCreateKey(path)
	if err != nil || c || s.KeyID() != ids[0] {
		t.Fatalf("second run: %v created=%v id=%s", err, c, s.KeyID())
	}
}

func TestParsePublicKey(t *testing.T) {
	s := testSigner(t)
	dir := t.TempDir()
	pubPEM, err := WritePublicPEM(s.Public())
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "k.pem")
	if _, _, err := LoadOrCreateKey(keyPath); err != nil {
		t.Fatal(err)
	}
	priv, _ := os.ReadFile(keyPath)
	fromPriv, _ := LoadKey(keyPath)
	crit, _ := json.Marshal(map[string]any{"criteria_id": "x", CriteriaKeyMember: Publish(s.Public())})
	badID := Publish(s.Public())
	badID.KeyID = "ed25519:0000000000000000"
	critBad, _ := json.Marshal(map[string]any{CriteriaKeyMember: badID})
	tests := []struct {
		name string
		in   []byte
		want ed25519.PublicKey
	}{
		{"criteria document", crit, s.Public()},
		{"public PEM", pubPEM, s.Public()},
		{"private PEM", priv, fromPriv.Public()},
		{"criteria without key", []byte(`{"criteria_id":"x"}`), nil},
		{"criteria with mismatched key id", critBad, nil},
		{"garbage", []byte("garbage"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePublicKey(tc.in)
			if tc.want == nil {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("got %x, %v", got, err)
			}
		})
	}
}

// signByRecanonicalizing is the reference construction of a signed document: canonicalize the
// result, sign it, add the block and canonicalize the whole again.
func signByRecanonicalizing(t *testing.T, priv ed25519.PrivateKey, v any) []byte {
	t.Helper()
	body, err := Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		t.Fatal(err)
	}
	block, _ := json.Marshal(Block{Alg: Alg, KeyID: KeyID(priv.Public().(ed25519.PublicKey)),
		Value: base64.StdEncoding.EncodeToString(ed25519.Sign(priv, body))})
	members[Member] = block
	out, err := Canonical(members)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSignSplicesCanonicalBytes: the spliced signature gives the bytes of the reference
// construction, wherever "signature" sorts among the members (first, last, between, next to
// names that sort differently in UTF-16 than in UTF-8), and a result that already has a
// signature member is refused.
func TestSignSplicesCanonicalBytes(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	s := NewSigner(priv)
	for name, v := range map[string]any{
		"empty":        map[string]any{},
		"only before":  map[string]any{"a": 1, "kind": "x"},
		"only after":   map[string]any{"z": []any{1, "<&>"}, "t": map[string]any{"signature": 1}},
		"between":      map[string]any{"records": 3, "service": "s", "sig": true, "signaturf": nil, "verdict_line": "v"},
		"prefix":       map[string]any{"signatur": 1, "signatures": 2},
		"non-ascii":    map[string]any{"\U0001F600": 1, "\uFF61": 2, "é": 3, "s": "\u2028"},
		"tricky":       map[string]any{"a\"b": "},\"{[", "s": "x\\\"y", "sh": []any{1, map[string]any{"a": "]"}}, "t": -1.5, "u": nil},
		"escaped name": map[string]any{"a": 1, "sig\u0001": 2, "z": 3},
		"report":       map[string]any{"kind": "audit_report", "factors": map[string]any{"b": 1, "a": 2}, "check_end": "2026-01-01T00:00:00Z"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := s.Sign(v)
			if err != nil {
				t.Fatal(err)
			}
			if want := signByRecanonicalizing(t, priv, v); !bytes.Equal(got, want) {
				t.Fatalf("spliced:\n%s\nreference:\n%s", got, want)
			}
			if _, err := Verify(got, priv.Public().(ed25519.PublicKey)); err != nil {
				t.Fatalf("verify: %v", err)
			}
		})
	}
	if _, err := s.Sign(map[string]any{"a": 1, "signature": "forged"}); err == nil {
		t.Fatal("a result with a signature member was signed")
	}
}

// TestCanonicalIsJCS: the signer's canonical gives the bytes of the JCS reference implementation
// that Canonical and Verify use, for the escapes, orders and numbers a result may hold.
func TestCanonicalIsJCS(t *testing.T) {
	for name, v := range map[string]any{
		"html and controls": map[string]any{"s": "<a href='x'>&amp;</a>\u0001\t\"\\/", "u": "\u2028\u2029\u007f\u00e9"},
		"utf16 order":       map[string]any{"\U0001F600": 1, "\uFF61": 2, "\u00e9": 3, "e": 4, "": 5},
		"numbers":           map[string]any{"a": []any{0, -1, 1e21, 1.5, 123456789012, 0.000001, 1e-7}},
		"nested":            map[string]any{"b": map[string]any{"z": nil, "a": []any{true, false, map[string]any{}}}},
	} {
		t.Run(name, func(t *testing.T) {
			raw, _ := json.Marshal(v)
			want, err := jcs.Transform(raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := canonical(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("canonical:\n%s\njcs:\n%s", got, want)
			}
		})
	}
}

// canonicaler writes its own canonical form and the signature's place (as the audit report does)
// and remembers the buffer it was given. Its place comes from the decoding search, so that the
// splice is checked against a place found another way.
type canonicaler struct {
	v     any
	given *byte
}

func (c *canonicaler) AppendCanonicalPlaced(dst []byte, member string) ([]byte, int) {
	if cap(dst) > 0 {
		c.given = &dst[:1][0]
	}
	raw, _ := json.Marshal(c.v)
	out, _ := jcs.Transform(raw)
	at, err := signatureOffsetDecoded(out)
	if err != nil || member != Member {
		return append(dst, out...), -1
	}
	return append(dst, out...), len(dst) + at
}

// TestSignCanonicalerInPlace: a result that writes its own canonical form is signed into the
// buffer it was written in once the size hint has seen one like it, and gives the reference bytes
// whatever the hint (none, enough, too small), the member's place, and the goroutine that signs.
func TestSignCanonicalerInPlace(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	s := NewSigner(priv)
	canonicalHint.Store(0) // as at the start of a process
	long := map[string]any{"kind": "audit_report", "a": bytes.Repeat([]byte("x"), 5000), "z": 1}
	for i, v := range []any{
		map[string]any{"b": 1},                 // no hint yet
		map[string]any{"b": 2},                 // the hint fits: in place
		long,                                   // the hint is too small: regrown
		long,                                   // in place again
		map[string]any{},                       // the member alone
		map[string]any{"a": 1, "signaturf": 2}, // between two members
	} {
		c := &canonicaler{v: v}
		u, err := s.Canonicalize(c)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan []byte)
		go func() { done <- u.Sign() }()
		got := <-done
		if want := signByRecanonicalizing(t, priv, v); !bytes.Equal(got, want) {
			t.Fatalf("%d: spliced:\n%s\nreference:\n%s", i, got, want)
		}
		if inPlace := c.given == &got[0]; (i == 1 || i == 3 || i == 4) != inPlace {
			t.Fatalf("%d: signed in place %v", i, inPlace)
		}
	}
}

// TestSignCanonicalerWithSignatureMemberPanics: a result type that writes a member named
// "signature" is a defect of that type; Sign refuses it loudly rather than sign two members.
func TestSignCanonicalerWithSignatureMemberPanics(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	u, err := NewSigner(priv).Canonicalize(&canonicaler{v: map[string]any{"a": 1, "signature": 2}})
	if err != nil {
		t.Fatal(err) // a Canonicaler is only written when it is signed
	}
	defer func() {
		if recover() == nil {
			t.Fatal("signed a result that has a signature member")
		}
	}()
	u.Sign()
}

// TestSignIntoRecycledBuffer: a document given back (Recycle) may be the buffer the next report
// is written and signed in; what it held never shows in the next document, whether that one is
// shorter or longer.
func TestSignIntoRecycledBuffer(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	s := NewSigner(priv)
	long := map[string]any{"kind": "audit_report", "a": bytes.Repeat([]byte("x"), 5000), "z": 1}
	for i, v := range []any{long, map[string]any{"b": 1}, long, map[string]any{"a": 1, "signaturf": 2}, long} {
		u, err := s.Canonicalize(&canonicaler{v: v})
		if err != nil {
			t.Fatal(err)
		}
		got := u.Sign()
		if want := signByRecanonicalizing(t, priv, v); !bytes.Equal(got, want) {
			t.Fatalf("%d: signed in a recycled buffer:\n%s\nreference:\n%s", i, got, want)
		}
		// Written out: the buffer goes back with stale bytes in all of it.
		full := got[:cap(got)]
		for j := range full {
			full[j] = '!'
		}
		Recycle(got)
		if k := bytes.IndexFunc(full, func(r rune) bool { return r != 0 }); k >= 0 {
			t.Fatalf("%d: a recycled buffer keeps the last document's bytes (at %d)", i, k)
		}
	}
	Recycle(nil) // nothing to give back
}
