package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClientAgainstServe runs `scope-hygiene client` against the real binary serving with
// payments off (no node needed; the paid path is TestDevChainReadmeAndClient): -h lists every
// flag; a pre-check is saved, verifies offline and its -json carries every factor; a priced audit
// without -wallet is a usage error; a malformed export is a refusal naming its rule; an audit
// without x402 says payments are off; -fail-on on a factor the free pre-check states NOT
// ASSESSABLE stops there without paying; a mutation log goes to the second rule set, free; and
// export content never reaches the client's output.
func TestClientAgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scope-hygiene")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	srv := exec.Command(bin, "serve", "-addr", addr)
	srv.Dir = dir
	srv.Env = append(os.Environ(), "SCOPE_HYGIENE_STORE=", "SCOPE_HYGIENE_KEY_FILE=", "SCOPE_HYGIENE_X402_PAY_TO=")
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(os.Interrupt); srv.Wait() })
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if r, err := http.Get(base + "/healthz"); err == nil {
			r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not come up:\n%s", logs.String())
		}
	}
	client := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, append([]string{"client", args[0], "-url", base}, args[1:]...)...)
		cmd.Dir = dir
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), so.String(), se.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, so.String(), se.String()
	}
	const canary = "CANARYc0ffee5eed"
	valid := `{"family":"mem0","form":"full_text","records":[{"id":"` + canary + `1","content_text":"` + canary + ` tea","user_id":"` + canary + `a"},` +
		`{"id":"` + canary + `2","content_text":"` + canary + ` tea","user_id":"` + canary + `b"}]}`
	dup := strings.Replace(valid, canary+"2", canary+"1", 1)
	os.WriteFile(filepath.Join(dir, "valid.json"), []byte(valid), 0o600)
	os.WriteFile(filepath.Join(dir, "dup.json"), []byte(dup), 0o600)
	_, key, _ := ed25519.GenerateKey(nil)
	ints := make([]int, len(key)) // solana-keygen's file: the 64 key bytes as a JSON array
	for i, b := range key {
		ints[i] = int(b)
	}
	keyJSON, _ := json.Marshal(ints)
	os.WriteFile(filepath.Join(dir, "wallet.json"), keyJSON, 0o600)

	for _, args := range [][]string{{"client", "-h"}, {"client", "precheck", "-h"}, {"client", "audit", "--help"}} {
		cmd := exec.Command(bin, args...)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, se.String())
		}
		for _, flag := range []string{"-wallet", "-json", "-fail-on", "-criteria", "-url", "-o string", "-max-spend", "exit codes"} {
			if !strings.Contains(so.String(), flag) {
				t.Errorf("%v lists no %s", args, flag)
			}
		}
	}
	if err := exec.Command(bin, "client", "bogus").Run(); err == nil || err.(*exec.ExitError).ExitCode() != exitUsage {
		t.Errorf("an unknown client command: %v", err)
	}

	var outputs []string
	code, so, se := client("precheck", "-o", "pre.json", "valid.json")
	outputs = append(outputs, so, se)
	if code != exitOK || !strings.Contains(so, "OK, precheck_result signed by ed25519:") {
		t.Fatalf("precheck: exit %d\n%s\n%s", code, so, se)
	}
	time.Sleep(5200 * time.Millisecond) // the free pre-checks' published interval
	code, so, se = client("precheck", "-json", "-o", "pre2.json", "valid.json")
	outputs = append(outputs, so, se)
	var pre struct {
		Factors map[string]struct {
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"factors"`
		CriteriaID string `json:"criteria_id"`
	}
	if err := json.Unmarshal([]byte(so), &pre); code != exitOK || err != nil || len(pre.Factors) != 5 || pre.Factors["scope_conflicts"].Status != "NOT ASSESSABLE" || pre.CriteriaID != "memory-scope-hygiene/v1" {
		t.Fatalf("precheck -json carries %d factors (exit %d, %v)\n%s", len(pre.Factors), code, err, so)
	}
	code, _, se = client("audit", "valid.json")
	if code != exitUsage || !strings.Contains(se, "-wallet") {
		t.Fatalf("a priced audit without -wallet: exit %d\n%s", code, se)
	}
	if out, err := exec.Command(bin, "verify", "-key", filepath.Join(dir, "pre.criteria.json"), filepath.Join(dir, "pre.json")).CombinedOutput(); err != nil {
		t.Fatalf("the saved pre-check does not verify offline: %s", out)
	}
	code, so, se = client("audit", "-json", "-wallet", "wallet.json", "dup.json")
	outputs = append(outputs, so, se)
	if code != exitRefused || !strings.Contains(so, `"rule": "record_id_duplicate"`) || !strings.Contains(so, `"status": 400`) {
		t.Fatalf("malformed export: exit %d\n%s\n%s", code, so, se)
	}
	code, so, se = client("audit", "-wallet", "wallet.json", "valid.json")
	outputs = append(outputs, so, se)
	if code != exitPayment || !strings.Contains(se, "payments are off") {
		t.Fatalf("audit with payments off: exit %d\n%s\n%s", code, so, se)
	}
	time.Sleep(5200 * time.Millisecond)
	if code, so, se = client("precheck", "-o", "pre3.json", "valid.json"); code != exitOK {
		t.Fatalf("precheck: exit %d\n%s\n%s", code, so, se)
	}
	// Right after a pre-check: the -fail-on pre-check waits out the published interval once.
	code, so, se = client("audit", "-json", "-wallet", "wallet.json", "-fail-on", "conflicts>0", "-o", "gate.json", "valid.json")
	outputs = append(outputs, so, se)
	if code != exitNotAssessable || !strings.Contains(so, `"paid_nothing": true`) || !strings.Contains(so, `"status": "NOT ASSESSABLE"`) ||
		strings.Contains(se, "audit: sending") || !strings.Contains(se, "running it again") {
		t.Fatalf("-fail-on on a factor the pre-check states NOT ASSESSABLE: exit %d\n%s\n%s", code, so, se)
	}

	// The second rule set: a mutation log is pre-checked and audited (free) under it.
	log := `{"format":"mutation-log","forget_mode":"transitional","scope_dimensions":["tenant"],"events":[` +
		`{"seq":1,"op":"write","key":{"scope":{"tenant":"` + canary + `"},"name":"` + canary + `k"},"version":1},` +
		`{"seq":2,"op":"forget","key":{"scope":{"tenant":"` + canary + `"},"name":"` + canary + `k"},"envelope":["` + canary + `p"]},` +
		`{"seq":3,"op":"write","key":{"scope":{"tenant":"` + canary + `"},"name":"` + canary + `K"},"principal":"` + canary + `q","version":2}]}`
	os.WriteFile(filepath.Join(dir, "log.json"), []byte(log), 0o600)
	code, so, se = client("precheck", "-o", "log-pre.json", "log.json")
	outputs = append(outputs, so, se)
	if code != exitOK || !strings.Contains(se, "rule set memory-forget-envelope/v1") || !strings.Contains(so, "reopens") {
		t.Fatalf("mutation-log precheck: exit %d\n%s\n%s", code, so, se)
	}
	time.Sleep(5200 * time.Millisecond)
	code, so, se = client("audit", "-json", "-o", "log-audit.json", "-fail-on", "reinserts_after_forget.reinserts>0", "log.json")
	outputs = append(outputs, so, se)
	var rep struct {
		Verdict string                     `json:"verdict_line"`
		Factors map[string]json.RawMessage `json:"factors"`
		FailOn  struct{ Crossed bool }     `json:"fail_on"`
	}
	if err := json.Unmarshal([]byte(so), &rep); code != exitGateCrossed || err != nil || len(rep.Factors) != 7 || !rep.FailOn.Crossed ||
		!strings.HasPrefix(rep.Verdict, "FORGET ENVELOPE — events: 3 · forgets: 1 · with envelope: 100.0% · reinserts: 1 ") {
		t.Fatalf("mutation-log audit: exit %d (%v)\n%s\n%s", code, err, so, se)
	}
	if out, err := exec.Command(bin, "verify", "-key", filepath.Join(dir, "log-audit.criteria.json"), filepath.Join(dir, "log-audit.json")).CombinedOutput(); err != nil {
		t.Fatalf("the mutation log's report does not verify offline: %s", out)
	}
	code, _, se = client("audit", "-fail-on", "undeclared>0 || conflicts>0", "valid.json")
	if code != exitUsage || !strings.Contains(se, "one factor at a time") {
		t.Fatalf("combined gate: exit %d\n%s", code, se)
	}
	for _, out := range outputs {
		if strings.Contains(strings.ToLower(out), strings.ToLower(canary)) {
			t.Fatalf("export content reached the client's output:\n%s", out)
		}
	}
}

// TestEveryCommandHelp: "<command> -h" prints the usage and the command's flags on stdout and
// exits 0, for every command and ledger subcommand.
func TestEveryCommandHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"serve", "-h"}, "-addr"},
		{[]string{"verify", "-h"}, "-key"},
		{[]string{"ledger", "-h"}, "-store"},
		{[]string{"ledger", "tripwires", "-h"}, "-window-days"},
		{[]string{"ledger", "refund", "--help"}, "-tx"},
		{[]string{"client", "-h"}, "-wallet"},
		{[]string{"client", "precheck", "-h"}, "-criteria"},
		{[]string{"dev-chain", "-h"}, "-dir"},
	} {
		var out, errOut bytes.Buffer
		if rc := run(context.Background(), c.args, &out, &errOut); rc != 0 || !strings.Contains(out.String(), "  "+c.flag) || errOut.Len() != 0 {
			t.Errorf("%v: exit %d, %d bytes on stdout without %s, stderr %q", c.args, rc, out.Len(), c.flag, errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if rc := run(context.Background(), []string{"verify"}, &out, &errOut); rc != exitUsage {
		t.Errorf("verify without a file: exit %d", rc)
	}
}
