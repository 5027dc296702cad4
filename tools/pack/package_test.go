package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

const realLetta = "../../../shared/fixtures/letta"

// keyPair writes a fresh Ed25519 private key (PKCS #8 PEM) and its public PEM into dir.
func keyPair(t *testing.T, dir, name string) (priv, pub string, sk ed25519.PrivateKey) {
	t.Helper()
	pk, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	priv = filepath.Join(dir, name+".pem")
	os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	pb, _ := sign.WritePublicPEM(pk)
	pub = filepath.Join(dir, name+".pub.pem")
	os.WriteFile(pub, pb, 0o600)
	return priv, pub, k
}

// auditPart audits one submission part with the real engine and signs the report with the
// service key, as the paid audit answers.
func auditPart(t *testing.T, body []byte, svc ed25519.PrivateKey) []byte {
	t.Helper()
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	rep, ref, err := evaluator.Audit(ps, body, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || ref != nil {
		t.Fatalf("audit: %v %+v", err, ref)
	}
	doc, err := sign.NewSigner(svc).Sign(rep)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func write(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func verifyOut(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, errb := runCLI(t, append([]string{"verify"}, args...)...)
	return code, out + errb
}

// TestPackageRealAgentFiles: the real .af files pack into a signed package, verify, audit, and
// the signed report ties back to the package.
func TestPackageRealAgentFiles(t *testing.T) {
	if _, err := os.Stat(realLetta); err != nil {
		t.Skip("../shared/fixtures/letta not found beside the repository: " + err.Error())
	}
	dir := t.TempDir()
	opPriv, opPub, _ := keyPair(t, dir, "operator")
	_, svcPub, svc := keyPair(t, dir, "service")
	for _, af := range []string{"customer_service.af", "loop.af"} {
		for _, form := range [][]string{nil, {"--hash-only"}} {
			name := strings.TrimSuffix(af, ".af") + strings.Join(form, "")
			pkg := filepath.Join(dir, name)
			args := append([]string{"--from", "letta-af", "--package", pkg, "--sign-key", opPriv, "--capture-time", "2026-11-30T12:00:00Z"}, form...)
			if code, _, stderr := runCLI(t, append(args, filepath.Join(realLetta, af))...); code != 0 {
				t.Fatalf("%s: pack: %s", name, stderr)
			}
			if code, out := verifyOut(t, "--key", opPub, "--sources", realLetta, pkg); code != 0 || !strings.HasPrefix(out, "OK ") || !strings.Contains(out, "verified") || !strings.Contains(out, "sources      re-checked") {
				t.Fatalf("%s: verify: %d %s", name, code, out)
			}
			validPackage(t, pkg)
			sealAndPrepare(t, pkg, opPriv, opPub, svcPub, "submission.json")
			rep := attemptAndReceipt(t, pkg, opPriv, svcPub, "submission.json", "a-1", svc)
			code, out := verifyOut(t, "--key", opPub, "--report", rep, "--report-key", svcPub, pkg)
			if code != 0 || !hasAll(out, "report       bound to attempt a-1 (submission.json)", "state        sealed (7 event(s), 7 by trusted keys)") {
				t.Fatalf("%s: verify --report: %d %s", name, code, out)
			}
		}
	}
}

// TestPackageMismatches: every tampering is named in the mismatch list.
func TestPackageMismatches(t *testing.T) {
	dir := t.TempDir()
	opPriv, opPub, _ := keyPair(t, dir, "operator")
	_, otherPub, _ := keyPair(t, dir, "other")
	mk := func(name string, extra ...string) string {
		pkg := filepath.Join(dir, name)
		args := append([]string{"--from", "graphiti", "--package", pkg, td + "graphiti/edges.json", "--episodes", td + "graphiti/episodes.json"}, extra...)
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("pack: %s", stderr)
		}
		return pkg
	}
	cases := []struct {
		name   string
		tamper func(pkg string)
		args   []string
		want   string
	}{
		{"part byte", func(p string) { flip(t, filepath.Join(p, "submission.json"), `"team_alpha"`, `"team_alphb"`) }, nil, "submission.json: "},
		{"record digest", func(p string) { flip(t, filepath.Join(p, "submission.json"), `"team_alpha"`, `"team_alphb"`) }, nil, "record digest differs"},
		{"inventory", func(p string) { flip(t, filepath.Join(p, "inventory.json"), `"graphiti"`, `"graphitx"`) }, nil, "inventory.json: "},
		{"manifest", func(p string) { flip(t, filepath.Join(p, "manifest.json"), `"revision":1`, `"revision":2`) }, nil, "the signature does not verify"},
		{"extra file", func(p string) { write(t, filepath.Join(p, "notes.txt"), []byte("x")) }, nil, "notes.txt: in the package, not listed"},
		{"missing part", func(p string) { os.Remove(filepath.Join(p, "submission.json")) }, nil, "submission.json: listed in the manifest, missing"},
		{"wrong key", func(string) {}, []string{"--key", otherPub}, "not by the given key"},
		{"no key", func(string) {}, []string{}, "no key was given"},
		{"source", func(string) {}, []string{"--key", opPub, "--sources", filepath.Join(dir, "src")}, "source bytes at"},
	}
	os.MkdirAll(filepath.Join(dir, "src"), 0o700)
	edges, _ := os.ReadFile(td + "graphiti/edges.json")
	write(t, filepath.Join(dir, "src", "edges.json"), []byte(strings.Replace(string(edges), "Alice works at Acme", "Alice works at Acmf", 1)))
	for i, c := range cases {
		pkg := mk("p"+string(rune('a'+i)), "--sign-key", opPriv)
		c.tamper(pkg)
		args := c.args
		if args == nil {
			args = []string{"--key", opPub}
		}
		code, out := verifyOut(t, append(args, pkg)...)
		if code != 1 || !strings.HasPrefix(out, "FAIL ") || !strings.Contains(out, c.want) {
			t.Errorf("%s: %d %s", c.name, code, out)
		}
	}
	// Unsigned, untouched: verifies and says it is unsigned.
	pkg := mk("unsigned", "--unsigned")
	if code, out := verifyOut(t, pkg); code != 0 || !strings.Contains(out, "UNSIGNED (declared)") {
		t.Fatalf("unsigned: %d %s", code, out)
	}
	// A package is signed or explicitly unsigned.
	if code, _, stderr := runCLI(t, "--from", "graphiti", "--package", filepath.Join(dir, "neither"), td+"graphiti/edges.json"); code != 1 || !strings.Contains(stderr, "explicitly --unsigned") {
		t.Fatalf("neither signed nor unsigned: %d %s", code, stderr)
	}
}

func flip(t *testing.T, path, from, to string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), from) {
		t.Fatalf("flip %s: %q not found", path, from)
	}
	write(t, path, []byte(strings.Replace(string(b), from, to, 1)))
}

