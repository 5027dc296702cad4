package main

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/bagit"
	"github.com/scopehygiene/scope-hygiene/pack/portability"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

// opTime is the time every test operation states; auditPart checks at 2026-12-01T00:00:00Z,
// inside an attempt's one-hour window opened at opTime.
const opTime = "2026-11-30T23:30:00Z"

// revisionRef is the current revision reference of a package folder.
func revisionRef(t *testing.T, pkg string) string {
	t.Helper()
	f, err := openFolder(pkg)
	if err != nil {
		t.Fatal(err)
	}
	return "sha256:" + pack.SHA256Hex(f.files[pack.ManifestName])
}

// op runs one package operation as role, signed with key, expecting the current revision.
func op(t *testing.T, pkg, key, role, name string, args ...string) (int, string) {
	t.Helper()
	all := append([]string{name, "--sign-key", key, "--role", role, "--purpose", "test transfer", "--decision", "decision-1",
		"--expect", revisionRef(t, pkg), "--time", opTime}, args...)
	code, out, errb := runCLI(t, append(all, pkg)...)
	return code, out + errb
}

// mustOp runs op and fails the test unless it is recorded.
func mustOp(t *testing.T, pkg, key, role, name string, args ...string) string {
	t.Helper()
	code, out := op(t, pkg, key, role, name, args...)
	if code != 0 {
		t.Fatalf("%s: %d %s", name, code, out)
	}
	return out
}

// profileFor writes a destination profile for memory-scope-hygiene/v1 whose dry run is what the
// pre-check would answer on the member (counts and header read from the package).
func profileFor(t *testing.T, pkg, member, svcPub string) string {
	t.Helper()
	f, err := openFolder(pkg)
	if err != nil {
		t.Fatal(err)
	}
	var m pack.PackageManifest
	json.Unmarshal(f.files[pack.ManifestName], &m)
	n := 0
	for _, mm := range m.Members {
		if mm.Path == member {
			n = mm.Records
		}
	}
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := readPub(svcPub)
	if err != nil {
		t.Fatal(err)
	}
	p := portability.DestinationProfile{Destination: ps.ID(), ProfileRef: ps.Digest(), Criteria: &portability.Pin{ID: ps.ID(), Revision: ps.Revision(), Digest: ps.Digest()},
		RecipientKeyID: pack.KeyID(pub), Supported: []portability.Representation{{Family: m.Family}}, RequiredSemantics: []string{"submission:" + ps.ID()}, Withdrawn: []string{},
		DryRun: &portability.DryRun{Member: member, Records: n, Family: m.Family, Form: m.Form, Variant: m.Variant}}
	b, _ := json.Marshal(p)
	return write(t, filepath.Join(filepath.Dir(pkg), filepath.Base(pkg)+"."+member+".profile.json"), b)
}

func readPub(path string) (ed25519.PublicKey, error) { return sign.ReadPublicKey(path) }

// sealAndPrepare takes a written package through describe, bind, seal, conditions and preflight
// (one key plays every role here).
func sealAndPrepare(t *testing.T, pkg, opPriv, opPub, svcPub, member string) {
	t.Helper()
	mustOp(t, pkg, opPriv, "export_curator", "describe", "--snapshot-ref", "fixture-snapshot-1")
	mustOp(t, pkg, opPriv, "export_curator", "bind")
	mustOp(t, pkg, opPriv, "custodian", "seal", "--key", opPub)
	mustOp(t, pkg, opPriv, "policy_reviewer", "conditions", "--recipient", "memory-scope-hygiene/v1", "--permitted-purpose", "scope hygiene audit",
		"--policy", "policy-1", "--expires", "2026-12-02T00:00:00Z", "--recipient-key", svcPub)
	mustOp(t, pkg, opPriv, "receiving_operator", "preflight", "--profile", profileFor(t, pkg, member, svcPub), "--member", member)
}

// attemptAndReceipt records an attempt on member, audits it, and attaches the report.
func attemptAndReceipt(t *testing.T, pkg, opPriv, svcPub, member, id string, svc ed25519.PrivateKey) string {
	t.Helper()
	mustOp(t, pkg, opPriv, "custodian", "attempt", "--recipient", "memory-scope-hygiene/v1", "--member", member, "--attempt-id", id)
	body, err := os.ReadFile(filepath.Join(pkg, member))
	if err != nil {
		t.Fatal(err)
	}
	rep := write(t, pkg+"."+id+".report.json", auditPart(t, body, svc))
	mustOp(t, pkg, opPriv, "receiving_operator", "receipt", "--attempt", id, "--report", rep, "--report-key", svcPub)
	return rep
}

func hasAll(out string, want ...string) bool {
	for _, w := range want {
		if !strings.Contains(out, w) {
			return false
		}
	}
	return true
}

func canonical(raw []byte) ([]byte, error) { return jcs.Transform(raw) }

// TestBagLayout: --layout bagit writes the package as an RFC 8493 bag (checked by the validator
// written from the RFC), verify reads it, and the operations append to the bag's event log
// without breaking the bag.
func TestBagLayout(t *testing.T) {
	dir := t.TempDir()
	opPriv, opPub, _ := keyPair(t, dir, "operator")
	_, svcPub, svc := keyPair(t, dir, "service")
	pkg := filepath.Join(dir, "bag")
	if code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys", "tenant", "--layout", "bagit", "--package", pkg, "--sign-key", opPriv, td+"claims/claims.jsonl"); code != 0 {
		t.Fatal(stderr)
	}
	for _, n := range []string{"bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", "data/manifest.json", "data/manifest.sig.json", "data/submission.json", "data/inventory.json"} {
		if _, err := os.Lstat(filepath.Join(pkg, n)); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	valid := func() {
		t.Helper()
		all, err := readBag(pkg)
		if err != nil {
			t.Fatal(err)
		}
		if p := bagit.Validate(all); len(p) > 0 {
			t.Fatalf("not a valid bag: %v", p)
		}
	}
	valid()
	sealAndPrepare(t, pkg, opPriv, opPub, svcPub, "submission.json")
	mustOp(t, pkg, opPriv, "custodian", "attempt", "--recipient", "memory-scope-hygiene/v1", "--attempt-id", "a-1")
	body, _ := os.ReadFile(filepath.Join(pkg, "data", "submission.json"))
	rep := write(t, filepath.Join(dir, "r.json"), auditPart(t, body, svc))
	mustOp(t, pkg, opPriv, "receiving_operator", "receipt", "--attempt", "a-1", "--report", rep, "--report-key", svcPub)
	valid()
	if code, out := verifyOut(t, "--key", opPub, "--report", rep, "--report-key", svcPub, pkg); code != 0 || !hasAll(out, "state        sealed", "bound to attempt a-1") {
		t.Fatalf("%d %s", code, out)
	}
	// a payload byte changed is a bag failure and a package failure
	flip(t, filepath.Join(pkg, "data", "inventory.json"), `"claims-jsonl"`, `"claims-jsonm"`)
	if code, out := verifyOut(t, "--key", opPub, pkg); code != 1 || !hasAll(out, "bag: manifest-sha256.txt: the checksum of \"data/inventory.json\"", "inventory.json: ") {
		t.Fatalf("%d %s", code, out)
	}
}
