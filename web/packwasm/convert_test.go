package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

const canary = "canary-pelican-4471"

// TestConvertSubmissionHashOnly: the submission form leaves with content_hash only, its own
// family and variant, no record_class it did not carry, and its manifest's content keys hashed.
func TestConvertSubmissionHashOnly(t *testing.T) {
	in := `{"family":"mem0","form":"full_text","variant":"oss","manifest":{"global_content_keys":["` + canary + ` key"],"declared_scope_keys":["user_id"]},` +
		`"records":[{"id":"r1","content_text":"` + canary + `","user_id":"alice","metadata":{"note":"` + canary + `","shared":true}},` +
		`{"id":"r2","content_text":"` + canary + `","user_id":"bob","record_class":"memory"}]}`
	p, err := convert(SourceSubmission, "export.json", []byte(in), true)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(p.Body, []byte(canary)) || bytes.Contains(p.Body, []byte("content_text")) {
		t.Fatalf("content left in the hash-only body: %s", p.Body)
	}
	var got pack.Submission
	if err := json.Unmarshal(p.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Family != "mem0" || got.Variant != "oss" || got.Form != pack.FormHashOnly || p.Records != 2 {
		t.Fatalf("family %q variant %q form %q records %d", got.Family, got.Variant, got.Form, p.Records)
	}
	if _, ok := got.Records[0]["record_class"]; ok {
		t.Fatal("record_class added to a record that carried none")
	}
	if got.Records[1]["record_class"] != "memory" {
		t.Fatal("record_class the record carried was lost")
	}
	if got.Records[0]["content_hash"] != pack.HashContent(canary) {
		t.Fatalf("content_hash %v", got.Records[0]["content_hash"])
	}
	if md, _ := got.Records[0]["metadata"].(map[string]any); len(md) != 1 || md["shared"] != true {
		t.Fatalf("metadata not reduced to the markers: %v", md)
	}
	if got.Manifest == nil || len(got.Manifest.GlobalContentKeys) != 1 || got.Manifest.GlobalContentKeys[0] != pack.HashContent(canary+" key") {
		t.Fatalf("manifest content keys not hashed: %+v", got.Manifest)
	}
	if got.Manifest.DeclaredScopeKeys == nil || strings.Join(*got.Manifest.DeclaredScopeKeys, ",") != "user_id" {
		t.Fatal("declared_scope_keys lost")
	}
}

// TestConvertGenericMatchesClaimsPath: a generic submission is exactly pack's claim path.
func TestConvertGenericMatchesClaimsPath(t *testing.T) {
	in := []byte(`{"family":"generic","form":"full_text","records":[{"id":"c1","content_text":"` + canary + `","record_class":"claim","user":"u1"}]}`)
	p, err := convert(SourceSubmission, "sub.json", in, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pack.Pack(pack.Inputs{Records: []pack.File{{Name: "sub.json", Data: in}}}, pack.Options{Source: pack.ClaimsJSONL, HashOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := res.Submission.Marshal()
	if !bytes.Equal(p.Body, want) {
		t.Fatalf("page body differs from pack's claim path:\n%s\n%s", p.Body, want)
	}
}

// TestConvertRefusesQuietly: what pack cannot carry is refused with a message free of content.
func TestConvertRefusesQuietly(t *testing.T) {
	for name, in := range map[string]string{
		"manifest_member": `{"family":"mem0","form":"full_text","manifest":{"` + canary + `":1},"records":[{"id":"r1","content_text":"x"}]}`,
		"not_json":        `{"family":"` + canary,
		"no_records":      `{"family":"mem0","form":"full_text"}`,
		"no_text":         `{"family":"mem0","form":"full_text","records":[{"id":"r1","note":"` + canary + `"}]}`,
		"manifest_type":   `{"family":"mem0","form":"full_text","manifest":{"global_scopes":"` + canary + `"},"records":[{"id":"r1","content_text":"x"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := convert(SourceSubmission, "e.json", []byte(in), true)
			if err == nil {
				t.Fatal("converted")
			}
			if strings.Contains(err.Error(), canary) {
				t.Fatalf("error carries content: %v", err)
			}
		})
	}
}

// TestSignedMessage: the message and signature handed to WebCrypto are what sign.Verify checks,
// and a changed byte is refused before any key is used.
func TestSignedMessage(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := sign.NewSigner(priv)
	doc, err := s.Sign(map[string]any{"kind": "audit_report", "live": 3, "verdict_line": "MEMORY SCOPE-HYGIENE"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := signedMessage(doc)
	if err != nil {
		t.Fatal(err)
	}
	if c.KeyID != s.KeyID() || !ed25519.Verify(s.Public(), c.Message, c.Signature) {
		t.Fatal("message or signature not the signed ones")
	}
	if bytes.Contains(c.Message, []byte(`"signature"`)) {
		t.Fatal("message carries the signature member")
	}
	tampered := bytes.Replace(doc, []byte(`"live":3`), []byte(`"live":4`), 1)
	if c2, err := signedMessage(tampered); err == nil && ed25519.Verify(s.Public(), c2.Message, c2.Signature) {
		t.Fatal("a changed byte still verifies")
	}
	spaced := bytes.Replace(doc, []byte(`,`), []byte(`, `), 1)
	if _, err := signedMessage(spaced); !errors.Is(err, sign.ErrNotCanonical) {
		t.Fatalf("non-canonical bytes: %v", err)
	}
	crit, _ := json.Marshal(map[string]any{"report_signing_key": sign.Publish(s.Public())})
	pub, id, err := publishedKey(crit)
	if err != nil || id != s.KeyID() || !bytes.Equal(pub, s.Public()) {
		t.Fatalf("published key: %v %s", err, id)
	}
	bad := sign.Publish(s.Public())
	bad.KeyID = "ed25519:0000000000000000"
	crit, _ = json.Marshal(map[string]any{"report_signing_key": bad})
	if _, _, err := publishedKey(crit); err == nil {
		t.Fatal("a key id that does not match its key was accepted")
	}
}
