package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
)

// Error reasons. They are the strings of the TS reference (@x402/svm 2.27, "invalid_exact_svm_*")
// where one exists, and our own otherwise. They are static and safe to show to clients.
const (
	ReasonInvalidPayload          = "invalid_payload"
	ReasonInvalidVersion          = "invalid_x402_version"
	ReasonInvalidScheme           = "invalid_scheme"
	ReasonInvalidNetwork          = "invalid_network"
	ReasonNoMatchingRequirements  = "invalid_payment_requirements"
	ReasonMissingFeePayer         = "invalid_exact_svm_payload_missing_fee_payer"
	ReasonFeePayerNotManaged      = "invalid_exact_svm_fee_payer_not_managed_by_facilitator"
	ReasonChallengeInvalid        = "challenge_invalid"
	ReasonChallengeExpired        = "challenge_expired"
	ReasonUndecodable             = "invalid_exact_svm_payload_transaction_could_not_be_decoded"
	ReasonVersion                 = "invalid_exact_svm_payload_transaction_version"
	ReasonLookupTables            = "invalid_exact_svm_payload_address_table_lookups"
	ReasonIndexOutOfRange         = "invalid_exact_svm_payload_account_index_out_of_range"
	ReasonDuplicateAccount        = "invalid_exact_svm_payload_duplicate_account_key"
	ReasonFeePayerMismatch        = "invalid_exact_svm_fee_payer_mismatch"
	ReasonExcessiveSigners        = "invalid_exact_svm_payload_excessive_signers"
	ReasonTooFewSigners           = "invalid_exact_svm_payload_too_few_signers"
	ReasonSignatureInvalid        = "invalid_exact_svm_payload_signature_invalid"
	ReasonFeePayerSlotNotEmpty    = "invalid_exact_svm_payload_fee_payer_signature_present"
	ReasonInstructionsLength      = "invalid_exact_svm_payload_transaction_instructions_length"
	ReasonComputeLimit            = "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction"
	ReasonComputeLimitTooHigh     = "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high"
	ReasonComputePrice            = "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction"
	ReasonComputePriceTooHigh     = "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high"
	ReasonNoTransfer              = "invalid_exact_svm_payload_no_transfer_instruction"
	ReasonToken2022               = "invalid_exact_svm_payload_token_2022_not_accepted"
	ReasonAmountMismatch          = "invalid_exact_svm_payload_amount_mismatch"
	ReasonMintMismatch            = "invalid_exact_svm_payload_mint_mismatch"
	ReasonDecimalsMismatch        = "invalid_exact_svm_payload_decimals_mismatch"
	ReasonRecipientMismatch       = "invalid_exact_svm_payload_recipient_mismatch"
	ReasonFeePayerTransferring    = "invalid_exact_svm_payload_transaction_fee_payer_transferring_funds"
	ReasonAuthorityNotClient      = "invalid_exact_svm_payload_authority_not_client_signer"
	ReasonUnknownFourth           = "invalid_exact_svm_payload_unknown_fourth_instruction"
	ReasonMemoCount               = "invalid_exact_svm_payload_memo_count"
	ReasonMemoMismatch            = "invalid_exact_svm_payload_memo_mismatch"
	ReasonSimulationFailed        = "invalid_exact_svm_transaction_simulation_failed"
	ReasonTransactionFailed       = "invalid_exact_svm_transaction_failed"
	ReasonBlockhashExpired        = "blockhash_expired"
	ReasonDuplicateSettlement     = "duplicate_settlement"
	ReasonSettlementPending       = "settlement_pending"
	ReasonInsufficientFunds       = "insufficient_funds"
	ReasonRPCUnavailable          = "rpc_unavailable"
	ReasonResumeWindowClosed      = "resume_window_closed"
	ReasonResumePayerMismatch     = "resume_payer_mismatch"
	ReasonPayerBusy               = "payer_payment_in_flight"
	ReasonSettlementUnverifiable  = "settlement_unverifiable"
	ReasonTransferNotObservedOnce = "settlement_transfer_not_observed"
)

// Rejection is a refused payment: the checklist item that refused it and a static reason.
type Rejection struct {
	// Item is the checklist item id (C01..C18 of docs/x402.md, S19.. for settlement).
	Item string
	// Reason is the client-facing error reason.
	Reason string
}

// Error implements error with static text only.
func (r *Rejection) Error() string { return "x402: payment refused at " + r.Item + ": " + r.Reason }

