package x402

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
)

// The offline checklist of one transaction (items C04..C16 of docs/x402.md, after §2.2 of the
// x402-solana spec): one named check per item, run in the checklist's order. A check may rely on
// what the checks before it established (the decoded message, bounded indices, the client's key,
// the compute budget, the transfer), which they leave in the txChecks they share.

// transactionChecklist is the checks in the order they run; the first refusal ends the run.
var transactionChecklist = []func(*txChecks) error{
	(*txChecks).decodable,               // C04
	(*txChecks).indicesInRange,          // C05
	(*txChecks).feePayerFirst,           // C06
	(*txChecks).clientSigned,            // C07
	(*txChecks).oneMemo,                 // C16, the count first
	(*txChecks).fourInstructions,        // C08
	(*txChecks).feePayerInNoInstruction, // C15, the global part
	(*txChecks).computeLimit,            // C09
	(*txChecks).computePrice,            // C10
	(*txChecks).classicTransfer,         // C11
	(*txChecks).exactAmount,             // C12
	(*txChecks).usdcMint,                // C13
	(*txChecks).payToDestination,        // C14
	(*txChecks).clientAuthority,         // C15, the authority part
	(*txChecks).memoIsChallenge,         // C16
}

// txChecks is one transaction under the checklist: its wire bytes, the memo it must carry, and
// what the checks run so far found in it.
type txChecks struct {
	v        *Verifier
	raw      []byte
	wantMemo string

	nsig      int
	sigOffset int
	msg       []byte
	tx        *solana.Transaction
	m         *solana.Message
	keys      solana.PublicKeySlice
	client    solana.PublicKey
	units     uint32
	price     uint64
	prio      uint64
	transfer  solana.CompiledInstruction
	src, dst  solana.PublicKey
}

// verified is the payment the passed checklist describes.
func (c *txChecks) verified() *Verified {
	return &Verified{
		Raw:                c.raw,
		Message:            c.msg,
		sigOffset:          c.sigOffset,
		Payer:              c.client,
		ClientSignature:    c.tx.Signatures[1],
		Blockhash:          c.m.RecentBlockhash,
		Challenge:          c.wantMemo,
		ComputeUnits:       c.units,
		MicroLamportsPerCU: c.price,
		MaxFeeLamports:     5000*uint64(c.nsig) + c.prio,
		Source:             c.src,
		Destination:        c.dst,
	}
}

// program is the program an instruction calls (its index is in range once C05 passed).
func (c *txChecks) program(ix solana.CompiledInstruction) solana.PublicKey {
	return c.keys[ix.ProgramIDIndex]
}

// decodable is C04: decodable, canonical, v0 only, no lookup tables.
func (c *txChecks) decodable() error {
	if len(c.raw) == 0 || len(c.raw) > maxTxBytes {
		return reject("C04", ReasonUndecodable)
	}
	nsig, off, ok := readShortVec(c.raw)
	if !ok || nsig == 0 || off+64*nsig >= len(c.raw) {
		return reject("C04", ReasonUndecodable)
	}
	c.nsig, c.sigOffset, c.msg = nsig, off, c.raw[off+64*nsig:]
	if c.msg[0] != 0x80 {
		return reject("C04", ReasonVersion)
	}
	tx, rem, err := decodeTx(c.raw)
	if err != nil || rem != 0 || len(tx.Signatures) != nsig {
		return reject("C04", ReasonUndecodable)
	}
	c.tx, c.m = tx, &tx.Message
	if !c.m.IsVersioned() {
		return reject("C04", ReasonVersion)
	}
	if len(c.m.AddressTableLookups) != 0 {
		return reject("C04", ReasonLookupTables)
	}
	re, err := marshalMessage(c.m)
	if err != nil || !bytes.Equal(re, c.msg) {
		return reject("C04", ReasonUndecodable)
	}
	c.keys = c.m.AccountKeys
	return nil
}

