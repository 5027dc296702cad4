package x402

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
)

// RPC is the small JSON-RPC surface settlement and the startup checks need. SolanaRPC implements
// it over solana-go; tests use fakes or a local facade. Implementations return ErrTxNotFound when
// a transaction is not (yet) visible.
type RPC interface {
	// IsBlockhashValid reports whether a transaction with this blockhash can still land.
	IsBlockhashValid(ctx context.Context, h solana.Hash) (bool, error)
	// LatestBlockhash returns the newest blockhash and its last valid block height.
	LatestBlockhash(ctx context.Context) (solana.Hash, uint64, error)
	// BlockHeight returns the current block height (confirmed).
	BlockHeight(ctx context.Context) (uint64, error)
	// Simulate simulates a fully signed transaction with signature verification. A non-nil
	// TxError means the transaction would fail.
	Simulate(ctx context.Context, raw []byte) (TxError, error)
	// Send broadcasts raw bytes without preflight (we simulated) and returns the signature.
	Send(ctx context.Context, raw []byte) (solana.Signature, error)
	// Status returns the signature's status searching history, or nil when unknown.
	Status(ctx context.Context, sig solana.Signature) (*SigStatus, error)
	// Transaction fetches a landed transaction (base64, max supported version 0).
	Transaction(ctx context.Context, sig solana.Signature) (*Outcome, error)
	// Account returns an account's lamports, owner and data, or nil when it does not exist
	// (the startup checks, the caller's token account, and the payer's balance right before
	// a broadcast).
	Account(ctx context.Context, pk solana.PublicKey) (*Account, error)
}

// TxError is a transaction error as the RPC renders it (e.g. "BlockhashNotFound" or
// {"InstructionError":[2,{"Custom":1}]}); nil means success.
type TxError any

// SigStatus is one getSignatureStatuses entry.
type SigStatus struct {
	Slot         uint64
	Err          TxError
	Confirmation string // processed, confirmed, finalized
}

// Confirmed reports whether the status is at least "confirmed".
func (s *SigStatus) Confirmed() bool {
	return s.Confirmation == string(rpc.ConfirmationStatusConfirmed) || s.Confirmation == string(rpc.ConfirmationStatusFinalized)
}

// Account is the part of an account the startup checks read.
type Account struct {
	Lamports uint64
	Owner    solana.PublicKey
	Data     []byte
}

// TokenBalance is one pre/post token balance entry of a landed transaction.
type TokenBalance struct {
	Owner  solana.PublicKey
	Mint   solana.PublicKey
	Amount *big.Int
}

// Outcome is what settlement reads from getTransaction.
type Outcome struct {
	Slot      uint64
	Fee       uint64
	Err       TxError
	Pre, Post []TokenBalance
}

// ErrTxNotFound is returned by RPC.Transaction while the transaction is not visible.
var ErrTxNotFound = errors.New("x402: transaction not found")

// TokenDelta returns post − pre of owner's balance in mint (a missing entry counts as 0).
func (o *Outcome) TokenDelta(owner, mint solana.PublicKey) *big.Int {
	sum := func(bs []TokenBalance) *big.Int {
		t := new(big.Int)
		for _, b := range bs {
			if b.Owner.Equals(owner) && b.Mint.Equals(mint) && b.Amount != nil {
				t.Add(t, b.Amount)
			}
		}
		return t
	}
	return new(big.Int).Sub(sum(o.Post), sum(o.Pre))
}

// OutcomeFromMeta converts solana-go's metadata fields into an Outcome (shared by the base64
// and jsonParsed forms, whose token balances have the same shape).
func OutcomeFromMeta(slot, fee uint64, txErr any, pre, post []rpc.TokenBalance) (*Outcome, error) {
	conv := func(in []rpc.TokenBalance) ([]TokenBalance, error) {
		out := make([]TokenBalance, 0, len(in))
		for _, b := range in {
			tb := TokenBalance{Mint: b.Mint}
			if b.Owner != nil {
				tb.Owner = *b.Owner
			}
			if b.UiTokenAmount == nil {
				return nil, errors.New("x402: token balance without amount")
			}
			a, ok := new(big.Int).SetString(b.UiTokenAmount.Amount, 10)
			if !ok {
				return nil, errors.New("x402: token balance amount is not an integer")
			}
			tb.Amount = a
			out = append(out, tb)
		}
		return out, nil
	}
	p, err := conv(pre)
	if err != nil {
		return nil, err
	}
	q, err := conv(post)
	if err != nil {
		return nil, err
	}
	return &Outcome{Slot: slot, Fee: fee, Err: txErr, Pre: p, Post: q}, nil
}

// SolanaRPC implements RPC over solana-go's JSON-RPC client.
type SolanaRPC struct {
	c *rpc.Client
}

