package x402

import (
	"encoding/base64"
	"encoding/binary"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/token"
)

// kit is a deterministic payment world for unit tests: our keys, a client, a fixed clock.
type kit struct {
	cfg    *Config
	ch     *Challenger
	v      *Verifier
	client solana.PrivateKey
	memo   string
	now    time.Time
}

func keyFromSeed(b byte) solana.PrivateKey {
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = b
	}
	// ed25519 private key = seed || public key; derive via the std library through solana-go.
	k, err := solana.PrivateKeyFromBase58(solana.PrivateKey(ed25519Key(seed)).String())
	if err != nil {
		panic(err)
	}
	return k
}

// testPriceUnits is the price the unit tests configure (the served price comes from the criteria).
const testPriceUnits uint64 = 50000

func newKit(t testing.TB) *kit {
	t.Helper()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cfg := &Config{
		Network:      Devnet,
		Price:        Price{Units: testPriceUnits, Label: "$0.05", Status: "RULED"},
		ResourceURL:  "http://127.0.0.1:8080/audit",
		RPCURL:       "http://127.0.0.1:1",
		FeePayer:     keyFromSeed(1),
		PayTo:        keyFromSeed(2).PublicKey(),
		ChallengeKey: []byte("0123456789abcdef0123456789abcdef"),
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ch := NewChallenger(cfg, func() time.Time { return now })
	v, err := NewVerifier(cfg, ch)
	if err != nil {
		t.Fatal(err)
	}
	memo, _, err := ch.Issue()
	if err != nil {
		t.Fatal(err)
	}
	return &kit{cfg: cfg, ch: ch, v: v, client: keyFromSeed(3), memo: memo, now: now}
}

// parts is one transaction under construction; tests mutate it before it is built.
type parts struct {
	feePayer solana.PublicKey
	ixs      []solana.Instruction
	signers  []solana.PrivateKey
	legacy   bool
	// msgMut edits the compiled message before it is serialised.
	msgMut func(*solana.Message)
	// bytesMut edits the serialised message before it is signed.
	bytesMut func([]byte) []byte
	// rawMut edits the final wire bytes.
	rawMut func([]byte) []byte
	// sigMut edits the signatures after signing.
	sigMut func([]solana.Signature) []solana.Signature
}

func (k *kit) ata(owner solana.PublicKey) solana.PublicKey {
	a, _, err := solana.FindAssociatedTokenAddress(owner, k.cfg.Network.USDCMint)
	if err != nil {
		panic(err)
	}
	return a
}

func (k *kit) transfer(amount uint64, decimals uint8, src, mint, dst, owner solana.PublicKey) solana.Instruction {
	return token.NewTransferCheckedInstruction(amount, decimals, src, mint, dst, owner, nil).Build()
}

func memoIx(text string) solana.Instruction {
	return solana.NewInstruction(solana.MemoProgramID, nil, []byte(text))
}

func limitIx(units uint32) solana.Instruction {
	return computebudget.NewSetComputeUnitLimitInstruction(units).Build()
}

func priceIx(micro uint64) solana.Instruction {
	return computebudget.NewSetComputeUnitPriceInstruction(micro).Build()
}

// valid returns the parts of the payment the real x402 client builds.
func (k *kit) valid() *parts {
	c := k.client.PublicKey()
	return &parts{
		feePayer: k.cfg.FeePayer.PublicKey(),
		ixs: []solana.Instruction{
			limitIx(20000),
			priceIx(1),
			k.transfer(testPriceUnits, 6, k.ata(c), k.cfg.Network.USDCMint, k.ata(k.cfg.PayTo), c),
			memoIx(k.memo),
		},
		signers: []solana.PrivateKey{k.client},
	}
}

func shortVec(n int) []byte {
	var out []byte
	for {
		b := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

// build serialises p into wire bytes, signing every signer slot it holds a key for.
func (k *kit) build(t testing.TB, p *parts) []byte {
	t.Helper()
	bh := solana.HashFromBytes(make([]byte, 32))
	bh[0] = 7
	tx, err := solana.NewTransaction(p.ixs, bh, solana.TransactionPayer(p.feePayer))
	if err != nil {
		t.Fatal(err)
	}
	if !p.legacy {
		tx.Message.SetVersion(solana.MessageVersionV0)
	}
	if p.msgMut != nil {
		p.msgMut(&tx.Message)
	}
	msg, err := tx.Message.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if p.bytesMut != nil {
		msg = p.bytesMut(msg)
	}
	n := int(tx.Message.Header.NumRequiredSignatures)
	sigs := make([]solana.Signature, n)
	for i := 0; i < n && i < len(tx.Message.AccountKeys); i++ {
		for _, s := range p.signers {
			if s.PublicKey().Equals(tx.Message.AccountKeys[i]) {
				sig, err := s.Sign(msg)
				if err != nil {
					t.Fatal(err)
				}
				sigs[i] = sig
			}
		}
	}
	if p.sigMut != nil {
		sigs = p.sigMut(sigs)
	}
	raw := shortVec(len(sigs))
	for _, s := range sigs {
		raw = append(raw, s[:]...)
	}
	raw = append(raw, msg...)
	if p.rawMut != nil {
		raw = p.rawMut(raw)
	}
	return raw
}

// payload wraps raw wire bytes into a PaymentPayload accepting our current requirements.
func (k *kit) payload(raw []byte) *PaymentPayload {
	return &PaymentPayload{
		X402Version: 2,
		Resource:    &Resource{URL: "/audit"},
		Accepted:    k.cfg.Requirements(k.memo),
		Payload:     ExactPayload{Transaction: base64.StdEncoding.EncodeToString(raw)},
	}
}

func (k *kit) header(t testing.TB, p *PaymentPayload) string {
	t.Helper()
	h, err := EncodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func le32(v uint32) []byte { b := make([]byte, 4); binary.LittleEndian.PutUint32(b, v); return b }
