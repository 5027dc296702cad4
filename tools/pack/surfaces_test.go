package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// The broken and smaller findings of issue 24, one test each; every one fails on the code
// before the portability work.

// rewriteManifest decodes a package's manifest, lets mut change it, writes it back in canonical
// form and replaces the signature file with the explicit unsigned marker for the new bytes (the
// attacker's way to make an edited manifest self-consistent).
func rewriteManifest(t *testing.T, pkg string, mut func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pkg, mpp.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	dec.Decode(&m)
	mut(m)
	raw, _ := json.Marshal(m)
	mb, err := canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(pkg, mpp.ManifestName), mb)
	sig, _ := mpp.SignManifest(mb, nil)
	write(t, filepath.Join(pkg, mpp.SignatureName), sig)
}

// rewriteRecords lets mut change the record index's rows (id, class, source_file, location,
// source_sha256, record_sha256), writes it back and rewrites the manifest to list its new digest.
func rewriteRecords(t *testing.T, pkg string, mut func(row []any), more func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pkg, mpp.RecordIndexName))
	if err != nil {
		t.Fatal(err)
	}
	var ix map[string]any
	json.Unmarshal(b, &ix)
	for _, p := range ix["parts"].([]any) {
		for _, r := range p.(map[string]any)["rows"].([]any) {
			mut(r.([]any))
		}
	}
	nb, _ := json.Marshal(ix)
	write(t, filepath.Join(pkg, mpp.RecordIndexName), nb)
	rewriteManifest(t, pkg, func(m map[string]any) {
		for _, mm := range m["members"].([]any) {
			if mm.(map[string]any)["path"] == mpp.RecordIndexName {
				mm.(map[string]any)["sha256"] = pack.SHA256Hex(nb)
				mm.(map[string]any)["bytes"] = len(nb)
			}
		}
		if more != nil {
			more(m)
		}
	})
}

// TestStrippedSignatureFails is finding 1 (High): with --key, an unsigned marker (even over a
// manifest rewritten to match a changed record), a MAC, another key's signature or a broken one
// fail, each state named.
func TestStrippedSignatureFails(t *testing.T) {
	dir := t.TempDir()
	opPriv, opPub, _ := keyPair(t, dir, "operator")
	_, _, other := keyPair(t, dir, "other")
	mk := func(name string) string {
		pkg := filepath.Join(dir, name)
		if code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys", "tenant", "--package", pkg, "--sign-key", opPriv, td+"claims/claims.jsonl"); code != 0 {
			t.Fatal(stderr)
		}
		return pkg
	}
	sigFile := func(pkg string, s mpp.Signature) {
		b, _ := json.Marshal(s)
		write(t, filepath.Join(pkg, mpp.SignatureName), b)
	}
	mbOf := func(pkg string) []byte { b, _ := os.ReadFile(filepath.Join(pkg, mpp.ManifestName)); return b }
	cases := map[string]struct {
		tamper func(pkg string)
		want   string
	}{
		"stripped": {func(p string) {
			s, _ := mpp.SignManifest(mbOf(p), nil)
			write(t, filepath.Join(p, mpp.SignatureName), s)
		}, "signature state unsigned"},
		"stripped after a record change": {func(p string) {
			flip(t, filepath.Join(p, "submission.json"), `"tenant":"`, `"tenant":"x`)
			body, _ := os.ReadFile(filepath.Join(p, "submission.json"))
			recs, _ := partRecordsForTest(body)
			i := 0
			rewriteRecords(t, p, func(row []any) {
				c, _ := canonical(recs[i])
				row[5] = pack.SHA256Hex(c)
				i++
			}, func(m map[string]any) {
				for _, mm := range m["members"].([]any) {
					if mm.(map[string]any)["path"] == "submission.json" {
						mm.(map[string]any)["sha256"] = pack.SHA256Hex(body)
						mm.(map[string]any)["bytes"] = len(body)
					}
				}
			})
		}, "signature state unsigned"},
		"mac only": {func(p string) {
			sigFile(p, mpp.Signature{Manifest: mpp.ManifestName, ManifestSHA256: pack.SHA256Hex(mbOf(p)), Alg: "HMAC-SHA256", KeyID: "hmac:1", Value: base64.StdEncoding.EncodeToString(make([]byte, 32))})
		}, "signature state mac_only"},
		"unknown key": {func(p string) {
			mb := mbOf(p)
			sigFile(p, mpp.Signature{Manifest: mpp.ManifestName, ManifestSHA256: pack.SHA256Hex(mb), Alg: "Ed25519", KeyID: mpp.KeyID(other.Public().(ed25519.PublicKey)), Value: base64.StdEncoding.EncodeToString(ed25519.Sign(other, mb))})
		}, "signature state unknown_key"},
		"invalid": {func(p string) {
			flip(t, filepath.Join(p, mpp.SignatureName), `"value":"`, `"value":"AAAA`)
		}, "signature state invalid"},
	}
	for name, c := range cases {
		pkg := mk(strings.ReplaceAll(name, " ", "-"))
		c.tamper(pkg)
		code, out := verifyOut(t, "--key", opPub, pkg)
		if code != 1 || !strings.HasPrefix(out, "FAIL ") || !strings.Contains(out, c.want) {
			t.Errorf("%s: %d %s", name, code, out)
		}
	}
	// untouched: verified
	if code, out := verifyOut(t, "--key", opPub, mk("clean")); code != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("clean: %d %s", code, out)
	}
}

