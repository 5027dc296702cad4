package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEndToEnd builds the real binary, starts `serve` with embedded defaults in an empty
// directory on a free port, drives it over HTTP, checks results offline with `verify`, reads
// the ledger with `ledger`, and stops it with SIGTERM (graceful shutdown).
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scope-hygiene")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	work := filepath.Join(dir, "fresh")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "serve", "-addr", addr)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "SCOPE_HYGIENE_HOUSE_TOKEN=e2e-house-token-at-least-32-bytes-long", "SCOPE_HYGIENE_STORE=", "SCOPE_HYGIENE_KEY_FILE=")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()
	base := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		if r, err := http.Get(base + "/healthz"); err == nil && r.StatusCode == 200 {
			r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not come up:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	do := func(method, path, body string, hdr map[string]string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, b
	}
	save := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	runCmd := func(args ...string) (int, string) {
		c := exec.Command(bin, args...)
		c.Dir = work
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	exp := `{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"prefers tea","user_id":"alice"},{"id":"r2","content_text":"prefers tea","user_id":"bob"}]}`

	// The accept queue the kernel gave the listener (ss's Send-Q of a listening socket), to be
	// matched against the "limits" log line once the process has stopped.
	queue := -1
	if out, err := exec.Command("ss", "-Hltn", "sport = :"+addr[strings.LastIndexByte(addr, ':')+1:]).Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) >= 3 {
			queue, _ = strconv.Atoi(f[2])
		}
	}

	st, crit := do("GET", "/criteria", "", nil)
	if st != 200 {
		t.Fatalf("criteria: %d", st)
	}
	critFile := save("criteria.json", crit)
	st, pre := do("POST", "/precheck", exp, nil)
	if st != 200 {
		t.Fatalf("precheck: %d %s", st, pre)
	}
	if code, out := runCmd("verify", "-key", critFile, save("precheck.json", pre)); code != 0 || !strings.HasPrefix(out, "OK Ed25519") {
		t.Fatalf("verify precheck: %d %s", code, out)
	}
	if code, out := runCmd("verify", "-key", filepath.Join(work, "var", "signing-key.pem"), filepath.Join(dir, "precheck.json")); code != 0 {
		t.Fatalf("verify with the key file: %d %s", code, out)
	}
	// The second rule set, served beside v1 by the real binary after its own corpus gate (its log
	// line is checked once the process has stopped).
	if st, idx := do("GET", "/criteria/index", "", nil); st != 200 || !bytes.Contains(idx, []byte(`"document":"/criteria/memory-forget-envelope/v1"`)) {
		t.Fatalf("criteria index: %d %s", st, idx)
	}
	feLog := `{"format":"mutation-log","forget_mode":"transitional","scope_dimensions":["tenant"],"events":[{"seq":1,"op":"write","key":{"scope":{"tenant":"a"},"name":"k"},"version":1},{"seq":2,"op":"forget","key":{"scope":{"tenant":"a"},"name":"k"},"envelope":[]},{"seq":3,"op":"write","key":{"scope":{"tenant":"A"},"name":"K"},"version":2}]}`
	if st, rep := do("POST", "/v1/forget-envelope/audit", feLog, map[string]string{"X-Forwarded-For": "203.0.113.9"}); st != 200 || !bytes.Contains(rep, []byte("alias reinserts: 1")) {
		t.Fatalf("forget-envelope audit: %d %s", st, rep)
	} else if code, out := runCmd("verify", "-key", critFile, save("fe-report.json", rep)); code != 0 {
		t.Fatalf("verify the forget-envelope report: %d %s", code, out)
	}
	tampered := bytes.Replace(pre, []byte(`"live":2`), []byte(`"live":3`), 1)
	if code, out := runCmd("verify", "-key", critFile, save("tampered.json", tampered)); code != 1 || !strings.HasPrefix(out, "FAIL") {
		t.Fatalf("verify tampered: %d %s", code, out)
	}
	if st, b := do("POST", "/precheck", exp, nil); st != 429 {
		t.Fatalf("second precheck: %d %s", st, b)
	}
	if st, b := do("POST", "/audit", exp, nil); st != 402 || !bytes.Contains(b, []byte(`"usdc_units":50000`)) {
		t.Fatalf("unpaid audit: %d %s", st, b)
	}
	st, rep := do("POST", "/audit", exp, map[string]string{"Authorization": "Bearer e2e-house-token-at-least-32-bytes-long"})
	if st != 200 {
		t.Fatalf("house audit: %d %s", st, rep)
	}
	if code, out := runCmd("verify", "-key", critFile, save("report.json", rep)); code != 0 {
		t.Fatalf("verify report: %d %s", code, out)
	}
	if st, b := do("POST", "/export", exp, nil); st != 404 || string(b) != "NOT COVERED" {
		t.Fatalf("not covered: %d %q", st, b)
	}
	if st, b := do("POST", "/audit", strings.Repeat(" ", 262145), nil); st != 413 {
		t.Fatalf("over cap: %d %s", st, b)
	}
	if st, b := do("GET", "/metrics", "", nil); st != 200 || !bytes.Contains(b, []byte("scope_hygiene_tripwire_house_calls 1")) {
		t.Fatalf("metrics: %d", st)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve exited with %v:\n%s", err, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Fatalf("no graceful stop in the log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"msg":"corpus re-passed","criteria_id":"memory-forget-envelope/v1"`) {
		t.Fatalf("no corpus gate logged for memory-forget-envelope/v1:\n%s", logs.String())
	}
	var limits struct {
		Msg     string `json:"msg"`
		Backlog *int   `json:"listen_backlog"`
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `"msg":"limits"`) {
			json.Unmarshal([]byte(l), &limits)
		}
	}
	if limits.Backlog == nil {
		t.Fatalf("the limits log line names no listen_backlog:\n%s", logs.String())
	}
	if queue >= 0 && *limits.Backlog != queue {
		t.Errorf("the limits log line says listen_backlog %d; the kernel holds the listener's queue at %d", *limits.Backlog, queue)
	}
	code, out := runCmd("ledger")
	if code != 0 {
		t.Fatalf("ledger: %d %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var row map[string]any
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &row) != nil || row["house"] != true || row["op"] != "audit" {
		t.Fatalf("ledger rows:\n%s", out)
	}
	if code, out := runCmd("ledger", "-tripwires"); code != 0 || !strings.Contains(out, "Day-0: not yet.") {
		t.Fatalf("tripwires: %d %s", code, out)
	}
	for _, f := range []string{"var/signing-key.pem", "var/scope-hygiene.db"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Errorf("embedded default %s: %v", f, err)
		}
	}
}
