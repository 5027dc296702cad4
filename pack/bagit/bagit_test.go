package bagit

import (
	"maps"
	"strings"
	"testing"
)

func sample(t *testing.T) map[string][]byte {
	t.Helper()
	b, err := Bag(map[string][]byte{"manifest.json": []byte(`{"a":1}`), "submission.json": []byte(`{"records":[]}`), "odd%name\nx": []byte("x")}, map[string]string{"Bagging-Date": "2026-12-01"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBagValidates(t *testing.T) {
	b := sample(t)
	if p := Validate(b); len(p) != 0 {
		t.Fatalf("a fresh bag: %v", p)
	}
	for _, name := range []string{Declaration, Manifest, TagManifest, BagInfo, "data/manifest.json"} {
		if _, ok := b[name]; !ok {
			t.Fatalf("%s missing", name)
		}
	}
	if string(b[Declaration]) != "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n" {
		t.Fatalf("declaration %q", b[Declaration])
	}
	if !strings.Contains(string(b[Manifest]), "data/odd%25name%0Ax") || !strings.Contains(string(b[BagInfo]), "Payload-Oxum: 22.3\n") {
		t.Fatalf("manifest %q info %q", b[Manifest], b[BagInfo])
	}
}

// Each RFC 8493 requirement the validator checks fails a bag that breaks it.
func TestValidateCatches(t *testing.T) {
	for name, c := range map[string]struct {
		mut  func(b map[string][]byte)
		want string
	}{
		"no declaration":      {func(b map[string][]byte) { delete(b, Declaration) }, "bagit.txt is missing"},
		"bad declaration":     {func(b map[string][]byte) { b[Declaration] = []byte("BagIt-Version: one\n") }, "two lines"},
		"bom":                 {func(b map[string][]byte) { b[Declaration] = append([]byte("\xef\xbb\xbf"), b[Declaration]...) }, "byte order mark"},
		"payload changed":     {func(b map[string][]byte) { b["data/manifest.json"] = []byte(`{"a":2}`) }, "checksum of \"data/manifest.json\""},
		"payload missing":     {func(b map[string][]byte) { delete(b, "data/submission.json") }, "listed and missing"},
		"payload unlisted":    {func(b map[string][]byte) { b["data/extra"] = []byte("e") }, "payload file \"data/extra\" is not listed"},
		"no payload manifest": {func(b map[string][]byte) { delete(b, Manifest) }, "no payload manifest"},
		"traversal": {func(b map[string][]byte) {
			b[Manifest] = append(b[Manifest], []byte(strings.Repeat("0", 64)+"  data/../../etc/passwd\n")...)
		}, "not a clean path"},
		"outside data": {func(b map[string][]byte) {
			b[Manifest] = append(b[Manifest], []byte(strings.Repeat("0", 64)+"  bagit.txt\n")...)
		}, "not under data/"},
		"tag changed": {func(b map[string][]byte) { b[BagInfo] = append(b[BagInfo], []byte("Contact-Name: x\n")...) }, "checksum of \"bag-info.txt\""},
		"bad line":    {func(b map[string][]byte) { b[Manifest] = append(b[Manifest], []byte("nothex data/x\n")...) }, "not CHECKSUM FILEPATH"},
		"oxum": {func(b map[string][]byte) {
			b[BagInfo] = []byte(strings.Replace(string(b[BagInfo]), "22.3", "21.3", 1))
		}, "Payload-Oxum"},
		"no payload": {func(b map[string][]byte) {
			for k := range b {
				if strings.HasPrefix(k, "data/") {
					delete(b, k)
				}
			}
		}, "data/ is missing"},
	} {
		b := maps.Clone(sample(t))
		c.mut(b)
		p := Validate(b)
		if !strings.Contains(strings.Join(p, "\n"), c.want) {
			t.Errorf("%s: %v", name, p)
		}
	}
}

// FuzzValidate: any bag-shaped input never panics the validator.
func FuzzValidate(f *testing.F) {
	f.Add([]byte("BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"), []byte("00  data/x\n"), []byte("x"), []byte("Payload-Oxum: 1.1\n"))
	f.Fuzz(func(t *testing.T, decl, man, payload, info []byte) {
		_ = Validate(map[string][]byte{Declaration: decl, Manifest: man, "data/x": payload, BagInfo: info, TagManifest: man})
	})
}