func partRecordsForTest(body []byte) ([]json.RawMessage, error) {
	var top struct{ Records []json.RawMessage }
	err := json.Unmarshal(body, &top)
	return top.Records, err
}

// TestReportOfAnotherExportNotBound is finding 2 (High): a signed report of another 3-record
// export matches the package's counts and family, and is never said to be "made from" it.
func TestReportOfAnotherExportNotBound(t *testing.T) {
	dir := t.TempDir()
	opPriv, opPub, _ := keyPair(t, dir, "operator")
	_, svcPub, svc := keyPair(t, dir, "service")
	mk := func(name, lines string, extra ...string) (string, string) {
		in := write(t, filepath.Join(dir, name+".jsonl"), []byte(lines))
		pkg := filepath.Join(dir, name)
		if code, _, stderr := runCLI(t, append([]string{"--from", "claims-jsonl", "--declared-scope-keys", "tenant", "--package", pkg, "--sign-key", opPriv, in}, extra...)...); code != 0 {
			t.Fatal(stderr)
		}
		return pkg, in
	}
	pkg, _ := mk("ours", `{"id":"a","content_text":"x","tenant":"t1"}`+"\n"+`{"id":"b","content_text":"y","tenant":"t1"}`+"\n"+`{"id":"c","content_text":"z","tenant":"t2"}`+"\n")
	// another export of three records of the same family: one tenant, two equal texts
	other, _ := mk("theirs", `{"id":"p","content_text":"u","tenant":"t1"}`+"\n"+`{"id":"q","content_text":"u","tenant":"t1"}`+"\n"+`{"id":"r","content_text":"w","tenant":"t1"}`+"\n")
	body, _ := os.ReadFile(filepath.Join(other, "submission.json"))
	foreign := write(t, filepath.Join(dir, "foreign.report.json"), auditPart(t, body, svc))
	// no attempt at all: not bound, exit 1, never "made from"
	code, out := verifyOut(t, "--key", opPub, "--report", foreign, "--report-key", svcPub, pkg)
	if code != 1 || strings.Contains(out, "made from") || !strings.Contains(out, "NOT bound") {
		t.Fatalf("foreign report without an attempt: %d %s", code, out)
	}
	// with an attempt, the foreign report is refused as its receipt ...
	sealAndPrepare(t, pkg, opPriv, opPub, svcPub, "submission.json")
	mustOp(t, pkg, opPriv, "custodian", "attempt", "--recipient", "memory-scope-hygiene/v1", "--attempt-id", "a-1")
	if code, out := op(t, pkg, opPriv, "receiving_operator", "receipt", "--attempt", "a-1", "--report", foreign, "--report-key", svcPub); code != 1 || !strings.Contains(out, "REFUSED") {
		t.Fatalf("foreign receipt: %d %s", code, out)
	}
	// ... and its own report binds
	own, _ := os.ReadFile(filepath.Join(pkg, "submission.json"))
	rep := write(t, filepath.Join(dir, "own.report.json"), auditPart(t, own, svc))
	mustOp(t, pkg, opPriv, "receiving_operator", "receipt", "--attempt", "a-1", "--report", rep, "--report-key", svcPub)
	if code, out := verifyOut(t, "--key", opPub, "--report", rep, "--report-key", svcPub, pkg); code != 0 || !strings.Contains(out, "bound to attempt a-1") {
		t.Fatalf("own report: %d %s", code, out)
	}
	// a second attempt cannot claim the same report
	mustOp(t, pkg, opPriv, "custodian", "attempt", "--recipient", "memory-scope-hygiene/v1", "--attempt-id", "a-2")
	if code, out := op(t, pkg, opPriv, "receiving_operator", "receipt", "--attempt", "a-2", "--report", rep, "--report-key", svcPub); code != 1 || !strings.Contains(out, "names this report's signature") {
		t.Fatalf("reused report: %d %s", code, out)
	}
	// a report signed by another service key is another recipient's
	_, _, stranger := keyPair(t, dir, "stranger")
	_, strangerPub, _ := keyPair(t, dir, "stranger2")
	_ = strangerPub
	srep := write(t, filepath.Join(dir, "stranger.report.json"), auditPart(t, own, stranger))
	strangerKey := filepath.Join(dir, "stranger.pub.pem")
	if code, out := op(t, pkg, opPriv, "receiving_operator", "receipt", "--attempt", "a-2", "--report", srep, "--report-key", strangerKey); code != 1 || !strings.Contains(out, "another recipient") {
		t.Fatalf("another recipient: %d %s", code, out)
	}
	// the next revision does not inherit revision 1's receipt
	next := filepath.Join(dir, "next")
	if code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys", "tenant", "--package", next, "--sign-key", opPriv, "--supersedes", pkg, filepath.Join(dir, "ours.jsonl")); code != 0 {
		t.Fatal(stderr)
	}
	if code, out := verifyOut(t, "--key", opPub, "--report", rep, "--report-key", svcPub, next); code != 1 || !strings.Contains(out, "NOT bound") || !strings.Contains(out, "revision 2") {
		t.Fatalf("another revision: %d %s", code, out)
	}
}

