package x402test

import (
	"bytes"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// TokenAccount is the account an RPC fake answers for a classic-Token account of owner in
// mint holding amount, laid out as the chain stores it (165 bytes).
func TokenAccount(mint, owner solana.PublicKey, amount uint64) *x402.Account {
	var buf bytes.Buffer
	if err := bin.NewBinEncoder(&buf).Encode(token.Account{Mint: mint, Owner: owner, Amount: amount, State: token.Initialized}); err != nil {
		panic(err)
	}
	return &x402.Account{Lamports: 2_039_280, Owner: solana.TokenProgramID, Data: buf.Bytes()}
}
