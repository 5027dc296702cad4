// Package facade runs the LiteSVM JSON-RPC facade (server/x402/e2e/facade.mjs) for tests that
// pay on a local chain — the x402 end to end and the MCP host test — and sets up its accounts
// through the facade's POST /control endpoint, so both start and fund the chain one way.
package facade

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"testing"

	solana "github.com/gagliardetto/solana-go"
)

// Facade is a running facade.mjs. ClientRPC is the URL the x402 client (and /control) uses;
// ServerRPC is the one the service is given, which the test can take down on its own.
type Facade struct {
	t                    testing.TB
	ClientRPC, ServerRPC string
}

// Start runs node on script (the path of facade.mjs, whose npm packages must be installed),
// reads the URLs it prints on its first line and stops it when t ends.
func Start(t testing.TB, script string) *Facade {
	t.Helper()
	cmd := exec.Command("node", script)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start facade: %v", err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("facade did not start (server/x402/e2e needs npm ci): %v", err)
	}
	var urls struct{ Client, Server string }
	if err := json.Unmarshal([]byte(line), &urls); err != nil {
		t.Fatalf("facade banner: %v", err)
	}
	return &Facade{t: t, ClientRPC: urls.Client, ServerRPC: urls.Server}
}

// Control runs one control operation (args may be nil) and returns its result; a refused or
// failed operation fails the test that started the facade.
func (f *Facade) Control(op string, args map[string]any) json.RawMessage {
	f.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	args["op"] = op
	b, _ := json.Marshal(args)
	res, err := http.Post(f.ClientRPC+"/control", "application/json", bytes.NewReader(b))
	if err != nil {
		f.t.Fatalf("facade %s: %v", op, err)
	}
	defer res.Body.Close()
	var out struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || !out.OK {
		f.t.Fatalf("facade %s: %v %s", op, err, out.Error)
	}
	return out.Result
}

// CreateMint creates a token mint with 6 decimals, as USDC has.
func (f *Facade) CreateMint(mint solana.PublicKey) {
	f.t.Helper()
	f.Control("createMint", map[string]any{"mint": mint.String(), "decimals": 6})
}

// SetTokenBalance gives owner's associated account of mint amount units.
func (f *Facade) SetTokenBalance(owner, mint solana.PublicKey, amount uint64) {
	f.t.Helper()
	f.Control("setTokenAccount", map[string]any{"account": ATA(owner, mint).String(), "mint": mint.String(), "owner": owner.String(), "amount": amount})
}

// Airdrop gives address lamports.
func (f *Facade) Airdrop(address solana.PublicKey, lamports uint64) {
	f.t.Helper()
	f.Control("airdrop", map[string]any{"address": address.String(), "lamports": lamports})
}

// SetUpPayments readies the chain a paid server needs: the usdc mint, payTo's empty USDC
// account and a fee payer holding 1 SOL.
func (f *Facade) SetUpPayments(usdc, payTo, feePayer solana.PublicKey) {
	f.t.Helper()
	f.CreateMint(usdc)
	f.SetTokenBalance(payTo, usdc, 0)
	f.Airdrop(feePayer, 1_000_000_000)
}

// ATA is owner's associated token account of mint.
func ATA(owner, mint solana.PublicKey) solana.PublicKey {
	a, _, err := solana.FindAssociatedTokenAddress(owner, mint)
	if err != nil {
		panic(err)
	}
	return a
}

// SecretJSON is k as solana-keygen writes a key file (a JSON array of its 64 bytes), the form
// the service's fee-payer file and the node clients take.
func SecretJSON(k solana.PrivateKey) string {
	ints := make([]int, len(k))
	for i, b := range k {
		ints[i] = int(b)
	}
	b, _ := json.Marshal(ints)
	return string(b)
}