// TestSourcesConfined is finding 3 (Medium): --sources reads only regular files inside the folder
// given, each no further than its declared size, even when the manifest names ../../dev/zero.
func TestSourcesConfined(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o700)
	edges, _ := os.ReadFile(td + "graphiti/edges.json")
	write(t, filepath.Join(src, "edges.json"), edges)
	outside := write(t, filepath.Join(dir, "outside-canary.json"), edges)
	for _, c := range []struct {
		name, file string
		bytes      int
		link       bool
	}{
		{"dev zero", "../../../../../../../../dev/zero", 1 << 40, false},
		{"absolute", "/etc/hostname", 4, false},
		{"dotdot", "../outside-canary.json", len(edges), false},
		{"symlink", "edges.json", len(edges), true},
	} {
		pkg := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if code, _, stderr := runCLI(t, "--from", "graphiti", "--keep-names", "--unsigned", "--package", pkg, td+"graphiti/edges.json"); code != 0 {
			t.Fatal(stderr)
		}
		rewriteRecords(t, pkg, func(row []any) { row[2] = c.file }, func(m map[string]any) {
			in := m["inputs"].([]any)[0].(map[string]any)
			in["file"], in["bytes"] = c.file, c.bytes
		})
		srcDir := src
		if c.link {
			srcDir = filepath.Join(dir, "links")
			os.Mkdir(srcDir, 0o700)
			os.Symlink(outside, filepath.Join(srcDir, "edges.json"))
		}
		start := time.Now()
		code, out := verifyOut(t, "--sources", srcDir, pkg)
		if time.Since(start) > 10*time.Second || code != 1 || !strings.Contains(out, "not found among the sources given") {
			t.Errorf("%s: %d %s", c.name, code, out)
		}
	}
}