func reject(item, reason string) *Rejection { return &Rejection{Item: item, Reason: reason} }

// Verified is a payment that passed every offline check. It holds only payment data.
type Verified struct {
	// Raw is the wire transaction as received (fee-payer slot still empty).
	Raw []byte
	// Message is the exact message bytes every signature covers.
	Message []byte
	// sigOffset is where signature 0 (the fee payer's) starts inside Raw.
	sigOffset int
	// Payer is the client wallet: the TransferChecked authority and second signer.
	Payer solana.PublicKey
	// ClientSignature is the client's signature (slot 1).
	ClientSignature solana.Signature
	// Blockhash is the transaction's recent blockhash.
	Blockhash solana.Hash
	// Challenge is the memo the payment carries (our issued challenge).
	Challenge string
	// ChallengeExpiry is the expiry encoded in the challenge.
	ChallengeExpiry time.Time
	// ChallengeExpired is true when the challenge can no longer be paid: only a payment whose
	// settlement row exists (a resume) may go on.
	ChallengeExpired bool
	// ComputeUnits and MicroLamportsPerCU are the compute budget the client asked for.
	ComputeUnits       uint32
	MicroLamportsPerCU uint64
	// MaxFeeLamports is the most this transaction can cost the fee payer.
	MaxFeeLamports uint64
	// Source and Destination are the token accounts of the transfer.
	Source, Destination solana.PublicKey
}

// Verifier runs the offline checklist against the server's own configuration.
type Verifier struct {
	cfg      *Config
	ch       *Challenger
	feePayer solana.PublicKey
	payToATA solana.PublicKey
}

// NewVerifier returns a Verifier for cfg. The challenger checks extra.memo.
func NewVerifier(cfg *Config, ch *Challenger) (*Verifier, error) {
	ata, err := cfg.PayToATA()
	if err != nil {
		return nil, err
	}
	return &Verifier{cfg: cfg, ch: ch, feePayer: cfg.FeePayer.PublicKey(), payToATA: ata}, nil
}

// VerifyHeader decodes a PAYMENT-SIGNATURE header and runs the full checklist.
func (v *Verifier) VerifyHeader(header string) (*Verified, error) {
	if header == "" {
		return nil, reject("C01", ReasonInvalidPayload)
	}
	p, err := DecodePaymentPayload(header)
	if err != nil {
		return nil, reject("C01", ReasonInvalidPayload)
	}
	return v.VerifyPayload(p)
}

