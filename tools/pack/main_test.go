package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const td = "../../pack/testdata/"

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestOutputAndInventory(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sub.json")
	// flags after the files are accepted
	code, stdout, stderr := runCLI(t, "--from", "graphiti", td+"graphiti/edges.json", "--episodes", td+"graphiti/episodes.json", "--nodes", td+"graphiti/nodes.json", "-o", out)
	if code != 0 || stdout != "" {
		t.Fatalf("code %d: %s", code, stderr)
	}
	body, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	invb, err := os.ReadFile(filepath.Join(dir, "sub.inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var inv struct {
		Inputs []struct {
			Role, File, SHA256 string
			Bytes              int
		}
		Submission []struct {
			File, SHA256 string
			Records      int
		}
		Unresolved map[string]int
	}
	if err := json.Unmarshal(invb, &inv); err != nil {
		t.Fatal(err)
	}
	if len(inv.Submission) != 1 || inv.Submission[0].SHA256 != sha(body) || inv.Submission[0].Records != 6 || inv.Submission[0].File != "sub.json" {
		t.Fatalf("submission entry %+v", inv.Submission)
	}
	if len(inv.Inputs) != 3 || inv.Inputs[1].Role != "episodes" || inv.Unresolved["episode_uuids"] != 1 {
		t.Fatalf("inputs %+v %v", inv.Inputs, inv.Unresolved)
	}
	edges, _ := os.ReadFile(td + "graphiti/edges.json")
	if inv.Inputs[0].SHA256 != sha(edges) || inv.Inputs[0].Bytes != len(edges) {
		t.Fatal("input digest")
	}
}

func TestStdout(t *testing.T) {
	code, stdout, stderr := runCLI(t, "--from", "letta-af", "--hash-only", td+"letta-af/solo.af")
	if code != 0 {
		t.Fatal(stderr)
	}
	var sub map[string]any
	if err := json.Unmarshal([]byte(stdout), &sub); err != nil {
		t.Fatal(err)
	}
	if sub["form"] != "hash_only" || strings.Contains(stdout, "Juniper") {
		t.Fatal("hash-only body")
	}
	if !strings.Contains(stderr, "no inventory written") {
		t.Fatal(stderr)
	}
}

func TestManifestFileAndFlags(t *testing.T) {
	dir := t.TempDir()
	mf := filepath.Join(dir, "m.json")
	os.WriteFile(mf, []byte(`{"declared_scope_keys": ["tenant"], "global_content_keys": ["Office closes at 6pm"], "multi_scope": true}`), 0o600)
	code, stdout, stderr := runCLI(t, "--from", "claims-jsonl", "--manifest", mf, "--global-claim-id", "c1", "--hash-only", td+"claims/claims.jsonl")
	if code != 0 {
		t.Fatal(stderr)
	}
	var sub struct {
		Manifest map[string]any
	}
	json.Unmarshal([]byte(stdout), &sub)
	h := sha256.Sum256([]byte("Office closes at 6pm"))
	if fmt.Sprint(sub.Manifest["global_content_keys"]) != "["+hex.EncodeToString(h[:])+"]" || fmt.Sprint(sub.Manifest["global_claim_ids"]) != "[c1]" || sub.Manifest["multi_scope"] != true {
		t.Fatalf("manifest %v", sub.Manifest)
	}
	// --declared-scope-keys "" declares none
	code, stdout, _ = runCLI(t, "--from", "claims-jsonl", "--declared-scope-keys=", td+"claims/claims.jsonl")
	if code != 0 || !strings.Contains(stdout, `"declared_scope_keys":[]`) {
		t.Fatal(stdout)
	}
	os.WriteFile(mf, []byte(`{"declared_scope_key": ["x"]}`), 0o600)
	if code, _, _ := runCLI(t, "--from", "claims-jsonl", "--manifest", mf, td+"claims/claims.jsonl"); code != 1 {
		t.Fatal("unknown manifest member accepted")
	}
}

func TestCapRefusalAndSplit(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "c.jsonl")
	var sb strings.Builder
	for i := 0; i < 1500; i++ {
		fmt.Fprintf(&sb, `{"id":"c%d","content_text":"text %d","tenant":"t%d"}`+"\n", i, i%700, i%2)
	}
	os.WriteFile(in, []byte(sb.String()), 0o600)
	out := filepath.Join(dir, "s.json")
	code, _, stderr := runCLI(t, "--from", "claims-jsonl", in, "-o", out)
	if code != 1 || !strings.Contains(stderr, "1500 records (cap 1000)") {
		t.Fatalf("%d %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("refused pack written")
	}
	code, _, stderr = runCLI(t, "--from", "claims-jsonl", "--split", in, "-o", out)
	if code != 0 {
		t.Fatal(stderr)
	}
	p1, err1 := os.ReadFile(filepath.Join(dir, "s.part1.json"))
	p2, err2 := os.ReadFile(filepath.Join(dir, "s.part2.json"))
	if err1 != nil || err2 != nil {
		t.Fatal("parts missing")
	}
	invb, _ := os.ReadFile(filepath.Join(dir, "s.inventory.json"))
	if !strings.Contains(string(invb), sha(p1)) || !strings.Contains(string(invb), sha(p2)) || !strings.Contains(string(invb), "split into 2 parts") {
		t.Fatal("inventory parts")
	}
	if code, _, _ := runCLI(t, "--from", "claims-jsonl", "--split", in); code != 1 {
		t.Fatal("--split without -o")
	}
}

func TestUsageAndErrors(t *testing.T) {
	code, _, stderr := runCLI(t, "-h")
	if code != 0 || !strings.Contains(stderr, "zep-cloud") || !strings.Contains(stderr, "-hash-only") {
		t.Fatalf("usage: %s", stderr)
	}
	for _, args := range [][]string{
		{td + "claims/claims.jsonl"},
		{"--from", "nope", td + "claims/claims.jsonl"},
		{"--from", "graphiti", "--passages", td + "letta-af/passages.json", td + "graphiti/edges.json"},
		{"--from", "letta-af", "--agent-id", "agent-0", td + "letta-af/solo.af"},
		{"--from", "mem0-oss", "/nonexistent/file.json"},
		{"--from", "zep-cloud", td + "graphiti/edges.json"},
	} {
		if code, _, _ := runCLI(t, args...); code != 1 {
			t.Errorf("%v: code %d", args, code)
		}
	}
	code, stdout, stderr := runCLI(t, "--from", "letta-af", "--agent-id", "agent-0=agent-abc", td+"letta-af/solo.af")
	if code != 0 || !strings.Contains(stdout, `"attached_to":["agent-abc"]`) {
		t.Fatalf("alias: %s %s", stdout, stderr)
	}
}
