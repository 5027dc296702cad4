package x402

import (
	"context"
	"fmt"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"
)

// MinFeePayerLamports is the SOL float below which the startup check warns: 0.01 SOL pays for
// about a thousand payments at the client's default compute budget (10 001 lamports each).
const MinFeePayerLamports = 10_000_000

// Preflight checks, at start, that payTo's USDC associated token account exists (the x402 client
// never creates it) and that the fee payer holds enough SOL. It returns plain-language problems
// (empty when ready) and an error only when the RPC could not be asked.
func Preflight(ctx context.Context, cfg *Config, r RPC) ([]string, error) {
	var problems []string
	ata, err := cfg.PayToATA()
	if err != nil {
		return nil, err
	}
	acc, err := r.Account(ctx, ata)
	if err != nil {
		return nil, fmt.Errorf("x402: preflight: %w", err)
	}
	switch {
	case acc == nil:
		problems = append(problems, fmt.Sprintf("payTo wallet %s has no USDC token account (%s) on %s: payments cannot arrive; create it (e.g. spl-token create-account %s --owner %s)",
			cfg.PayTo, ata, cfg.Network.Name, cfg.Network.USDCMint, cfg.PayTo))
	case !acc.Owner.Equals(solana.TokenProgramID):
		problems = append(problems, fmt.Sprintf("payTo token account %s is not owned by the classic Token program", ata))
	default:
		var ta token.Account
		if err := bin.NewBinDecoder(acc.Data).Decode(&ta); err != nil || !ta.Mint.Equals(cfg.Network.USDCMint) || !ta.Owner.Equals(cfg.PayTo) {
			problems = append(problems, fmt.Sprintf("payTo token account %s is not a USDC account of %s", ata, cfg.PayTo))
		}
	}
	fee := cfg.FeePayer.PublicKey()
	facc, err := r.Account(ctx, fee)
	if err != nil {
		return nil, fmt.Errorf("x402: preflight: %w", err)
	}
	var lamports uint64
	if facc != nil {
		lamports = facc.Lamports
	}
	if lamports < MinFeePayerLamports {
		hint := ""
		if cfg.Network.Name == "devnet" {
			hint = fmt.Sprintf(" (devnet: solana airdrop 1 %s --url devnet)", fee)
		}
		problems = append(problems, fmt.Sprintf("fee payer %s holds %d lamports, below the %d needed to pay transaction fees; fund it with SOL%s",
			fee, lamports, MinFeePayerLamports, hint))
	}
	return problems, nil
}
