package main

import (
	"bytes"
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
// payments off (no node needed; the paid path is TestDevChainReadmeAndClient): a pre-check is
// saved and verifies offline, a malformed export is a refusal naming its rule, an audit without
// x402 says payments are off, and export content never reaches the client's output.
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

	var outputs []string
	code, so, se := client("precheck", "-o", "pre.json", "valid.json")
	outputs = append(outputs, so, se)
	if code != exitOK || !strings.Contains(so, "OK, precheck_result signed by ed25519:") {
		t.Fatalf("precheck: exit %d\n%s\n%s", code, so, se)
	}
	if out, err := exec.Command(bin, "verify", "-key", filepath.Join(dir, "pre.criteria.json"), filepath.Join(dir, "pre.json")).CombinedOutput(); err != nil {
		t.Fatalf("the saved pre-check does not verify offline: %s", out)
	}
	code, so, se = client("audit", "-json", "dup.json")
	outputs = append(outputs, so, se)
	if code != exitRefused || !strings.Contains(so, `"rule": "record_id_duplicate"`) || !strings.Contains(so, `"status": 400`) {
		t.Fatalf("malformed export: exit %d\n%s\n%s", code, so, se)
	}
	code, so, se = client("audit", "valid.json")
	outputs = append(outputs, so, se)
	if code != exitPayment || !strings.Contains(se, "payments are off") {
		t.Fatalf("audit with payments off: exit %d\n%s\n%s", code, so, se)
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