// TestManifestSchemaEnforced is finding 4: verify refuses manifests the published schema refuses.
func TestManifestSchemaEnforced(t *testing.T) {
	dir := t.TempDir()
	for i, mut := range []func(m map[string]any){
		func(m map[string]any) { m["digest_algorithm"] = "md5" },
		func(m map[string]any) { m["package_kind"] = "delta" },
		func(m map[string]any) { m["revision"] = -5 },
		func(m map[string]any) { m["revision"] = 2 },
		func(m map[string]any) { m["source_system"] = "elsewhere" },
		func(m map[string]any) { m["form"] = "summary" },
		func(m map[string]any) { m["extra"] = true },
		func(m map[string]any) { delete(m, "omissions") },
		func(m map[string]any) { m["capture_time"] = "yesterday" },
		func(m map[string]any) { m["inputs"].([]any)[0].(map[string]any)["file"] = "/home/alice/edges.json" },
	} {
		pkg := filepath.Join(dir, "p"+itoa(i))
		if code, _, stderr := runCLI(t, "--from", "graphiti", "--unsigned", "--package", pkg, td+"graphiti/edges.json"); code != 0 {
			t.Fatal(stderr)
		}
		rewriteManifest(t, pkg, mut)
		if code, out := verifyOut(t, pkg); code != 1 || !strings.Contains(out, "does not validate against schema/pack-manifest.schema.json") {
			t.Errorf("mutation %d: %d %s", i, code, out)
		}
	}
}

// TestFileNamesStayHome is finding 5: input file names and directories leave the package only
// with --keep-names; every source, every package file.
func TestFileNamesStayHome(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home-zorblaxdir")
	os.Mkdir(home, 0o700)
	l := "../../pack/testdata/leak/"
	cp := func(name string) string {
		b, err := os.ReadFile(l + name)
		if err != nil {
			t.Fatal(err)
		}
		return write(t, filepath.Join(home, "zorblaxfile-"+name), b)
	}
	found := 0
	for k, args := range [][]string{
		{"--from", "mem0-platform", cp("mem0-platform.json"), "--history", cp("mem0-platform-history.json")},
		{"--from", "mem0-oss", "--hash-only", cp("mem0-oss.json"), "--history", cp("mem0-oss-history.jsonl")},
		{"--from", "graphiti", cp("graphiti.json"), "--episodes", cp("graphiti-episodes.json"), "--nodes", cp("graphiti-nodes.json")},
		{"--from", "zep-cloud", "--hash-only", cp("zep-cloud.graph=kb-1.json")},
		{"--from", "letta-af", cp("letta.af"), "--passages", cp("letta-passages.json"), "--archives", cp("letta-archives.json")},
		{"--from", "letta-api", "--hash-only", cp("letta-api.json")},
		{"--from", "claims-jsonl", "--hash-only", cp("claims.jsonl")},
	} {
		for _, keep := range []bool{false, true} {
			pkg := filepath.Join(dir, "p"+itoa(k)+map[bool]string{true: "k"}[keep])
			a := append(append([]string{}, args...), "--package", pkg, "--unsigned")
			if keep {
				a = append(a, "--keep-names")
			}
			if code, _, stderr := runCLI(t, a...); code != 0 {
				t.Fatalf("%v: %s", args, stderr)
			}
			f, _ := openFolder(pkg)
			leaked := 0
			for name, b := range f.files {
				if strings.Contains(string(b), "zorblax") {
					leaked++
					if !keep {
						t.Errorf("%v: %s carries an input file name", args[:2], name)
					}
				}
			}
			if keep && leaked > 0 {
				found++
			}
			if !keep {
				validPackage(t, pkg)
			}
		}
	}
	if found != 7 {
		t.Fatalf("--keep-names kept the names in %d of 7 packages (the canary cannot fail)", found)
	}
}

