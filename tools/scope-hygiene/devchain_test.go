package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// The client against the real binary on the LiteSVM facade. It runs with X402_E2E=1
// (scripts/x402-e2e.sh installs the facade's npm packages and sets it).

// readmeCommands returns the three commands of the README's "Pay for an audit locally" block.
func readmeCommands(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Pay for an audit locally\n")
	if !ok {
		t.Fatal(`README has no "## Pay for an audit locally" section`)
	}
	_, block, ok := strings.Cut(sec, "```sh\n")
	if !ok {
		t.Fatal("the section has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	cmds := strings.Split(strings.TrimSpace(block), "\n")
	if len(cmds) != 3 {
		t.Fatalf("the section shows %d commands, want 3", len(cmds))
	}
	return cmds
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type devStack struct {
	root, dir, rpc, url string
	bin                 string
}

// control calls the facade's control endpoint (through the local RPC address).
func (s *devStack) control(t *testing.T, op string, args map[string]any) json.RawMessage {
	t.Helper()
	args["op"] = op
	b, _ := json.Marshal(args)
	res, err := http.Post(s.rpc+"/control", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || !out.OK {
		t.Fatalf("control %s failed", op)
	}
	return out.Result
}

// payerUSDC is the payer's USDC balance on the local chain, in units.
func (s *devStack) payerUSDC(t *testing.T, payer string) string {
	t.Helper()
	var v string
	json.Unmarshal(s.control(t, "tokenAmount", map[string]any{"account": ataOf(t, payer)}), &v)
	return v
}

func ataOf(t *testing.T, owner string) string {
	t.Helper()
	a, _, err := solana.FindAssociatedTokenAddress(solana.MustPublicKeyFromBase58(owner), x402.Devnet.USDCMint)
	if err != nil {
		t.Fatal(err)
	}
	return a.String()
}

func walletAddress(t *testing.T, path string) string {
	t.Helper()
	k, err := solana.PrivateKeyFromSolanaKeygenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return k.PublicKey().String()
}

type clientRunResult struct {
	code           int
	stdout, stderr string
}

func (s *devStack) client(t *testing.T, args ...string) clientRunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, append([]string{"client"}, args...)...)
	cmd.Dir = s.dir
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return clientRunResult{code, so.String(), se.String()}
}

func TestDevChainReadmeAndClient(t *testing.T) {
	if os.Getenv("X402_E2E") != "1" {
		t.Skip("set X402_E2E=1 (scripts/x402-e2e.sh) to run the dev-chain and client end to end")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "server", "x402", "e2e", "node_modules", "litesvm")); err != nil {
		t.Fatal("server/x402/e2e/node_modules missing: run scripts/x402-e2e.sh")
	}
	tmp := t.TempDir()
	addr, rpcAddr := freeAddr(t), freeAddr(t)
	sub := strings.NewReplacer("127.0.0.1:8080", addr, "127.0.0.1:8899", rpcAddr, "var/", filepath.Join(tmp, "var")+"/")
	cmds := readmeCommands(t, root)

	// Command 1, as written, with the ports and directory it reads from the environment.
	dc := exec.Command("bash", "-c", cmds[0])
	dc.Dir = root
	dc.Env = append(os.Environ(), "SCOPE_HYGIENE_DEV_ADDR="+addr, "SCOPE_HYGIENE_DEV_RPC_ADDR="+rpcAddr,
		"SCOPE_HYGIENE_DEV_DIR="+filepath.Join(tmp, "var", "dev-chain"))
	dc.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var dcErr bytes.Buffer
	dc.Stderr = &dcErr
	dcOut, _ := dc.StdoutPipe()
	if err := dc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-dc.Process.Pid, syscall.SIGINT)
		done := make(chan struct{})
		go func() { dc.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			syscall.Kill(-dc.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(dcOut)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var printed []string
	timeout := time.After(4 * time.Minute)
	for len(printed) < 2 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("dev-chain exited before printing two lines:\n%s", dcErr.String())
			}
			printed = append(printed, l)
		case <-timeout:
			t.Fatalf("dev-chain printed no lines in 4 minutes:\n%s", dcErr.String())
		}
	}
	for i, l := range printed {
		if want := sub.Replace(cmds[i+1]); l != want {
			t.Fatalf("dev-chain line %d:\n%s\nREADME says:\n%s", i+1, l, want)
		}
	}

	// Commands 2 and 3, as written.
	for i, c := range cmds[1:] {
		cmd := exec.Command("bash", "-c", sub.Replace(c))
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README command %d: %v\n%s", i+2, err, out)
		}
		if i == 1 && !strings.HasPrefix(string(out), "OK Ed25519 key_id=") {
			t.Fatalf("verify: %s", out)
		}
	}
	reportPath := filepath.Join(tmp, "var", "report.json")
	report, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	validateReport(t, root, report)

	s := &devStack{root: root, dir: tmp, rpc: "http://" + rpcAddr, url: "http://" + addr, bin: filepath.Join(tmp, "scope-hygiene")}
	if out, err := exec.Command("go", "build", "-o", s.bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	wallet := filepath.Join(tmp, "var", "dev-chain", "payer.json")
	export := filepath.Join(tmp, "var", "dev-chain", "export.json")
	payer := walletAddress(t, wallet)
	common := []string{"audit", "-url", s.url, "-rpc", s.rpc, "-wallet", wallet}

	t.Run("spend_cap_refused_before_signing", func(t *testing.T) {
		before := s.payerUSDC(t, payer)
		r := s.client(t, append(common, "-max-spend", "0.049999", "-o", "cap.json", export)...)
		if r.code != exitSpendCap || strings.Contains(r.stderr, "pay: signed") || !strings.Contains(r.stderr, "over the spend cap") {
			t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
		}
		if after := s.payerUSDC(t, payer); after != before {
			t.Fatalf("payer USDC %s -> %s after a refused spend", before, after)
		}
		if _, err := os.Stat(filepath.Join(tmp, "cap.json")); err == nil {
			t.Fatal("a result was saved after a refused spend")
		}
	})

	t.Run("fail_on_exit_codes", func(t *testing.T) {
		before, _ := strconv.Atoi(s.payerUSDC(t, payer))
		r := s.client(t, append(common, "-json", "-fail-on", "undeclared>0", "-o", "gate.json", export)...)
		var sum clientSummary
		if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
			t.Fatalf("-json output: %v\n%s", err, r.stdout)
		}
		if r.code != exitGateCrossed || sum.Exit != exitGateCrossed || sum.FailOn == nil || !sum.FailOn.Crossed || sum.FailOn.Value != "1" ||
			sum.Verified == nil || sum.Payment == nil || sum.Payment.Units != 50000 || sum.Payment.Payer != payer || sum.Payment.Transaction == "" {
			t.Fatalf("exit %d, summary %+v\n%s", r.code, sum, r.stderr)
		}
		after, _ := strconv.Atoi(s.payerUSDC(t, payer))
		if before-after != 50000 {
			t.Fatalf("payer paid %d units, want 50000", before-after)
		}
		// The kept payment, re-sent after its report was delivered, is not charged again.
		if _, err := os.Stat(filepath.Join(tmp, "gate.json.payment")); err != nil {
			t.Fatalf("the signed payment was not kept: %v", err)
		}
		r = s.client(t, append(common, "-json", "-payment", "gate.json.payment", "-o", "again.json", export)...)
		sum = clientSummary{}
		json.Unmarshal([]byte(r.stdout), &sum)
		if r.code != exitPayment || sum.Error == nil || sum.Error.Rule != "duplicate_settlement" {
			t.Fatalf("re-sent delivered payment: exit %d %+v\n%s", r.code, sum.Error, r.stderr)
		}
		if again, _ := strconv.Atoi(s.payerUSDC(t, payer)); again != after {
			t.Fatalf("payer USDC %d -> %d on a re-sent payment", after, again)
		}
		r = s.client(t, append(common, "-fail-on", "conflicts>0", "-o", "gate2.json", export)...)
		if r.code != exitNotAssessable || !strings.Contains(r.stdout, "NOT ASSESSABLE, no figure to compare") {
			t.Fatalf("NOT ASSESSABLE gate: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		// The free pre-check said so first: nothing was signed or paid.
		if again, _ := strconv.Atoi(s.payerUSDC(t, payer)); again != after || strings.Contains(r.stderr, "pay: signed") {
			t.Fatalf("a gate on a NOT ASSESSABLE factor paid: USDC %d -> %d\n%s", after, again, r.stderr)
		}
		r = s.client(t, append(common, "-fail-on", "undeclared>0&&conflicts>0", export)...)
		if r.code != exitUsage {
			t.Fatalf("a combined gate: exit %d", r.code)
		}
	})

	t.Run("tampered_report_fails_verification", func(t *testing.T) {
		// Saved and altered afterwards: the offline verify refuses it.
		doc := bytes.Replace(report, []byte(`"undeclared":1`), []byte(`"undeclared":0`), 1)
		if bytes.Equal(doc, report) {
			t.Fatal("the report has no undeclared count to alter")
		}
		bad := filepath.Join(tmp, "tampered.json")
		os.WriteFile(bad, doc, 0o644)
		out, err := exec.Command(s.bin, "verify", "-key", filepath.Join(tmp, "var", "report.criteria.json"), bad).CombinedOutput()
		if err == nil || !strings.HasPrefix(string(out), "FAIL") {
			t.Fatalf("verify accepted a tampered report: %s", out)
		}
		// Altered on the way: the client refuses what the service's key did not sign.
		target, _ := url.Parse(s.url)
		px := httputil.NewSingleHostReverseProxy(target)
		px.ModifyResponse = func(res *http.Response) error {
			if res.Request.URL.Path != "/audit" || res.StatusCode != http.StatusOK {
				return nil
			}
			b, err := io.ReadAll(res.Body)
			if err != nil {
				return err
			}
			b = bytes.Replace(b, []byte(`"undeclared":1`), []byte(`"undeclared":0`), 1)
			res.Body = io.NopCloser(bytes.NewReader(b))
			res.ContentLength = int64(len(b))
			res.Header.Set("Content-Length", strconv.Itoa(len(b)))
			return nil
		}
		mitm := httptest.NewServer(px)
		defer mitm.Close()
		r := s.client(t, "audit", "-url", mitm.URL, "-rpc", s.rpc, "-wallet", wallet, "-o", "mitm.json", export)
		if r.code != exitVerify || !strings.Contains(r.stderr, "does not verify") {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	})

	t.Run("canary_never_in_progress_lines", func(t *testing.T) {
		buf := make([]byte, 8)
		rand.Read(buf)
		canary := "CANARY" + hex.EncodeToString(buf)
		exp := `{"family":"mem0","form":"full_text","records":[` +
			`{"id":"` + canary + `-1","content_text":"` + canary + ` text","user_id":"` + canary + `-u1"},` +
			`{"id":"` + canary + `-2","content_text":"` + canary + ` text","user_id":"` + canary + `-u2"}]}`
		f := filepath.Join(tmp, "canary.json")
		os.WriteFile(f, []byte(exp), 0o600)
		r := s.client(t, append(common, "-fail-on", "undeclared>5", "-o", "canary-report.json", f)...)
		if r.code != exitOK {
			t.Fatalf("canary audit: exit %d\n%s", r.code, r.stderr)
		}
		// A refused export takes the error path: still no content.
		dup := strings.Replace(exp, canary+"-2", canary+"-1", 1)
		os.WriteFile(f, []byte(dup), 0o600)
		r2 := s.client(t, append(common, "-o", "canary-refused.json", f)...)
		if r2.code != exitRefused {
			t.Fatalf("refused canary export: exit %d\n%s", r2.code, r2.stderr)
		}
		for _, out := range []string{r.stderr, r.stdout, r2.stderr, r2.stdout} {
			if strings.Contains(out, canary) || strings.Contains(strings.ToLower(out), strings.ToLower(canary)) {
				t.Fatalf("export content reached the client's output:\n%s", out)
			}
		}
		if !strings.Contains(r.stderr, "200 paid") || !strings.Contains(r2.stderr, "rule=") {
			t.Fatalf("progress lines missing:\n%s\n%s", r.stderr, r2.stderr)
		}
	})

	t.Run("from_letta_af_hash_only", func(t *testing.T) {
		af := filepath.Join(root, "pack", "testdata", "letta-af", "solo.af")
		r := s.client(t, append(common, "--from", "letta-af", "-json", "-o", "letta.json", af)...)
		var sum clientSummary
		json.Unmarshal([]byte(r.stdout), &sum)
		if r.code != exitOK || sum.HashOnly == nil || !*sum.HashOnly || sum.Verified == nil || sum.Verified.Kind != "audit_report" || sum.Payment == nil {
			t.Fatalf("exit %d %+v\n%s", r.code, sum, r.stderr)
		}
		doc, _ := os.ReadFile(filepath.Join(tmp, "letta.json"))
		validateReport(t, root, doc)
		var head struct{ Family, Form string }
		json.Unmarshal(doc, &head)
		if head.Family != "letta" || head.Form != "hash_only" || !strings.Contains(r.stderr, "hash-only") {
			t.Fatalf("family %q form %q\n%s", head.Family, head.Form, r.stderr)
		}
	})
}

func validateReport(t *testing.T, root string, doc []byte) {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	b, err := os.ReadFile(filepath.Join(root, "schema", "report.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	sch, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	const u = "https://scope-hygiene.invalid/schema/report.schema.json"
	if err := c.AddResource(u, sch); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(u)
	if err != nil {
		t.Fatal(err)
	}
	// The schema describes the report; the signature block is the signing envelope (server/sign),
	// checked by verification instead.
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["signature"].(map[string]any); !ok {
		t.Fatal("the report carries no signature block")
	}
	delete(m, "signature")
	unsigned, _ := json.Marshal(m)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(unsigned))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(inst); err != nil {
		t.Fatalf("the paid report does not validate against schema/report.schema.json: %v", err)
	}
}