// indicesInRange is C05: the header sane and every index bounds-checked before any solana-go
// helper touches them, no duplicate keys.
func (c *txChecks) indicesInRange() error {
	nkeys := len(c.keys)
	h := c.m.Header
	if int(h.NumRequiredSignatures) != c.nsig || int(h.NumRequiredSignatures) > nkeys ||
		h.NumReadonlySignedAccounts >= h.NumRequiredSignatures ||
		int(h.NumReadonlyUnsignedAccounts) > nkeys-int(h.NumRequiredSignatures) {
		return reject("C05", ReasonUndecodable)
	}
	seen := make(map[solana.PublicKey]struct{}, nkeys)
	for _, k := range c.keys {
		if _, dup := seen[k]; dup {
			return reject("C05", ReasonDuplicateAccount)
		}
		seen[k] = struct{}{}
	}
	for _, ix := range c.m.Instructions {
		if int(ix.ProgramIDIndex) >= nkeys {
			return reject("C05", ReasonIndexOutOfRange)
		}
		for _, a := range ix.Accounts {
			if int(a) >= nkeys {
				return reject("C05", ReasonIndexOutOfRange)
			}
		}
	}
	return nil
}

// feePayerFirst is C06: our fee payer first, exactly two signers.
func (c *txChecks) feePayerFirst() error {
	if !c.keys[0].Equals(c.v.feePayer) {
		return reject("C06", ReasonFeePayerMismatch)
	}
	if c.nsig > RequiredSignatures {
		return reject("C06", ReasonExcessiveSigners)
	}
	if c.nsig < RequiredSignatures {
		return reject("C06", ReasonTooFewSigners)
	}
	return nil
}

// clientSigned is C07: the fee-payer slot empty; the client's signature verifies over the exact
// message bytes.
func (c *txChecks) clientSigned() error {
	if c.tx.Signatures[0] != (solana.Signature{}) {
		return reject("C07", ReasonFeePayerSlotNotEmpty)
	}
	c.client = c.keys[1]
	if !c.client.Verify(c.msg, c.tx.Signatures[1]) {
		return reject("C07", ReasonSignatureInvalid)
	}
	return nil
}

// oneMemo is the count of C16, checked before the layout: exactly one Memo anywhere.
func (c *txChecks) oneMemo() error {
	memos := 0
	for _, ix := range c.m.Instructions {
		if c.program(ix).Equals(solana.MemoProgramID) {
			memos++
		}
	}
	if memos != 1 {
		return reject("C16", ReasonMemoCount)
	}
	return nil
}

// fourInstructions is C08: exactly [limit, price, transfer, memo].
func (c *txChecks) fourInstructions() error {
	if len(c.m.Instructions) != 4 {
		return reject("C08", ReasonInstructionsLength)
	}
	return nil
}

// feePayerInNoInstruction is the global part of C15: the fee payer is in no instruction, as
// program or account.
func (c *txChecks) feePayerInNoInstruction() error {
	for _, ix := range c.m.Instructions {
		if ix.ProgramIDIndex == 0 {
			return reject("C15", ReasonFeePayerTransferring)
		}
		for _, a := range ix.Accounts {
			if a == 0 {
				return reject("C15", ReasonFeePayerTransferring)
			}
		}
	}
	return nil
}

// computeBudgetArg is the argument of the instruction at index i when it is a ComputeBudget
// instruction of kind disc, n data bytes long with the kind byte, on no account.
func (c *txChecks) computeBudgetArg(i int, disc byte, n int) ([]byte, bool) {
	ix := c.m.Instructions[i]
	if !c.program(ix).Equals(solana.ComputeBudget) || len(ix.Accounts) != 0 || len(ix.Data) != n || ix.Data[0] != disc {
		return nil, false
	}
	return ix.Data[1:], true
}

// computeLimit is C09: SetComputeUnitLimit, capped.
func (c *txChecks) computeLimit() error {
	arg, ok := c.computeBudgetArg(0, 2, 5)
	if !ok {
		return reject("C09", ReasonComputeLimit)
	}
	c.units = binary.LittleEndian.Uint32(arg)
	if c.units > MaxComputeUnits {
		return reject("C09", ReasonComputeLimitTooHigh)
	}
	return nil
}