// TestPackageSplitReports: a split package has one report per part; each ties to its own part,
// a report of another package ties to none, and a report for other criteria is refused.
func TestPackageSplitReports(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "c.jsonl")
	var sb strings.Builder
	for i := 0; i < 1500; i++ {
		sb.WriteString(`{"id":"c` + itoa(i) + `","content_text":"text ` + itoa(i%700) + `","tenant":"t` + itoa(i%2) + `"}` + "\n")
	}
	write(t, in, []byte(sb.String()))
	pkg := filepath.Join(dir, "pkg")
	if code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys", "tenant", "--split", "--unsigned", "--package", pkg, in); code != 0 {
		t.Fatal(stderr)
	}
	validPackage(t, pkg)
	_, svcPub, svc := keyPair(t, dir, "service")
	opPriv, opPub, _ := keyPair(t, dir, "operator")
	sealAndPrepare(t, pkg, opPriv, "", svcPub, "submission.part1.json")
	for k, part := range []string{"submission.part1.json", "submission.part2.json"} {
		if k == 1 {
			mustOp(t, pkg, opPriv, "receiving_operator", "preflight", "--profile", profileFor(t, pkg, part, svcPub), "--member", part)
		}
		rep := attemptAndReceipt(t, pkg, opPriv, svcPub, part, "a-"+part, svc)
		write(t, filepath.Join(dir, part+".report"), readReport(t, rep))
		if code, out := verifyOut(t, "--event-key", opPub, "--report", rep, "--report-key", svcPub, pkg); code != 0 || !strings.Contains(out, "bound to attempt a-"+part+" ("+part+")") {
			t.Fatalf("%s: %d %s", part, code, out)
		}
	}
	// A report of another pack ties to no part.
	other := filepath.Join(dir, "other.jsonl")
	write(t, other, []byte(`{"id":"x1","content_text":"a","tenant":"t0"}`+"\n"+`{"id":"x2","content_text":"a","tenant":"t0"}`))
	sub := filepath.Join(dir, "other.json")
	if code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys", "tenant", "-o", sub, other); code != 0 {
		t.Fatal(stderr)
	}
	body, _ := os.ReadFile(sub)
	rep := write(t, filepath.Join(dir, "other.report"), auditPart(t, body, svc))
	if code, out := verifyOut(t, "--report", rep, "--report-key", svcPub, pkg); code != 1 || !strings.Contains(out, "no part of the package matches the report") || strings.Contains(out, "bound to attempt") {
		t.Fatalf("foreign report: %d %s", code, out)
	}
	// A report re-signed with another criteria id is not for this package's target.
	var m map[string]any
	json.Unmarshal(readReport(t, filepath.Join(dir, "submission.part1.json.report")), &m)
	delete(m, "signature")
	m["criteria_id"] = "memory-scope-hygiene/v2"
	doc, _ := sign.NewSigner(svc).Sign(m)
	rep = write(t, filepath.Join(dir, "v2.report"), doc)
	if code, out := verifyOut(t, "--report", rep, "--report-key", svcPub, pkg); code != 1 || !strings.Contains(out, "NOT bound") {
		t.Fatalf("criteria id: %d %s", code, out)
	}
	// A tampered report fails its signature.
	b, _ := os.ReadFile(filepath.Join(dir, "submission.part1.json.report"))
	tampered := write(t, filepath.Join(dir, "t.report"), []byte(strings.Replace(string(b), `"records":`, `"records": `, 1)))
	if code, out := verifyOut(t, "--report", tampered, "--report-key", svcPub, pkg); code != 1 || !strings.Contains(out, "report: ") {
		t.Fatalf("tampered report: %d %s", code, out)
	}
}

