package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// dev-chain: a paid audit on one machine. It starts the LiteSVM-backed JSON-RPC facade of the
// x402 end-to-end test (node, server/x402/e2e/facade.mjs), creates the devnet USDC mint on it, a
// payer wallet holding USDC, a funded fee payer and the operator's USDC account, starts `serve`
// with payments on against it, and prints the two command lines a caller types next. Everything
// listens on 127.0.0.1 and lives until interrupted; the chain is in memory and starts empty.

const devChainUsage = `usage: scope-hygiene dev-chain [flags]

Starts a local Solana (LiteSVM behind a JSON-RPC facade; needs node and the npm packages of
server/x402/e2e, which scripts/dev-chain.sh installs), funds a payer wallet with 1 USDC, and runs
the service with x402 payments on against it. Prints the two lines to type next. Ctrl-C stops it.

flags (each also reads the environment variable named):
`

// Dev-chain amounts: what the payer holds and what the fee payer is funded with.
const (
	devPayerUSDCUnits   = 1_000_000     // 1 USDC: twenty audits
	devFeePayerLamports = 1_000_000_000 // 1 SOL
)

type devChainOpts struct {
	addr, rpcAddr, dir, facade string
}

func devChain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o devChainOpts
	fs := flag.NewFlagSet("dev-chain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), devChainUsage); fs.PrintDefaults() }
	env := func(name, def string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&o.addr, "addr", env("SCOPE_HYGIENE_DEV_ADDR", "127.0.0.1:8080"), "the service's listen address (env SCOPE_HYGIENE_DEV_ADDR)")
	fs.StringVar(&o.rpcAddr, "rpc-addr", env("SCOPE_HYGIENE_DEV_RPC_ADDR", "127.0.0.1:8899"), "the local Solana JSON-RPC address callers use (env SCOPE_HYGIENE_DEV_RPC_ADDR)")
	fs.StringVar(&o.dir, "dir", env("SCOPE_HYGIENE_DEV_DIR", "var/dev-chain"), "directory for the wallets, keys, store and a sample export (env SCOPE_HYGIENE_DEV_DIR)")
	fs.StringVar(&o.facade, "facade", env("SCOPE_HYGIENE_DEV_FACADE", "server/x402/e2e/facade.mjs"), "the LiteSVM JSON-RPC facade script (env SCOPE_HYGIENE_DEV_FACADE)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	if err := runDevChain(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "dev-chain: FAIL:", err)
		return 1
	}
	return 0
}

// devSample is the sample export the printed lines audit: three Mem0 records, one undeclared
// cross-scope cluster.
const devSample = `{"family":"mem0","form":"full_text","records":[` +
	`{"id":"r1","content_text":"likes tea","user_id":"alice"},` +
	`{"id":"r2","content_text":"likes tea","user_id":"bob"},` +
	`{"id":"r3","content_text":"lives in Oslo","user_id":"alice"}]}`

func writeKeypair(path string, k solana.PrivateKey) error {
	ints := make([]int, len(k))
	for i, b := range k {
		ints[i] = int(b)
	}
	b, _ := json.Marshal(ints)
	return os.WriteFile(path, b, 0o600)
}