// computePrice is C10: SetComputeUnitPrice, capped, and the priority fee product capped.
func (c *txChecks) computePrice() error {
	arg, ok := c.computeBudgetArg(1, 3, 9)
	if !ok {
		return reject("C10", ReasonComputePrice)
	}
	c.price = binary.LittleEndian.Uint64(arg)
	if c.price > MaxMicroLamportsPerCU {
		return reject("C10", ReasonComputePriceTooHigh)
	}
	c.prio = (uint64(c.units)*c.price + 999_999) / 1_000_000
	if c.prio > MaxPriorityFeeLamports {
		return reject("C10", ReasonComputePriceTooHigh)
	}
	return nil
}

// classicTransfer is C11: a classic-Token TransferChecked of the exact shape.
func (c *txChecks) classicTransfer() error {
	ix := c.m.Instructions[2]
	prog := c.program(ix)
	if prog.Equals(solana.Token2022ProgramID) {
		return reject("C11", ReasonToken2022)
	}
	if !prog.Equals(solana.TokenProgramID) || len(ix.Data) != 10 || ix.Data[0] != 12 || len(ix.Accounts) != 4 {
		return reject("C11", ReasonNoTransfer)
	}
	c.transfer = ix
	c.src, c.dst = c.keys[ix.Accounts[0]], c.keys[ix.Accounts[2]]
	return nil
}

// exactAmount is C12: the transfer moves exactly the price.
func (c *txChecks) exactAmount() error {
	if binary.LittleEndian.Uint64(c.transfer.Data[1:9]) != c.v.cfg.Price.Units {
		return reject("C12", ReasonAmountMismatch)
	}
	return nil
}

// usdcMint is C13: the USDC mint, 6 decimals.
func (c *txChecks) usdcMint() error {
	if !c.keys[c.transfer.Accounts[1]].Equals(c.v.cfg.Network.USDCMint) {
		return reject("C13", ReasonMintMismatch)
	}
	if c.transfer.Data[9] != USDCDecimals {
		return reject("C13", ReasonDecimalsMismatch)
	}
	return nil
}

// payToDestination is C14: the destination is payTo's associated token account, and not the
// source.
func (c *txChecks) payToDestination() error {
	if !c.dst.Equals(c.v.payToATA) || c.src.Equals(c.dst) {
		return reject("C14", ReasonRecipientMismatch)
	}
	return nil
}

// clientAuthority is the authority part of C15: the authority is the client, the only other
// signer.
func (c *txChecks) clientAuthority() error {
	if c.transfer.Accounts[3] != 1 || !c.keys[c.transfer.Accounts[3]].Equals(c.client) {
		return reject("C15", ReasonAuthorityNotClient)
	}
	return nil
}

// memoIsChallenge is C16: the fourth instruction is the Memo carrying our challenge verbatim.
func (c *txChecks) memoIsChallenge() error {
	ix := c.m.Instructions[3]
	if !c.program(ix).Equals(solana.MemoProgramID) {
		return reject("C16", ReasonUnknownFourth)
	}
	if len(ix.Accounts) != 0 || c.wantMemo == "" || string(ix.Data) != c.wantMemo {
		return reject("C16", ReasonMemoMismatch)
	}
	return nil
}

// maxTxBytes is the Solana packet limit for a serialised transaction.
const maxTxBytes = 1232

// readShortVec decodes a compact-u16 length prefix.
func readShortVec(b []byte) (n, size int, ok bool) {
	for i := 0; i < 3; i++ {
		if i >= len(b) {
			return 0, 0, false
		}
		n |= int(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return n, i + 1, true
		}
	}
	return 0, 0, false
}

// decodeTx decodes a wire transaction, converting any panic of the decoder into an error.
func decodeTx(raw []byte) (tx *solana.Transaction, remaining int, err error) {
	defer func() {
		if r := recover(); r != nil {
			tx, err = nil, fmt.Errorf("x402: transaction decoder panicked")
		}
	}()
	dec := bin.NewBinDecoder(raw)
	tx, err = solana.TransactionFromDecoder(dec)
	if err != nil {
		return nil, 0, fmt.Errorf("x402: decode transaction: %w", err)
	}
	return tx, dec.Remaining(), nil
}

// marshalMessage re-encodes a message, converting any panic into an error.
func marshalMessage(m *solana.Message) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("x402: message encoder panicked")
		}
	}()
	return m.MarshalBinary()
}
