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

// devWallets are the three keypairs of a local chain: the service's fee payer, the operator's
// pay-to wallet, and the caller's payer.
type devWallets struct {
	feePayer, payTo, payer solana.PrivateKey
}

// facadeURLs are the facade's two JSON-RPC addresses, as its banner line names them.
type facadeURLs struct{ Client, Server string }

func runDevChain(ctx context.Context, o devChainOpts, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	facade, err := facadeScript(o.facade)
	if err != nil {
		return err
	}
	dir, keys, err := prepareDevDir(o.dir)
	if err != nil {
		return err
	}
	urls, stopFacade, err := startFacade(ctx, facade, stderr)
	if err != nil {
		return err
	}
	defer stopFacade()
	if err := fundDevChain(urls.Client, keys); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "dev-chain: local Solana up: USDC mint %s, payer %s holds %d USDC units, fee payer %s funded\n",
		x402.Devnet.USDCMint, keys.payer.PublicKey(), devPayerUSDCUnits, keys.feePayer.PublicKey())
	rpcURL, closeRPC, err := proxyRPC(o.rpcAddr, urls.Client)
	if err != nil {
		return err
	}
	defer closeRPC()
	srv, addr, err := startPaidServe(ctx, o.addr, dir, urls.Server, keys.payTo, stderr)
	if err != nil {
		return err
	}
	printNextLines(stdout, o.dir, addr, rpcURL)
	if err := srv.Wait(); err != nil && ctx.Err() == nil {
		return errors.New("serve stopped")
	}
	return nil
}

// facadeScript finds node and the facade script with its npm packages installed.
func facadeScript(path string) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", errors.New("node (v20+) is required for the local chain and was not found")
	}
	facade, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(facade), "node_modules", "litesvm")); err != nil {
		return "", errors.New("the facade's npm packages are missing: run scripts/dev-chain.sh (it installs them)")
	}
	return facade, nil
}

