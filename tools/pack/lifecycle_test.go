package main

import (
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/bagit"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
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
	return "sha256:" + pack.SHA256Hex(f.files[mpp.ManifestName])
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
	var m mpp.Manifest
	json.Unmarshal(f.files[mpp.ManifestName], &m)
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
		RecipientKeyID: mpp.KeyID(pub), Supported: []portability.Representation{{Family: m.Family}}, RequiredSemantics: []string{"submission:" + ps.ID()}, Withdrawn: []string{},
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

// TestPreflightService: preflight reads the destination profile from a service's criteria
// document and the dry run from its signed pre-check (a loopback stand-in speaking the published
// shapes); a pre-check signed by another key is refused, and a NOT ASSESSABLE factor is listed as
// an unresolved loss, never as a number.
func TestPreflightService(t *testing.T) {
	dir := t.TempDir()
	opPriv, opPub, _ := keyPair(t, dir, "operator")
	_, svcPub, svc := keyPair(t, dir, "service")
	_, _, other := keyPair(t, dir, "other")
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	precheckKey := svc
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/criteria":
			json.NewEncoder(w).Encode(map[string]any{"criteria_id": ps.ID(), "criteria_revision": ps.Revision(), "criteria_digest": ps.Digest(),
				"assessability_matrix": map[string]any{"generic": map[string]any{}, "letta": map[string]any{}},
				"report_signing_key":   sign.Publish(svc.Public().(ed25519.PublicKey))})
		case "/precheck":
			body, _ := io.ReadAll(r.Body)
			var sub struct {
				Family, Form, Variant string
				Records               []json.RawMessage
			}
			json.Unmarshal(body, &sub)
			doc, _ := sign.NewSigner(precheckKey).Sign(map[string]any{"kind": "precheck_result", "records": len(sub.Records), "family": sub.Family, "form": sub.Form, "variant": sub.Variant,
				"factors": map[string]any{"duplicates": map[string]any{"status": "ASSESSABLE"}, "scope_conflicts": map[string]any{"status": "NOT ASSESSABLE", "reason": "no record carries a checked field"}}})
			w.Write(doc)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	pkg := filepath.Join(dir, "pkg")
	if code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys", "tenant", "--package", pkg, "--sign-key", opPriv, td+"claims/claims.jsonl"); code != 0 {
		t.Fatal(stderr)
	}
	mustOp(t, pkg, opPriv, "export_curator", "describe", "--snapshot-ref", "s-1")
	mustOp(t, pkg, opPriv, "export_curator", "bind")
	mustOp(t, pkg, opPriv, "custodian", "seal", "--key", opPub)
	mustOp(t, pkg, opPriv, "policy_reviewer", "conditions", "--recipient", ps.ID(), "--permitted-purpose", "audit", "--policy", "p-1", "--expires", "2026-12-02T00:00:00Z", "--recipient-key", svcPub)
	out := mustOp(t, pkg, opPriv, "receiving_operator", "preflight", "--service", srv.URL)
	if !hasAll(out, "ready                    yes", "unresolved losses        scope_conflicts NOT ASSESSABLE no record carries a checked field", "live mutation            no") {
		t.Fatalf("preflight: %s", out)
	}
	precheckKey = other
	if code, out := op(t, pkg, opPriv, "receiving_operator", "preflight", "--service", srv.URL); code != 2 || !strings.Contains(out, "does not verify") {
		t.Fatalf("a pre-check signed by another key: %d %s", code, out)
	}
}

// TestLifecycleCLI: supersede, withdraw and dispose from the command line; a stale expectation
// writes nothing; a withdrawn or disposed package fails verify with its state named.
func TestLifecycleCLI(t *testing.T) {
	dir := t.TempDir()
	opPriv, opPub, _ := keyPair(t, dir, "operator")
	_, svcPub, _ := keyPair(t, dir, "service")
	pkg := filepath.Join(dir, "pkg")
	if code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys", "tenant", "--package", pkg, "--sign-key", opPriv, td+"claims/claims.jsonl"); code != 0 {
		t.Fatal(stderr)
	}
	sealAndPrepare(t, pkg, opPriv, opPub, svcPub, "submission.json")
	// stale: nothing written
	before, _ := os.ReadFile(filepath.Join(pkg, mpp.EventLogName))
	code, out, _ := runCLI(t, "assess", "--sign-key", opPriv, "--role", "integrity_reviewer", "--purpose", "p", "--decision", "d", "--expect", "sha256:"+strings.Repeat("0", 64), pkg)
	after, _ := os.ReadFile(filepath.Join(pkg, mpp.EventLogName))
	if code != 1 || string(before) != string(after) {
		t.Fatalf("stale: %d %s", code, out)
	}
	// the next revision, and the supersession recorded in the old one
	next := filepath.Join(dir, "next")
	if code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys", "tenant", "--package", next, "--sign-key", opPriv, "--supersedes", pkg, td+"claims/claims.jsonl"); code != 0 {
		t.Fatal(stderr)
	}
	mustOp(t, pkg, opPriv, "custodian", "supersede", "--by", next, "--reason", "new cutoff")
	if code, out := verifyOut(t, "--key", opPub, pkg); code != 0 || !hasAll(out, "state        superseded", "superseded   by "+revisionRef(t, next)) {
		t.Fatalf("superseded: %d %s", code, out)
	}
	if code, out := verifyOut(t, "--key", opPub, next); code != 0 || !hasAll(out, "revision 2", "prior        "+revisionRef(t, pkg)) {
		t.Fatalf("next: %d %s", code, out)
	}
	// dispose under a hold is refused (and recorded); withdraw, then dispose
	if code, out := op(t, pkg, opPriv, "custodian", "dispose", "--reason", "r", "--retention-policy", "ret-1", "--hold", "legal-7"); code != 1 || !strings.Contains(out, "hold") {
		t.Fatalf("dispose under hold: %d %s", code, out)
	}
	mustOp(t, pkg, opPriv, "custodian", "withdraw", "--reason", "consent withdrawn")
	if code, out := verifyOut(t, "--key", opPub, pkg); code != 1 || !strings.Contains(out, "the package is withdrawn: it is not acceptable") {
		t.Fatalf("withdrawn: %d %s", code, out)
	}
	mustOp(t, pkg, opPriv, "custodian", "dispose", "--reason", "retention ended", "--retention-policy", "ret-1")
	if code, out := verifyOut(t, "--key", opPub, pkg); code != 1 || !strings.Contains(out, "the package is disposed") {
		t.Fatalf("disposed: %d %s", code, out)
	}
	// a disposal claimed by a key nobody trusts still closes the package for verify
	strangerPriv, _, _ := keyPair(t, dir, "stranger")
	if code, out := op(t, next, strangerPriv, "custodian", "dispose", "--reason", "x", "--retention-policy", "ret-1"); code != 0 {
		t.Fatalf("stranger's dispose: %d %s", code, out)
	}
	if code, out := verifyOut(t, "--key", opPub, next); code != 1 || !hasAll(out, "disposed (claimed by an untrusted event)", "not a trusted key") {
		t.Fatalf("untrusted dispose: %d %s", code, out)
	}
}