// VerifyPayload runs checklist items C01..C16 on a decoded payload.
func (v *Verifier) VerifyPayload(p *PaymentPayload) (*Verified, error) {
	// C01: version and a transaction present.
	if p.X402Version != Version {
		return nil, reject("C01", ReasonInvalidVersion)
	}
	if p.Payload.Transaction == "" {
		return nil, reject("C01", ReasonInvalidPayload)
	}
	// C02: the accepted requirements are exactly ours (amount, asset, payTo never taken from it).
	a := p.Accepted
	if a.Scheme != SchemeExact {
		return nil, reject("C02", ReasonInvalidScheme)
	}
	if a.Network != v.cfg.Network.CAIP2 {
		return nil, reject("C02", ReasonInvalidNetwork)
	}
	if a.Amount != strconv.FormatUint(v.cfg.Price.Units, 10) || a.Asset != v.cfg.Network.USDCMint.String() ||
		a.PayTo != v.cfg.PayTo.String() || a.MaxTimeoutSeconds != v.cfg.MaxTimeoutSeconds {
		return nil, reject("C02", ReasonNoMatchingRequirements)
	}
	// C03: the fee payer named is the key we hold.
	if a.Extra.FeePayer == "" {
		return nil, reject("C03", ReasonMissingFeePayer)
	}
	if a.Extra.FeePayer != v.feePayer.String() {
		return nil, reject("C03", ReasonFeePayerNotManaged)
	}
	// C02b: the challenge is one we issued and is still payable. An expired one still
	// identifies a payment that may already have settled (a resume, whose window does not
	// depend on the challenge's life): the result carries ChallengeExpired and the caller
	// refuses it unless its settlement row exists.
	exp, err := v.ch.Check(a.Extra.Memo)
	expired := false
	if err != nil {
		if err != ErrChallengeExpired {
			return nil, reject("C02", ReasonChallengeInvalid)
		}
		expired = true
	}
	raw, err := base64.StdEncoding.DecodeString(p.Payload.Transaction)
	if err != nil {
		return nil, reject("C04", ReasonUndecodable)
	}
	ver, err := v.VerifyTransaction(raw, a.Extra.Memo)
	if err != nil {
		return nil, err
	}
	ver.ChallengeExpiry, ver.ChallengeExpired = exp, expired
	return ver, nil
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

// VerifyTransaction runs checklist items C04..C16 on raw wire bytes. wantMemo is the challenge
// the single Memo instruction must carry.
func (v *Verifier) VerifyTransaction(raw []byte, wantMemo string) (*Verified, error) {
	// C04: decodable, canonical, v0 only, no lookup tables.
	if len(raw) == 0 || len(raw) > maxTxBytes {
		return nil, reject("C04", ReasonUndecodable)
	}
	nsig, off, ok := readShortVec(raw)
	if !ok || nsig == 0 || off+64*nsig >= len(raw) {
		return nil, reject("C04", ReasonUndecodable)
	}
	msgStart := off + 64*nsig
	msg := raw[msgStart:]
	if msg[0] != 0x80 {
		return nil, reject("C04", ReasonVersion)
	}
	tx, rem, err := decodeTx(raw)
	if err != nil || rem != 0 || len(tx.Signatures) != nsig {
		return nil, reject("C04", ReasonUndecodable)
	}
	m := &tx.Message
	if !m.IsVersioned() {
		return nil, reject("C04", ReasonVersion)
	}
	if len(m.AddressTableLookups) != 0 {
		return nil, reject("C04", ReasonLookupTables)
	}
	re, err := marshalMessage(m)
	if err != nil || !bytes.Equal(re, msg) {
		return nil, reject("C04", ReasonUndecodable)
	}

	// C05: header and every index bounds-checked before any solana-go helper touches them.
	keys := m.AccountKeys
	nkeys := len(keys)
	h := m.Header
	if int(h.NumRequiredSignatures) != nsig || int(h.NumRequiredSignatures) > nkeys ||
		h.NumReadonlySignedAccounts >= h.NumRequiredSignatures ||
		int(h.NumReadonlyUnsignedAccounts) > nkeys-int(h.NumRequiredSignatures) {
		return nil, reject("C05", ReasonUndecodable)
	}
	seen := make(map[solana.PublicKey]struct{}, nkeys)
	for _, k := range keys {
		if _, dup := seen[k]; dup {
			return nil, reject("C05", ReasonDuplicateAccount)
		}
		seen[k] = struct{}{}
	}
	for _, ix := range m.Instructions {
		if int(ix.ProgramIDIndex) >= nkeys {
			return nil, reject("C05", ReasonIndexOutOfRange)
		}
		for _, a := range ix.Accounts {
			if int(a) >= nkeys {
				return nil, reject("C05", ReasonIndexOutOfRange)
			}
		}
	}

	// C06: our fee payer first, exactly two signers.
	if !keys[0].Equals(v.feePayer) {
		return nil, reject("C06", ReasonFeePayerMismatch)
	}
	if nsig > RequiredSignatures {
		return nil, reject("C06", ReasonExcessiveSigners)
	}
	if nsig < RequiredSignatures {
		return nil, reject("C06", ReasonTooFewSigners)
	}

	// C07: fee-payer slot empty; the client's signature verifies over the exact message bytes.
	if tx.Signatures[0] != (solana.Signature{}) {
		return nil, reject("C07", ReasonFeePayerSlotNotEmpty)
	}
	client := keys[1]
	if !client.Verify(msg, tx.Signatures[1]) {
		return nil, reject("C07", ReasonSignatureInvalid)
	}

	// C16 (count first): exactly one Memo anywhere.
	memos := 0
	for _, ix := range m.Instructions {
		if keys[ix.ProgramIDIndex].Equals(solana.MemoProgramID) {
			memos++
		}
	}
	if memos != 1 {
		return nil, reject("C16", ReasonMemoCount)
	}
	// C08: exactly [limit, price, transfer, memo].
	ixs := m.Instructions
	if len(ixs) != 4 {
		return nil, reject("C08", ReasonInstructionsLength)
	}
	// C15 (global part): the fee payer is in no instruction, as program or account.
	for _, ix := range ixs {
		if ix.ProgramIDIndex == 0 {
			return nil, reject("C15", ReasonFeePayerTransferring)
		}
		for _, a := range ix.Accounts {
			if a == 0 {
				return nil, reject("C15", ReasonFeePayerTransferring)
			}
		}
	}

	// C09: SetComputeUnitLimit, capped.
	ix := ixs[0]
	if !keys[ix.ProgramIDIndex].Equals(solana.ComputeBudget) || len(ix.Accounts) != 0 ||
		len(ix.Data) != 5 || ix.Data[0] != 2 {
		return nil, reject("C09", ReasonComputeLimit)
	}
	units := binary.LittleEndian.Uint32(ix.Data[1:5])
	if units > MaxComputeUnits {
		return nil, reject("C09", ReasonComputeLimitTooHigh)
	}
	// C10: SetComputeUnitPrice, capped, and the priority fee product capped.
	ix = ixs[1]
	if !keys[ix.ProgramIDIndex].Equals(solana.ComputeBudget) || len(ix.Accounts) != 0 ||
		len(ix.Data) != 9 || ix.Data[0] != 3 {
		return nil, reject("C10", ReasonComputePrice)
	}
	price := binary.LittleEndian.Uint64(ix.Data[1:9])
	if price > MaxMicroLamportsPerCU {
		return nil, reject("C10", ReasonComputePriceTooHigh)
	}
	prio := (uint64(units)*price + 999_999) / 1_000_000
	if prio > MaxPriorityFeeLamports {
		return nil, reject("C10", ReasonComputePriceTooHigh)
	}

	// C11: classic-Token TransferChecked, exact shape.
	ix = ixs[2]
	prog := keys[ix.ProgramIDIndex]
	if prog.Equals(solana.Token2022ProgramID) {
		return nil, reject("C11", ReasonToken2022)
	}
	if !prog.Equals(solana.TokenProgramID) || len(ix.Data) != 10 || ix.Data[0] != 12 || len(ix.Accounts) != 4 {
		return nil, reject("C11", ReasonNoTransfer)
	}
	src, mint, dst, auth := keys[ix.Accounts[0]], keys[ix.Accounts[1]], keys[ix.Accounts[2]], keys[ix.Accounts[3]]
	// C12: exact amount.
	if binary.LittleEndian.Uint64(ix.Data[1:9]) != v.cfg.Price.Units {
		return nil, reject("C12", ReasonAmountMismatch)
	}
	// C13: USDC mint, 6 decimals.
	if !mint.Equals(v.cfg.Network.USDCMint) {
		return nil, reject("C13", ReasonMintMismatch)
	}
	if ix.Data[9] != USDCDecimals {
		return nil, reject("C13", ReasonDecimalsMismatch)
	}
	// C14: destination is payTo's associated token account, and not the source.
	if !dst.Equals(v.payToATA) || src.Equals(dst) {
		return nil, reject("C14", ReasonRecipientMismatch)
	}
	// C15 (authority part): the authority is the client, the only other signer.
	if ix.Accounts[3] != 1 || !auth.Equals(client) {
		return nil, reject("C15", ReasonAuthorityNotClient)
	}

	// C16: the fourth instruction is the Memo carrying our challenge verbatim.
	ix = ixs[3]
	if !keys[ix.ProgramIDIndex].Equals(solana.MemoProgramID) {
		return nil, reject("C16", ReasonUnknownFourth)
	}
	if len(ix.Accounts) != 0 || wantMemo == "" || string(ix.Data) != wantMemo {
		return nil, reject("C16", ReasonMemoMismatch)
	}

	return &Verified{
		Raw:                raw,
		Message:            msg,
		sigOffset:          off,
		Payer:              client,
		ClientSignature:    tx.Signatures[1],
		Blockhash:          m.RecentBlockhash,
		Challenge:          wantMemo,
		ComputeUnits:       units,
		MicroLamportsPerCU: price,
		MaxFeeLamports:     5000*uint64(nsig) + prio,
		Source:             src,
		Destination:        dst,
	}, nil
}

// CoSign signs the message with the fee-payer key and returns the fully signed wire bytes and
// the transaction id (signature 0). ed25519 is deterministic, so the id is stable for a payload.
func (ver *Verified) CoSign(key solana.PrivateKey) ([]byte, solana.Signature, error) {
	sig, err := key.Sign(ver.Message)
	if err != nil {
		return nil, solana.Signature{}, fmt.Errorf("x402: co-sign: %w", err)
	}
	out := make([]byte, len(ver.Raw))
	copy(out, ver.Raw)
	copy(out[ver.sigOffset:ver.sigOffset+64], sig[:])
	return out, sig, nil
}