// prepareDevDir empties the previous run's ledger from dir and writes new wallets and the sample
// export into it; it returns dir as an absolute path.
func prepareDevDir(path string) (string, devWallets, error) {
	// The chain starts empty every time, so the ledger of a previous run is dropped too.
	for _, f := range []string{"scope-hygiene.db", "scope-hygiene.db-wal", "scope-hygiene.db-shm"} {
		if err := os.Remove(filepath.Join(path, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", devWallets{}, err
		}
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return "", devWallets{}, err
	}
	dir, err := filepath.Abs(path)
	if err != nil {
		return "", devWallets{}, err
	}
	keys := devWallets{solana.NewWallet().PrivateKey, solana.NewWallet().PrivateKey, solana.NewWallet().PrivateKey}
	for name, k := range map[string]solana.PrivateKey{"fee-payer.json": keys.feePayer, "pay-to.json": keys.payTo, "payer.json": keys.payer} {
		if err := writeKeypair(filepath.Join(dir, name), k); err != nil {
			return "", devWallets{}, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "export.json"), []byte(devSample), 0o644); err != nil {
		return "", devWallets{}, err
	}
	return dir, keys, nil
}

// startFacade starts LiteSVM behind JSON-RPC, on two loopback ports (callers', service's), and
// returns them with what stops it.
func startFacade(ctx context.Context, facade string, stderr io.Writer) (facadeURLs, func(), error) {
	node := exec.CommandContext(ctx, "node", filepath.Base(facade))
	node.Dir = filepath.Dir(facade)
	node.Stderr = stderr
	stdin, _ := node.StdinPipe() // the facade exits when this closes
	nodeOut, _ := node.StdoutPipe()
	if err := node.Start(); err != nil {
		return facadeURLs{}, nil, fmt.Errorf("start the facade: %w", err)
	}
	stop := func() { stdin.Close(); node.Process.Kill(); node.Wait() }
	line, err := bufio.NewReader(nodeOut).ReadString('\n')
	if err != nil {
		stop()
		return facadeURLs{}, nil, errors.New("the facade did not start")
	}
	var urls facadeURLs
	if err := json.Unmarshal([]byte(line), &urls); err != nil {
		stop()
		return facadeURLs{}, nil, errors.New("the facade's banner is not JSON")
	}
	return urls, stop, nil
}

// fundDevChain sets up the chain state: the devnet USDC mint, payTo's USDC account, a funded fee
// payer, the payer's USDC.
func fundDevChain(facade string, keys devWallets) error {
	usdc := x402.Devnet.USDCMint
	ata := func(owner solana.PublicKey) string {
		a, _, _ := solana.FindAssociatedTokenAddress(owner, usdc)
		return a.String()
	}
	for _, step := range []struct {
		op   string
		args map[string]any
	}{
		{"createMint", map[string]any{"mint": usdc.String(), "decimals": 6}},
		{"setTokenAccount", map[string]any{"account": ata(keys.payTo.PublicKey()), "mint": usdc.String(), "owner": keys.payTo.PublicKey().String(), "amount": 0}},
		{"airdrop", map[string]any{"address": keys.feePayer.PublicKey().String(), "lamports": devFeePayerLamports}},
		{"setTokenAccount", map[string]any{"account": ata(keys.payer.PublicKey()), "mint": usdc.String(), "owner": keys.payer.PublicKey().String(), "amount": devPayerUSDCUnits}},
	} {
		if err := facadeControl(facade, step.op, step.args); err != nil {
			return err
		}
	}
	return nil
}

// facadeControl calls one operation of the facade's control endpoint.
func facadeControl(facade, op string, args map[string]any) error {
	args["op"] = op
	b, _ := json.Marshal(args)
	res, err := http.Post(facade+"/control", "application/json", bytes.NewReader(b))
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

// proxyRPC lets callers reach the chain at a fixed address (the facade's own port is chosen by the
// OS); it returns that address's URL and what closes it.
func proxyRPC(addr, facade string) (string, func(), error) {
	target, _ := url.Parse(facade)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen for the local RPC: %w", err)
	}
	rpcSrv := &http.Server{Handler: httputil.NewSingleHostReverseProxy(target), ReadHeaderTimeout: 10 * time.Second}
	go rpcSrv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { rpcSrv.Close() }, nil
}

// startPaidServe starts this binary's serve with payments on against the chain, copies its log to
// stderr, and returns once it serves with payments ready, with the address it serves on. A serve
// that comes up without payments ready is interrupted and waited for.
func startPaidServe(ctx context.Context, addr, dir, chainRPC string, payTo solana.PrivateKey, stderr io.Writer) (*exec.Cmd, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	srv := exec.CommandContext(ctx, self, "serve")
	srv.Env = append(os.Environ(),
		"SCOPE_HYGIENE_ADDR="+addr,
		"SCOPE_HYGIENE_STORE=sqlite:"+filepath.Join(dir, "scope-hygiene.db"),
		"SCOPE_HYGIENE_KEY_FILE="+filepath.Join(dir, "signing-key.pem"),
		"SCOPE_HYGIENE_X402_NETWORK=devnet",
		"SCOPE_HYGIENE_X402_RPC_URL="+chainRPC,
		"SCOPE_HYGIENE_X402_FEE_PAYER_FILE="+filepath.Join(dir, "fee-payer.json"),
		"SCOPE_HYGIENE_X402_PAY_TO="+payTo.PublicKey().String(),
		"SCOPE_HYGIENE_X402_CHALLENGE_KEY_FILE="+filepath.Join(dir, "challenge.key"),
		"SCOPE_HYGIENE_PUBLIC_BASE_URL=http://"+addr,
	)
	srv.Cancel = func() error { return srv.Process.Signal(os.Interrupt) }
	srv.WaitDelay = 10 * time.Second
	srvOut, _ := srv.StdoutPipe()
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		return nil, "", fmt.Errorf("start serve: %w", err)
	}
	sc := bufio.NewScanner(srvOut)
	served, err := awaitServing(sc, stderr)
	if errors.Is(err, errServeNotReady) {
		srv.Cancel()
	}
	if err != nil {
		srv.Wait()
		return nil, "", err
	}
	go func() { // keep serve's log flowing to stderr
		for sc.Scan() {
			fmt.Fprintln(stderr, sc.Text())
		}
	}()
	return srv, served, nil
}

var errServeNotReady = errors.New("serve did not come up with payments ready")

// awaitServing copies serve's log lines to stderr until it logs the address it serves on, and
// fails unless x402 was ready before.
func awaitServing(sc *bufio.Scanner, stderr io.Writer) (string, error) {
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
			return "", errors.New("serve refused to start")
		case msg == "serving":
			addr, _ = l["addr"].(string)
		}
		if addr != "" {
			break
		}
	}
	if addr == "" || !ready {
		return "", errServeNotReady
	}
	return addr, nil
}

// printNextLines prints the two command lines a caller types next, with paths as the caller gave
// the directory.
func printNextLines(stdout io.Writer, dir, addr, rpcURL string) {
	rel := func(p string) string {
		if strings.HasPrefix(dir, "/") {
			return filepath.Join(dir, p)
		}
		return filepath.ToSlash(filepath.Join(dir, p))
	}
	out := filepath.Join(filepath.Dir(rel("x")), "..", "report.json")
	out = filepath.ToSlash(filepath.Clean(out))
	fmt.Fprintf(stdout, "go run ./tools/scope-hygiene client audit -url %s -rpc %s -wallet %s -o %s %s\n",
		"http://"+addr, rpcURL, rel("payer.json"), out, rel("export.json"))
	fmt.Fprintf(stdout, "go run ./tools/scope-hygiene verify -key %s %s\n",
		strings.TrimSuffix(out, ".json")+".criteria.json", out)
}
