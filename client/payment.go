package client

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	solana "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/gagliardetto/solana-go/rpc"
)

// The compute budget the x402 reference client (@x402/svm 2.27) sets on an exact payment.
const (
	computeUnitLimit   uint32 = 20000
	microLamportsPerCU uint64 = 1
)

// ChainRPC is what building a payment reads from the chain: the mint (token program, decimals)
// and a recent blockhash. *rpc.Client implements it.
type ChainRPC interface {
	GetAccountInfo(ctx context.Context, account solana.PublicKey) (*rpc.GetAccountInfoResult, error)
	GetLatestBlockhash(ctx context.Context, commitment rpc.CommitmentType) (*rpc.GetLatestBlockhashResult, error)
}

// Offer is a payment requirement the client can pay, with the amount parsed.
type Offer struct {
	Requirements
	// Units is the amount in the asset's smallest units.
	Units uint64
	// Decimals, when not 0, are the decimals the mint must have (the caller's cap counts in them).
	Decimals uint8
}

// ErrNoOffer is returned when a 402 offers no scheme this client pays (exact on Solana).
var ErrNoOffer = errors.New("client: the 402 offers no exact payment on Solana")

// PickOffer chooses the first exact-on-Solana requirement of a 402.
func PickOffer(pr *PaymentRequired) (*Offer, error) {
	if pr.X402Version != 2 {
		return nil, fmt.Errorf("client: the 402 speaks x402 version %d, this client speaks 2", pr.X402Version)
	}
	for _, a := range pr.Accepts {
		if a.Scheme != "exact" || !strings.HasPrefix(a.Network, SolanaChainPrefix) {
			continue
		}
		n, err := strconv.ParseUint(a.Amount, 10, 64)
		if err != nil {
			return nil, errors.New("client: the 402 amount is not an integer number of units")
		}
		return &Offer{Requirements: a, Units: n}, nil
	}
	return nil, ErrNoOffer
}

// BuildPayment builds the exact-SVM payment for o the way the x402 reference client does: a v0
// transaction whose fee payer is the facilitator named in extra.feePayer (its signature slot left
// empty) and whose instructions are exactly [SetComputeUnitLimit, SetComputeUnitPrice,
// TransferChecked from the payer's associated token account to payTo's, Memo], signed by payer.
func BuildPayment(ctx context.Context, chain ChainRPC, o *Offer, payer solana.PrivateKey, resource *Resource) (*PaymentPayload, error) {
	feePayer, err := solana.PublicKeyFromBase58(o.extraString("feePayer"))
	if err != nil {
		return nil, errors.New("client: the 402 names no valid fee payer (extra.feePayer)")
	}
	mint, err := solana.PublicKeyFromBase58(o.Asset)
	if err != nil {
		return nil, errors.New("client: the 402 asset is not a Solana address")
	}
	payTo, err := solana.PublicKeyFromBase58(o.PayTo)
	if err != nil {
		return nil, errors.New("client: the 402 payTo is not a Solana address")
	}
	decimals, err := mintDecimals(ctx, chain, mint, o.Decimals)
	if err != nil {
		return nil, err
	}
	blockhash, err := recentBlockhash(ctx, chain, o)
	if err != nil {
		return nil, err
	}
	memo := o.extraString("memo")
	if memo == "" {
		var nonce [16]byte
		if _, err := rand.Read(nonce[:]); err != nil {
			return nil, err
		}
		memo = hex.EncodeToString(nonce[:])
	}
	owner := payer.PublicKey()
	src, _, err := solana.FindAssociatedTokenAddress(owner, mint)
	if err != nil {
		return nil, fmt.Errorf("client: payer token account: %w", err)
	}
	dst, _, err := solana.FindAssociatedTokenAddress(payTo, mint)
	if err != nil {
		return nil, fmt.Errorf("client: payTo token account: %w", err)
	}
	ixs := []solana.Instruction{
		computebudget.NewSetComputeUnitLimitInstruction(computeUnitLimit).Build(),
		computebudget.NewSetComputeUnitPriceInstruction(microLamportsPerCU).Build(),
		token.NewTransferCheckedInstruction(o.Units, decimals, src, mint, dst, owner, nil).Build(),
		solana.NewInstruction(solana.MemoProgramID, nil, []byte(memo)),
	}
	raw, err := payerSigned(ixs, blockhash, feePayer, payer)
	if err != nil {
		return nil, err
	}
	return &PaymentPayload{X402Version: 2, Resource: resource, Accepted: o.Requirements,
		Payload: ExactPayload{Transaction: base64.StdEncoding.EncodeToString(raw)}}, nil
}

// mintDecimals reads the mint account of a classic SPL Token and returns its decimals, refusing
// decimals other than want (0: any).
func mintDecimals(ctx context.Context, chain ChainRPC, mint solana.PublicKey, want uint8) (uint8, error) {
	acc, err := chain.GetAccountInfo(ctx, mint)
	if err != nil || acc == nil || acc.Value == nil {
		return 0, fmt.Errorf("client: read the mint account: %w", orNotFound(err))
	}
	if !acc.Value.Owner.Equals(solana.TokenProgramID) {
		return 0, errors.New("client: the asset is not a classic SPL Token mint")
	}
	data := acc.Value.Data.GetBinary()
	if len(data) < 82 {
		return 0, errors.New("client: the asset account is not a mint")
	}
	decimals := data[44]
	if want != 0 && decimals != want {
		return 0, fmt.Errorf("client: the asset has %d decimals, the spend cap counts in %d; nothing was signed", decimals, want)
	}
	return decimals, nil
}

// payerSigned builds the v0 transaction of ixs with feePayer paying the fees (its signature slot
// left empty), signs it as payer, and returns its wire bytes.
func payerSigned(ixs []solana.Instruction, blockhash solana.Hash, feePayer solana.PublicKey, payer solana.PrivateKey) ([]byte, error) {
	tx, err := solana.NewTransaction(ixs, blockhash, solana.TransactionPayer(feePayer))
	if err != nil {
		return nil, fmt.Errorf("client: build transaction: %w", err)
	}
	tx.Message.SetVersion(solana.MessageVersionV0)
	owner := payer.PublicKey()
	if _, err := tx.PartialSign(func(k solana.PublicKey) *solana.PrivateKey {
		if k.Equals(owner) {
			return &payer
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("client: sign transaction: %w", err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("client: encode transaction: %w", err)
	}
	return raw, nil
}

// recentBlockhash takes extra.recentBlockhash when the server gave one, else asks the chain.
func recentBlockhash(ctx context.Context, chain ChainRPC, o *Offer) (solana.Hash, error) {
	if s := o.extraString("recentBlockhash"); s != "" {
		if h, err := solana.HashFromBase58(s); err == nil {
			return h, nil
		}
	}
	bh, err := chain.GetLatestBlockhash(ctx, rpc.CommitmentFinalized)
	if err != nil || bh == nil || bh.Value == nil {
		return solana.Hash{}, fmt.Errorf("client: read a recent blockhash: %w", orNotFound(err))
	}
	return bh.Value.Blockhash, nil
}

func orNotFound(err error) error {
	if err == nil {
		return errors.New("not found")
	}
	return err
}