// NewSolanaRPC returns an RPC for the endpoint url.
func NewSolanaRPC(url string) *SolanaRPC { return &SolanaRPC{c: rpc.New(url)} }

// IsBlockhashValid implements RPC.
func (s *SolanaRPC) IsBlockhashValid(ctx context.Context, h solana.Hash) (bool, error) {
	r, err := s.c.IsBlockhashValid(ctx, h, rpc.CommitmentProcessed)
	if err != nil {
		return false, fmt.Errorf("x402: isBlockhashValid: %w", err)
	}
	return r.Value, nil
}

// LatestBlockhash implements RPC.
func (s *SolanaRPC) LatestBlockhash(ctx context.Context) (solana.Hash, uint64, error) {
	r, err := s.c.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return solana.Hash{}, 0, fmt.Errorf("x402: getLatestBlockhash: %w", err)
	}
	return r.Value.Blockhash, r.Value.LastValidBlockHeight, nil
}

// BlockHeight implements RPC.
func (s *SolanaRPC) BlockHeight(ctx context.Context) (uint64, error) {
	h, err := s.c.GetBlockHeight(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return 0, fmt.Errorf("x402: getBlockHeight: %w", err)
	}
	return h, nil
}

// Simulate implements RPC.
func (s *SolanaRPC) Simulate(ctx context.Context, raw []byte) (TxError, error) {
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("x402: simulate: decode: %w", err)
	}
	r, err := s.c.SimulateTransactionWithOpts(ctx, tx, &rpc.SimulateTransactionOpts{SigVerify: true, Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		return nil, fmt.Errorf("x402: simulateTransaction: %w", err)
	}
	if r.Value == nil {
		return nil, errors.New("x402: simulateTransaction: empty result")
	}
	return r.Value.Err, nil
}

// Send implements RPC.
func (s *SolanaRPC) Send(ctx context.Context, raw []byte) (solana.Signature, error) {
	zero := uint(0)
	sig, err := s.c.SendRawTransactionWithOpts(ctx, raw, rpc.TransactionOpts{SkipPreflight: true, PreflightCommitment: rpc.CommitmentConfirmed, MaxRetries: &zero})
	if err != nil {
		return solana.Signature{}, fmt.Errorf("x402: sendTransaction: %w", err)
	}
	return sig, nil
}

// Status implements RPC.
func (s *SolanaRPC) Status(ctx context.Context, sig solana.Signature) (*SigStatus, error) {
	r, err := s.c.GetSignatureStatuses(ctx, true, sig)
	if err != nil {
		return nil, fmt.Errorf("x402: getSignatureStatuses: %w", err)
	}
	if r == nil || len(r.Value) == 0 || r.Value[0] == nil {
		return nil, nil
	}
	v := r.Value[0]
	return &SigStatus{Slot: v.Slot, Err: v.Err, Confirmation: string(v.ConfirmationStatus)}, nil
}

// Transaction implements RPC.
func (s *SolanaRPC) Transaction(ctx context.Context, sig solana.Signature) (*Outcome, error) {
	v := uint64(0)
	r, err := s.c.GetTransaction(ctx, sig, &rpc.GetTransactionOpts{
		Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed, MaxSupportedTransactionVersion: &v})
	if errors.Is(err, rpc.ErrNotFound) {
		return nil, ErrTxNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("x402: getTransaction: %w", err)
	}
	if r.Meta == nil {
		return nil, errors.New("x402: getTransaction: no meta")
	}
	return OutcomeFromMeta(r.Slot, r.Meta.Fee, r.Meta.Err, r.Meta.PreTokenBalances, r.Meta.PostTokenBalances)
}

// Account implements RPC. It reads at "processed": the balance check right before a broadcast
// must see a transfer out of the payer's account as soon as the node has it.
func (s *SolanaRPC) Account(ctx context.Context, pk solana.PublicKey) (*Account, error) {
	r, err := s.c.GetAccountInfoWithOpts(ctx, pk, &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentProcessed})
	if errors.Is(err, rpc.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("x402: getAccountInfo: %w", err)
	}
	if r == nil || r.Value == nil {
		return nil, nil
	}
	return &Account{Lamports: r.Value.Lamports, Owner: r.Value.Owner, Data: r.Value.Data.GetBinary()}, nil
}

// isRPCReply reports whether err is a JSON-RPC error object answered by the node (as opposed
// to a transport failure).
func isRPCReply(err error) bool {
	var re *jsonrpc.RPCError
	return errors.As(err, &re)
}

// errJSON renders a TxError compactly for classification.
func errJSON(e TxError) string {
	b, err := json.Marshal(e)
	if err != nil {
		return ""
	}
	return string(b)
}
