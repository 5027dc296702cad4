package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/server/x402/gate"
)

// payConfig configures x402 payments for /audit. Every flag also reads SCOPE_HYGIENE_X402_*.
type payConfig struct {
	Network          string
	RPCURL           string
	FeePayerFile     string
	PayTo            string
	ChallengeKeyFile string
	RatesCSV         string
	CADBasis         string
	ReconcileEvery   time.Duration
	// FeeBudget is the lamports the fee payer may spend on one payer's failed transactions in
	// a rolling hour (0 turns the budget off).
	FeeBudget int64
	// GlobalFeeBudget is the lamports the fee payer may lose on failed transactions of all
	// payers together in a rolling hour, shared by replicas through the store (0 turns it off).
	GlobalFeeBudget int64
	// badEnv names an environment value that did not parse (reported when payments start).
	badEnv string
}

// payFlags declares the x402 flags on fs (defaults from the environment).
func payFlags(fs *flag.FlagSet, p *payConfig, getenv func(string) string) {
	str := func(ptr *string, name, def, help string) {
		if v := getenv(envName(name)); v != "" {
			def = v
		}
		fs.StringVar(ptr, name, def, help+" (env "+envName(name)+")")
	}
	str(&p.Network, "x402-network", "", "Solana cluster paid on: mainnet or devnet (required with -x402-pay-to; only mainnet payments are revenue, devnet rows are house rows)")
	str(&p.RPCURL, "x402-rpc-url", "", "Solana JSON-RPC URL (default: the network's public endpoint)")
	str(&p.FeePayerFile, "x402-fee-payer-file", "var/x402-fee-payer.json", "fee-payer keypair (solana-keygen JSON); generated on first run when missing")
	str(&p.PayTo, "x402-pay-to", "", "operator wallet receiving USDC (its USDC token account must exist); payments are disabled when empty")
	str(&p.ChallengeKeyFile, "x402-challenge-key-file", "var/x402-challenge.key", "HMAC key for payment challenges (hex, >= 32 bytes); generated when missing; env SCOPE_HYGIENE_X402_CHALLENGE_KEY also works")
	str(&p.RatesCSV, "x402-rates-csv", "", "daily USD/CAD rates CSV (date,rate) for the ledger's CAD block; days missing are cad_pending")
	str(&p.CADBasis, "x402-cad-basis", x402.DefaultCADBasis, "basis stated with every CAD rate")
	budget := int64(x402.DefaultFeeBudgetLamports)
	if v := getenv(envName("x402-fee-budget")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			p.badEnv = envName("x402-fee-budget") + ": not a whole number of lamports"
		}
		budget = n
	}
	fs.Int64Var(&p.FeeBudget, "x402-fee-budget", budget, "lamports the fee payer may spend on one payer wallet's failed transactions in a rolling hour; past it that payer's payments get 429 payer_fee_budget before any broadcast (0: no budget) (env "+envName("x402-fee-budget")+")")
	global := int64(x402.DefaultGlobalFeeBudgetLamports)
	if v := getenv(envName("x402-global-fee-budget")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			p.badEnv = envName("x402-global-fee-budget") + ": not a whole number of lamports"
		}
		global = n
	}
	fs.Int64Var(&p.GlobalFeeBudget, "x402-global-fee-budget", global, "lamports the fee payer may lose on failed transactions of all payers together in a rolling hour, shared by replicas through the store; past it payments answer 503 payments_paused before any broadcast and free pre-checks keep working (0: no budget) (env "+envName("x402-global-fee-budget")+")")
	p.ReconcileEvery = 15 * time.Second
}

// loadFeePayer reads a solana-keygen JSON keypair, creating one (mode 0600) when missing.
func loadFeePayer(path string) (solana.PrivateKey, bool, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		k, err := solana.NewRandomPrivateKey()
		if err != nil {
			return nil, false, fmt.Errorf("x402: generate fee payer: %w", err)
		}
		ints := make([]int, len(k))
		for i, b := range k {
			ints[i] = int(b)
		}
		b, _ := json.Marshal(ints)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, false, fmt.Errorf("x402: fee payer directory: %w", err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, false, fmt.Errorf("x402: write fee payer: %w", err)
		}
		return k, true, nil
	}
	k, err := solana.PrivateKeyFromSolanaKeygenFile(path)
	if err != nil {
		return nil, false, errors.New("x402: fee-payer file is not a solana-keygen JSON keypair")
	}
	return k, false, nil
}