func runDevChain(ctx context.Context, o devChainOpts, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New("node (v20+) is required for the local chain and was not found")
	}
	facade, err := filepath.Abs(o.facade)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(facade), "node_modules", "litesvm")); err != nil {
		return errors.New("the facade's npm packages are missing: run scripts/dev-chain.sh (it installs them)")
	}
	// The chain starts empty every time, so the ledger of a previous run is dropped too.
	for _, f := range []string{"scope-hygiene.db", "scope-hygiene.db-wal", "scope-hygiene.db-shm"} {
		if err := os.Remove(filepath.Join(o.dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return err
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	feePayer, payTo, payer := solana.NewWallet().PrivateKey, solana.NewWallet().PrivateKey, solana.NewWallet().PrivateKey
	for name, k := range map[string]solana.PrivateKey{"fee-payer.json": feePayer, "pay-to.json": payTo, "payer.json": payer} {
		if err := writeKeypair(filepath.Join(dir, name), k); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "export.json"), []byte(devSample), 0o644); err != nil {
		return err
	}

	// 1. The facade: LiteSVM behind JSON-RPC, on two loopback ports (callers', service's).
	node := exec.CommandContext(ctx, "node", filepath.Base(facade))
	node.Dir = filepath.Dir(facade)
	node.Stderr = stderr
	stdin, _ := node.StdinPipe() // the facade exits when this closes
	nodeOut, _ := node.StdoutPipe()
	if err := node.Start(); err != nil {
		return fmt.Errorf("start the facade: %w", err)
	}
	defer func() { stdin.Close(); node.Process.Kill(); node.Wait() }()
	line, err := bufio.NewReader(nodeOut).ReadString('\n')
	if err != nil {
		return errors.New("the facade did not start")
	}
	var urls struct{ Client, Server string }
	if err := json.Unmarshal([]byte(line), &urls); err != nil {
		return errors.New("the facade's banner is not JSON")
	}

	// 2. Chain state: the devnet USDC mint, payTo's USDC account, a funded fee payer, the payer's USDC.
	usdc := x402.Devnet.USDCMint
	ctl := func(op string, args map[string]any) error {
		args["op"] = op
		b, _ := json.Marshal(args)
		res, err := http.Post(urls.Client+"/control", "application/json", bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("facade %s: %w", op, err)
		}
		defer res.Body.Close()
		var out struct {
			OK bool `json:"ok"`
		}
		if json.NewDecoder(res.Body).Decode(&out) != nil || !out.OK {
			return fmt.Errorf("facade %s refused", op)
		}
		return nil
	}
	ata := func(owner solana.PublicKey) string {
		a, _, _ := solana.FindAssociatedTokenAddress(owner, usdc)
		return a.String()
	}
	for _, step := range []struct {
		op   string
		args map[string]any
	}{
		{"createMint", map[string]any{"mint": usdc.String(), "decimals": 6}},
		{"setTokenAccount", map[string]any{"account": ata(payTo.PublicKey()), "mint": usdc.String(), "owner": payTo.PublicKey().String(), "amount": 0}},
		{"airdrop", map[string]any{"address": feePayer.PublicKey().String(), "lamports": devFeePayerLamports}},
		{"setTokenAccount", map[string]any{"account": ata(payer.PublicKey()), "mint": usdc.String(), "owner": payer.PublicKey().String(), "amount": devPayerUSDCUnits}},
	} {
		if err := ctl(step.op, step.args); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "dev-chain: local Solana up: USDC mint %s, payer %s holds %d USDC units, fee payer %s funded\n",
		usdc, payer.PublicKey(), devPayerUSDCUnits, feePayer.PublicKey())

	// 3. Callers reach the chain at a fixed address (the facade's own port is chosen by the OS).
	target, _ := url.Parse(urls.Client)
	ln, err := net.Listen("tcp", o.rpcAddr)
	if err != nil {
		return fmt.Errorf("listen for the local RPC: %w", err)
	}
	rpcSrv := &http.Server{Handler: httputil.NewSingleHostReverseProxy(target), ReadHeaderTimeout: 10 * time.Second}
	go rpcSrv.Serve(ln)
	defer rpcSrv.Close()
	rpcURL := "http://" + ln.Addr().String()

	// 4. The service with payments on, against the chain.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	srv := exec.CommandContext(ctx, self, "serve")
	srv.Env = append(os.Environ(),
		"SCOPE_HYGIENE_ADDR="+o.addr,
		"SCOPE_HYGIENE_STORE=sqlite:"+filepath.Join(dir, "scope-hygiene.db"),
		"SCOPE_HYGIENE_KEY_FILE="+filepath.Join(dir, "signing-key.pem"),
		"SCOPE_HYGIENE_X402_NETWORK=devnet",
		"SCOPE_HYGIENE_X402_RPC_URL="+urls.Server,
		"SCOPE_HYGIENE_X402_FEE_PAYER_FILE="+filepath.Join(dir, "fee-payer.json"),
		"SCOPE_HYGIENE_X402_PAY_TO="+payTo.PublicKey().String(),
		"SCOPE_HYGIENE_X402_CHALLENGE_KEY_FILE="+filepath.Join(dir, "challenge.key"),
		"SCOPE_HYGIENE_PUBLIC_BASE_URL=http://"+o.addr,
	)
	srv.Cancel = func() error { return srv.Process.Signal(os.Interrupt) }
	srv.WaitDelay = 10 * time.Second
	srvOut, _ := srv.StdoutPipe()
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		return fmt.Errorf("start serve: %w", err)
	}
	sc := bufio.NewScanner(srvOut)
	addr, ready := "", false
	for sc.Scan() {
		fmt.Fprintln(stderr, sc.Text())
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch msg, _ := l["msg"].(string); {
		case msg == "x402 ready":
			ready = true
		case msg == "serve failed":
			srv.Wait()
			return errors.New("serve refused to start")
		case msg == "serving":
			addr, _ = l["addr"].(string)
		}
		if addr != "" {
			break
		}
	}
	if addr == "" || !ready {
		cancel()
		srv.Wait()
		return errors.New("serve did not come up with payments ready")
	}
	go func() { // keep serve's log flowing to stderr
		for sc.Scan() {
			fmt.Fprintln(stderr, sc.Text())
		}
	}()
	rel := func(p string) string { // print paths as the caller gave them
		if strings.HasPrefix(o.dir, "/") {
			return filepath.Join(o.dir, p)
		}
		return filepath.ToSlash(filepath.Join(o.dir, p))
	}
	out := filepath.Join(filepath.Dir(rel("x")), "..", "report.json")
	out = filepath.ToSlash(filepath.Clean(out))
	fmt.Fprintf(stdout, "go run ./tools/scope-hygiene client audit -url %s -rpc %s -wallet %s -o %s %s\n",
		"http://"+addr, rpcURL, rel("payer.json"), out, rel("export.json"))
	fmt.Fprintf(stdout, "go run ./tools/scope-hygiene verify -key %s %s\n",
		strings.TrimSuffix(out, ".json")+".criteria.json", out)
	if err := srv.Wait(); err != nil && ctx.Err() == nil {
		return errors.New("serve stopped")
	}
	return nil
}
