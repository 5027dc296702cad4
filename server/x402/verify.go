package x402

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"time"

	solana "github.com/gagliardetto/solana-go"
)

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

// VerifyTransaction runs checklist items C04..C16 on raw wire bytes. wantMemo is the challenge
// the single Memo instruction must carry.
func (v *Verifier) VerifyTransaction(raw []byte, wantMemo string) (*Verified, error) {
	c := &txChecks{v: v, raw: raw, wantMemo: wantMemo}
	for _, check := range transactionChecklist {
		if err := check(c); err != nil {
			return nil, err
		}
	}
	return c.verified(), nil
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