// loadChallengeKey reads an HMAC key (payment challenges, sign-in-with-x nonces) from env or file, creating the file when missing.
func loadChallengeKey(path, env string, getenv func(string) string) ([]byte, error) {
	parse := func(s string) ([]byte, error) {
		s = strings.TrimSpace(s)
		if b, err := hex.DecodeString(s); err == nil && len(b) >= 32 {
			return b, nil
		}
		if len(s) >= 32 {
			return []byte(s), nil
		}
		return nil, errors.New("x402: challenge key must be at least 32 bytes (64 hex digits)")
	}
	if v := getenv(env); v != "" {
		return parse(v)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("x402: generate challenge key: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("x402: challenge key directory: %w", err)
		}
		if err := os.WriteFile(path, []byte(hex.EncodeToString(k)+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("x402: write challenge key: %w", err)
		}
		return k, nil
	}
	if err != nil {
		return nil, fmt.Errorf("x402: read challenge key: %w", err)
	}
	return parse(string(b))
}

// startPayments builds the x402 gate, runs the startup checks and starts the reconciler.
// It returns nil (the API's default: 402 stating the price, no payment accepted) when no payTo
// wallet is configured.
//
// Payments need publicBase, the configured public base URL: sign-in-with-x proofs (resumes,
// pre-checks) are bound to its host and to no request's Host header, so a page elsewhere cannot
// relay them.
func startPayments(ctx context.Context, p payConfig, publicBase string, price x402.Price, st store.Store, logger *slog.Logger) (api.Payments, error) {
	if p.badEnv != "" {
		return nil, errors.New(p.badEnv)
	}
	if p.PayTo == "" {
		logger.Warn("x402 payments disabled: no payTo wallet configured (set -x402-pay-to or SCOPE_HYGIENE_X402_PAY_TO)")
		return nil, nil
	}
	if u, err := url.Parse(publicBase); publicBase == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("x402: payments need -public-base-url (env SCOPE_HYGIENE_PUBLIC_BASE_URL), the absolute origin callers reach, e.g. https://audit.example.com or http://127.0.0.1:8080 for a local stack: sign-in-with-x proofs are bound to its host")
	}
	ss, ok := st.(interface{ Settlements() x402.SettlementStore })
	if !ok {
		return nil, errors.New("x402: this store has no settlement table")
	}
	nw, err := x402.NetworkByName(p.Network)
	if err != nil {
		return nil, err
	}
	payTo, err := solana.PublicKeyFromBase58(p.PayTo)
	if err != nil {
		return nil, errors.New("x402: payTo is not a base58 Solana address")
	}
	fee, created, err := loadFeePayer(p.FeePayerFile)
	if err != nil {
		return nil, err
	}
	if created {
		logger.Warn("generated an x402 fee-payer key; fund it with SOL", "fee_payer", fee.PublicKey().String(), "file", p.FeePayerFile)
	}
	ck, err := loadChallengeKey(p.ChallengeKeyFile, "SCOPE_HYGIENE_X402_CHALLENGE_KEY", getenv)
	if err != nil {
		return nil, err
	}
	rpcURL := p.RPCURL
	if rpcURL == "" {
		rpcURL = nw.DefaultRPC
	}
	rates, err := x402.LoadRates(p.RatesCSV, p.CADBasis)
	if err != nil {
		return nil, err
	}
	cfg := &x402.Config{Network: nw, RPCURL: rpcURL, FeePayer: fee, PayTo: payTo, ChallengeKey: ck, Price: price}
	rpc := x402.NewSolanaRPC(rpcURL)
	g, err := gate.New(cfg, rpc, ss.Settlements(), rates, logger, nil)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	problems, err := x402.Preflight(pctx, cfg, rpc)
	cancel()
	if err != nil {
		logger.Error("x402 startup check could not reach the Solana RPC; payments will answer 503 until it is reachable",
			"network", nw.Name, "rpc_url", rpcURL)
	}
	for _, pr := range problems {
		logger.Error("x402 not ready: " + pr)
	}
	if err == nil && len(problems) == 0 {
		logger.Info("x402 ready", "network", nw.CAIP2, "pay_to", payTo.String(), "fee_payer", fee.PublicKey().String())
	}
	if p.FeeBudget < 0 || p.GlobalFeeBudget < 0 {
		return nil, errors.New("x402: a fee budget cannot be negative")
	}
	g.Settler().FeeBudget = p.FeeBudget
	g.Settler().GlobalFeeBudget = p.GlobalFeeBudget
	go g.Settler().RunReconciler(ctx, p.ReconcileEvery)
	return g, nil
}