// TestPackageIDsDiffer is finding 6: two different packages of one input never share an id.
func TestPackageIDsDiffer(t *testing.T) {
	dir := t.TempDir()
	ids := map[string]bool{}
	for i, extra := range [][]string{nil, {"--hash-only"}, nil} {
		pkg := filepath.Join(dir, "p"+itoa(i))
		if code, _, stderr := runCLI(t, append([]string{"--from", "claims-jsonl", "--unsigned", "--package", pkg, "--capture-time", "2026-11-30T12:00:00Z", td + "claims/claims.jsonl"}, extra...)...); code != 0 {
			t.Fatal(stderr)
		}
		f, _ := openFolder(pkg)
		var m mpp.Manifest
		json.Unmarshal(f.files[mpp.ManifestName], &m)
		if ids[m.PackageID] || !strings.HasPrefix(m.PackageID, "urn:uuid:") {
			t.Fatalf("package id %s repeats or is not generated", m.PackageID)
		}
		ids[m.PackageID] = true
	}
	// a later revision is written only by superseding: same id, revision 2, its prior named
	if code, _, _ := runCLI(t, "--from", "claims-jsonl", "--unsigned", "--package", filepath.Join(dir, "x"), "--revision", "2", td+"claims/claims.jsonl"); code == 0 {
		t.Fatal("--revision 2 without --supersedes")
	}
}

// TestCutoffRecordedWithO is finding 8: with -o the expiry cutoff is in the inventory.
func TestCutoffRecordedWithO(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	if code, _, stderr := runCLI(t, "--from", "mem0-platform", "-o", out, "--cutoff", "2026-01-02T03:04:05Z", td+"mem0-platform/page1.json"); code != 0 {
		t.Fatal(stderr)
	}
	inv, _ := os.ReadFile(filepath.Join(dir, "s.inventory.json"))
	if !strings.Contains(string(inv), `"expiry_cutoff": "2026-01-02T03:04:05Z"`) {
		t.Fatalf("no cutoff in %s", inv)
	}
}

// TestEmptySelection is finding 10: an empty authorized selection is a package (its reason
// stated); without a reason it is refused as before.
func TestEmptySelection(t *testing.T) {
	dir := t.TempDir()
	in := write(t, filepath.Join(dir, "empty.json"), []byte(`{"count":0,"next":null,"previous":null,"results":[]}`))
	if code, _, _ := runCLI(t, "--from", "mem0-platform", "--package", filepath.Join(dir, "no"), "--unsigned", in); code != 1 {
		t.Fatal("an empty selection without a reason was packed")
	}
	pkg := filepath.Join(dir, "p")
	if code, _, stderr := runCLI(t, "--from", "mem0-platform", "--package", pkg, "--unsigned", "--empty-selection-reason", "the user asked for memories of a project that holds none", in); code != 0 {
		t.Fatal(stderr)
	}
	validPackage(t, pkg)
	if code, out := verifyOut(t, pkg); code != 0 || !strings.Contains(out, "selection    empty, authorized") {
		t.Fatalf("%d %s", code, out)
	}
}

// TestManifestStaysSmall is finding 11: the record-level lineage of a 10,000-record package lives
// in its own sealed member, so the manifest no longer outweighs the parts (2.9 MB before).
func TestManifestStaysSmall(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 0; i < 10000; i++ {
		sb.WriteString(`{"id":"rec-` + itoa(i) + `","content_text":"memory text ` + itoa(i%4000) + `","tenant":"t` + itoa(i%7) + `"}` + "\n")
	}
	in := write(t, filepath.Join(dir, "big.jsonl"), []byte(sb.String()))
	pkg := filepath.Join(dir, "pkg")
	if code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys", "tenant", "--hash-only", "--split", "--unsigned", "--package", pkg, in); code != 0 {
		t.Fatal(stderr)
	}
	f, err := openFolder(pkg)
	if err != nil {
		t.Fatal(err)
	}
	parts := 0
	for name, b := range f.files {
		if strings.HasPrefix(name, "submission") {
			parts += len(b)
		}
	}
	if m := len(f.files[mpp.ManifestName]); m > 16<<10 || m*100 > parts {
		t.Fatalf("manifest %d bytes for %d bytes of parts", m, parts)
	}
	validPackage(t, pkg)
	if code, out := verifyOut(t, pkg); code != 0 {
		t.Fatalf("%d %s", code, out)
	}
}