func readReport(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestHistoryDB is finding 4: Mem0 OSS history.db is read directly (no hand dump to JSON).
func TestHistoryDB(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	// the table as Mem0 OSS creates it (mem0/memory/storage.py)
	for _, q := range []string{
		`CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, new_memory TEXT, event TEXT, created_at DATETIME, updated_at DATETIME, is_deleted INTEGER, actor_id TEXT, role TEXT)`,
		`INSERT INTO history VALUES ('h1','907a70c3-1012-4037-b64c-e4228c38fb29',NULL,'Allergic to peanuts','ADD','2025-06-01T09:12:44.120331+00:00',NULL,0,NULL,NULL)`,
		`INSERT INTO history VALUES ('h2','907a70c3-1012-4037-b64c-e4228c38fb29','Allergic to peanuts',NULL,'DELETE','2025-06-02T10:00:00.000000+00:00',NULL,1,NULL,NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	code, stdout, stderr := runCLI(t, "--from", "mem0-oss", "--history", path, td+"mem0-oss/get_all.json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var sub struct{ Records []map[string]any }
	json.Unmarshal([]byte(stdout), &sub)
	deleted := 0
	for _, r := range sub.Records {
		if r["is_deleted"] == true {
			deleted++
			if r["id"] != "907a70c3-1012-4037-b64c-e4228c38fb29" {
				t.Fatalf("wrong record deleted: %v", r["id"])
			}
		}
	}
	if deleted != 1 {
		t.Fatalf("deleted %d", deleted)
	}
	write(t, filepath.Join(dir, "bad.db"), append([]byte("SQLite format 3\x00"), make([]byte, 100)...))
	if code, _, _ := runCLI(t, "--from", "mem0-oss", "--history", filepath.Join(dir, "bad.db"), td+"mem0-oss/get_all.json"); code != 1 {
		t.Fatal("a broken history.db accepted")
	}
}

// TestHashSourceFlag is finding 1 on the command line: --hash-source keys each source value
// (equality kept, text gone), with a key file or a fresh key, and the inventory says which.
func TestHashSourceFlag(t *testing.T) {
	dir := t.TempDir()
	keyf := write(t, filepath.Join(dir, "k"), []byte("0123456789abcdef0123"))
	out := filepath.Join(dir, "s.json")
	code, _, stderr := runCLI(t, "--from", "claims-jsonl", "--hash-only", "--hash-source", "--hash-source-key", keyf, "--declared-scope-keys", "tenant", "-o", out, td+"claims/claims.jsonl")
	if code != 0 {
		t.Fatal(stderr)
	}
	body, _ := os.ReadFile(out)
	inv, _ := os.ReadFile(filepath.Join(dir, "s.inventory.json"))
	if strings.Contains(string(body), `"crm"`) || strings.Count(string(body), `"source":"hmac-sha256:`) != 2 || !strings.Contains(string(inv), "HMAC-SHA-256") {
		t.Fatalf("keyed sources: %s", body)
	}
	for _, args := range [][]string{
		{"--from", "claims-jsonl", "--hash-source", td + "claims/claims.jsonl"},                                               // needs --hash-only
		{"--from", "claims-jsonl", "--hash-only", "--hash-source-key", keyf, td + "claims/claims.jsonl"},                      // key without --hash-source
		{"--from", "claims-jsonl", "--unsigned", td + "claims/claims.jsonl"},                                                  // package flag without --package
		{"--from", "claims-jsonl", "--package", filepath.Join(dir, "p"), "--unsigned", "-o", out, td + "claims/claims.jsonl"}, // both outputs
	} {
		if code, _, _ := runCLI(t, args...); code != 1 {
			t.Errorf("%v: code %d", args, code)
		}
	}
}

// TestMem0HistoryToMutationLog: --from mem0-history reads Mem0's history.db directly and writes a
// mutation-log export for memory-forget-envelope/v1 and an inventory saying what the source cannot
// tell; no memory text leaves the table.
func TestMem0HistoryToMutationLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, new_memory TEXT, event TEXT, created_at DATETIME, updated_at DATETIME, is_deleted INTEGER, actor_id TEXT, role TEXT)`,
		`INSERT INTO history VALUES ('h1','m-1',NULL,'CANARYhistorytext','ADD','2025-06-01T09:12:44.120331+00:00',NULL,0,'alice','user')`,
		`INSERT INTO history VALUES ('h2','m-1','CANARYhistorytext',NULL,'DELETE','2025-06-02T10:00:00.000000+00:00',NULL,1,'alice','user')`,
		`INSERT INTO history VALUES ('h3','m-2',NULL,'CANARYhistorytext','ADD','2025-06-03T10:00:00.000000+00:00',NULL,0,'bob','user')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	out := filepath.Join(dir, "log.json")
	code, _, stderr := runCLI(t, "--from", "mem0-history", "-o", out, path)
	if code != 0 {
		t.Fatal(stderr)
	}
	body, _ := os.ReadFile(out)
	inv, _ := os.ReadFile(filepath.Join(dir, "log.inventory.json"))
	var ex struct {
		Format           string           `json:"format"`
		ReinsertIdentity string           `json:"reinsert_identity"`
		Events           []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(body, &ex); err != nil || ex.Format != "mutation-log" || ex.ReinsertIdentity != "new_key" || len(ex.Events) != 3 {
		t.Fatalf("export %s", body)
	}
	if ex.Events[1]["op"] != "forget" || ex.Events[1]["principal"] != "alice" {
		t.Fatalf("events %v", ex.Events)
	}
	if strings.Contains(string(body), "CANARYhistorytext") || strings.Contains(string(inv), "CANARYhistorytext") {
		t.Fatal("memory text left the history table")
	}
	for _, want := range []string{"no authority envelope", "no scope columns in history", "new memory_id", "reinserts_after_forget"} {
		if !strings.Contains(string(inv), want) {
			t.Errorf("the inventory does not say %q", want)
		}
	}
}
