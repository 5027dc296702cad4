package x402

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"
)

func TestVerifyAcceptsClientLayout(t *testing.T) {
	k := newKit(t)
	raw := k.build(t, k.valid())
	ver, err := k.v.VerifyHeader(k.header(t, k.payload(raw)))
	if err != nil {
		t.Fatalf("valid payment refused: %v", err)
	}
	if !ver.Payer.Equals(k.client.PublicKey()) {
		t.Fatalf("payer = %s, want the client", ver.Payer)
	}
	if ver.MaxFeeLamports != 10001 {
		t.Fatalf("max fee = %d, want 10001", ver.MaxFeeLamports)
	}
	signed, sig, err := ver.CoSign(k.cfg.FeePayer)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := solana.TransactionFromBytes(signed)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Signatures[0] != sig {
		t.Fatal("co-signature not placed in slot 0")
	}
	if err := tx.VerifySignatures(); err != nil {
		t.Fatalf("co-signed transaction does not verify: %v", err)
	}
	_, sig2, _ := ver.CoSign(k.cfg.FeePayer)
	if sig2 != sig {
		t.Fatal("transaction id is not deterministic")
	}
}

// TestChecklistMutations applies one mutation per checklist item to the client's layout and
// expects each to be refused at that item with its reason.
func TestChecklistMutations(t *testing.T) {
	k := newKit(t)
	c := k.client.PublicKey()
	fee := k.cfg.FeePayer.PublicKey()
	usdc := k.cfg.Network.USDCMint
	payToATA := k.ata(k.cfg.PayTo)
	other := keyFromSeed(9)

	type tc struct {
		name   string
		parts  func(p *parts)          // mutate the transaction
		pay    func(p *PaymentPayload) // mutate the payload
		header func(h string) string   // mutate the header text
		item   string
		reason string
	}
	cases := []tc{
		{name: "C01_header_not_base64", header: func(string) string { return "%%%" }, item: "C01", reason: ReasonInvalidPayload},
		{name: "C01_header_too_large", header: func(string) string { return strings.Repeat("A", MaxHeaderBytes+4) }, item: "C01", reason: ReasonInvalidPayload},
		{name: "C01_version_1", pay: func(p *PaymentPayload) { p.X402Version = 1 }, item: "C01", reason: ReasonInvalidVersion},
		{name: "C01_no_transaction", pay: func(p *PaymentPayload) { p.Payload.Transaction = "" }, item: "C01", reason: ReasonInvalidPayload},
		{name: "C02_scheme_upto", pay: func(p *PaymentPayload) { p.Accepted.Scheme = "upto" }, item: "C02", reason: ReasonInvalidScheme},
		{name: "C02_network_mainnet", pay: func(p *PaymentPayload) { p.Accepted.Network = Mainnet.CAIP2 }, item: "C02", reason: ReasonInvalidNetwork},
		{name: "C02_accepted_amount", pay: func(p *PaymentPayload) { p.Accepted.Amount = "1" }, item: "C02", reason: ReasonNoMatchingRequirements},
		{name: "C02_accepted_asset", pay: func(p *PaymentPayload) { p.Accepted.Asset = Mainnet.USDCMint.String() }, item: "C02", reason: ReasonNoMatchingRequirements},
		{name: "C02_accepted_payTo", pay: func(p *PaymentPayload) { p.Accepted.PayTo = other.PublicKey().String() }, item: "C02", reason: ReasonNoMatchingRequirements},
		{name: "C02_accepted_timeout", pay: func(p *PaymentPayload) { p.Accepted.MaxTimeoutSeconds = 3600 }, item: "C02", reason: ReasonNoMatchingRequirements},
		{name: "C02_challenge_forged", pay: func(p *PaymentPayload) { p.Accepted.Extra.Memo = forgeMemo(k.memo) }, item: "C02", reason: ReasonChallengeInvalid},
		{name: "C02_challenge_missing", pay: func(p *PaymentPayload) { p.Accepted.Extra.Memo = "" }, item: "C02", reason: ReasonChallengeInvalid},
		{name: "C03_fee_payer_missing", pay: func(p *PaymentPayload) { p.Accepted.Extra.FeePayer = "" }, item: "C03", reason: ReasonMissingFeePayer},
		{name: "C03_fee_payer_not_ours", pay: func(p *PaymentPayload) { p.Accepted.Extra.FeePayer = other.PublicKey().String() }, item: "C03", reason: ReasonFeePayerNotManaged},
		{name: "C04_transaction_not_base64", pay: func(p *PaymentPayload) { p.Payload.Transaction = "***" }, item: "C04", reason: ReasonUndecodable},
		{name: "C04_trailing_bytes", parts: func(p *parts) { p.rawMut = func(b []byte) []byte { return append(b, 0) } }, item: "C04", reason: ReasonUndecodable},
		{name: "C04_truncated", parts: func(p *parts) { p.rawMut = func(b []byte) []byte { return b[:len(b)-3] } }, item: "C04", reason: ReasonUndecodable},
		{name: "C04_legacy_message", parts: func(p *parts) { p.legacy = true }, item: "C04", reason: ReasonVersion},
		{name: "C04_v1_message", parts: func(p *parts) { p.bytesMut = func(b []byte) []byte { b[0] = 0x81; return b } }, item: "C04", reason: ReasonVersion},
		{name: "C04_address_table_lookups", parts: func(p *parts) {
			p.msgMut = func(m *solana.Message) {
				m.AddressTableLookups = solana.MessageAddressTableLookupSlice{{AccountKey: other.PublicKey(), WritableIndexes: []uint8{0}}}
			}
		}, item: "C04", reason: ReasonLookupTables},
		{name: "C04_non_canonical_shortvec", parts: func(p *parts) {
			// Re-encode the account-key count (byte 4 of a v0 message) as a two-byte shortvec.
			p.bytesMut = func(b []byte) []byte {
				out := append([]byte{}, b[:4]...)
				out = append(out, b[4]|0x80, 0x00)
				return append(out, b[5:]...)
			}
		}, item: "C04", reason: ReasonUndecodable},
		{name: "C05_program_index_out_of_range", parts: func(p *parts) {
			p.msgMut = func(m *solana.Message) { m.Instructions[3].ProgramIDIndex = 200 }
		}, item: "C05", reason: ReasonIndexOutOfRange},
		{name: "C05_account_index_out_of_range", parts: func(p *parts) {
			p.msgMut = func(m *solana.Message) { m.Instructions[2].Accounts[1] = 60000 }
		}, item: "C05", reason: ReasonIndexOutOfRange},
		{name: "C05_duplicate_account_key", parts: func(p *parts) {
			p.msgMut = func(m *solana.Message) { m.AccountKeys = append(m.AccountKeys, m.AccountKeys[2]) }
		}, item: "C05", reason: ReasonDuplicateAccount},
		{name: "C05_required_signatures_exceed_keys", parts: func(p *parts) {
			p.msgMut = func(m *solana.Message) { m.Header.NumRequiredSignatures = 12 }
			p.sigMut = func(s []solana.Signature) []solana.Signature { return make([]solana.Signature, 12) }
		}, item: "C05", reason: ReasonUndecodable},
		{name: "C05_fee_payer_readonly", parts: func(p *parts) {
			p.msgMut = func(m *solana.Message) { m.Header.NumReadonlySignedAccounts = 2 }
		}, item: "C05", reason: ReasonUndecodable},
		{name: "C05_signature_count_mismatch", parts: func(p *parts) {
			p.sigMut = func(s []solana.Signature) []solana.Signature { return s[:1] }
		}, item: "C05", reason: ReasonUndecodable},
		{name: "C06_fee_payer_not_first", parts: func(p *parts) { p.feePayer = c }, item: "C06", reason: ReasonFeePayerMismatch},
		{name: "C06_three_signers", parts: func(p *parts) {
			p.ixs[3] = solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{{PublicKey: other.PublicKey(), IsSigner: true}}, []byte(k.memo))
			p.signers = append(p.signers, other)
		}, item: "C06", reason: ReasonExcessiveSigners},
		{name: "C06_client_not_signer", parts: func(p *parts) {
			p.msgMut = func(m *solana.Message) { m.Header.NumRequiredSignatures = 1; m.Header.NumReadonlySignedAccounts = 0 }
		}, item: "C06", reason: ReasonTooFewSigners},
		{name: "C07_client_signature_invalid", parts: func(p *parts) {
			p.sigMut = func(s []solana.Signature) []solana.Signature { s[1][5] ^= 1; return s }
		}, item: "C07", reason: ReasonSignatureInvalid},
		{name: "C07_signed_by_other_key", parts: func(p *parts) { p.signers = []solana.PrivateKey{other} }, item: "C07", reason: ReasonSignatureInvalid},
		{name: "C07_fee_payer_slot_filled", parts: func(p *parts) {
			p.sigMut = func(s []solana.Signature) []solana.Signature { s[0][0] = 1; return s }
		}, item: "C07", reason: ReasonFeePayerSlotNotEmpty},
		{name: "C08_extra_instruction", parts: func(p *parts) {
			p.ixs = append(p.ixs, limitIx(1))
		}, item: "C08", reason: ReasonInstructionsLength},
		{name: "C08_missing_price_instruction", parts: func(p *parts) { p.ixs = append(p.ixs[:1], p.ixs[2:]...) }, item: "C08", reason: ReasonInstructionsLength},
		{name: "C09_limit_not_first", parts: func(p *parts) { p.ixs[0], p.ixs[1] = p.ixs[1], p.ixs[0] }, item: "C09", reason: ReasonComputeLimit},
		{name: "C09_limit_too_high", parts: func(p *parts) { p.ixs[0] = limitIx(1_400_000) }, item: "C09", reason: ReasonComputeLimitTooHigh},
		{name: "C09_limit_with_account", parts: func(p *parts) {
			p.ixs[0] = solana.NewInstruction(solana.ComputeBudget, solana.AccountMetaSlice{{PublicKey: other.PublicKey()}}, append([]byte{2}, le32(20000)...))
		}, item: "C09", reason: ReasonComputeLimit},
		{name: "C10_price_wrong_discriminator", parts: func(p *parts) {
			p.ixs[1] = solana.NewInstruction(solana.ComputeBudget, nil, []byte{1, 0, 0, 1, 0, 0, 0, 0, 0})
		}, item: "C10", reason: ReasonComputePrice},
		{name: "C10_price_too_high", parts: func(p *parts) { p.ixs[1] = priceIx(MaxMicroLamportsPerCU + 1) }, item: "C10", reason: ReasonComputePriceTooHigh},
		{name: "C10_priority_fee_product_too_high", parts: func(p *parts) {
			p.ixs[0] = limitIx(40000)
			p.ixs[1] = priceIx(200_000) // 8 000 lamports priority fee
		}, item: "C10", reason: ReasonComputePriceTooHigh},
		{name: "C11_token_2022", parts: func(p *parts) {
			ix := k.transfer(testPriceUnits, 6, k.ata(c), usdc, payToATA, c)
			d, _ := ix.Data()
			p.ixs[2] = solana.NewInstruction(solana.Token2022ProgramID, ix.Accounts(), d)
		}, item: "C11", reason: ReasonToken2022},
		{name: "C11_plain_transfer", parts: func(p *parts) {
			p.ixs[2] = solana.NewInstruction(solana.TokenProgramID, solana.AccountMetaSlice{
				{PublicKey: k.ata(c), IsWritable: true}, {PublicKey: payToATA, IsWritable: true}, {PublicKey: c, IsSigner: true}},
				[]byte{3, 0x50, 0xc3, 0, 0, 0, 0, 0, 0})
		}, item: "C11", reason: ReasonNoTransfer},
		{name: "C11_multisig_extra_account", parts: func(p *parts) {
			ix := k.transfer(testPriceUnits, 6, k.ata(c), usdc, payToATA, c)
			d, _ := ix.Data()
			p.ixs[2] = solana.NewInstruction(solana.TokenProgramID, append(ix.Accounts(), &solana.AccountMeta{PublicKey: other.PublicKey()}), d)
		}, item: "C11", reason: ReasonNoTransfer},
		{name: "C11_trailing_data", parts: func(p *parts) {
			ix := k.transfer(testPriceUnits, 6, k.ata(c), usdc, payToATA, c)
			d, _ := ix.Data()
			p.ixs[2] = solana.NewInstruction(solana.TokenProgramID, ix.Accounts(), append(d, 0))
		}, item: "C11", reason: ReasonNoTransfer},
		{name: "C11_other_program", parts: func(p *parts) {
			ix := k.transfer(testPriceUnits, 6, k.ata(c), usdc, payToATA, c)
			d, _ := ix.Data()
			p.ixs[2] = solana.NewInstruction(other.PublicKey(), ix.Accounts(), d)
		}, item: "C11", reason: ReasonNoTransfer},
		{name: "C12_amount_low", parts: func(p *parts) { p.ixs[2] = k.transfer(testPriceUnits-1, 6, k.ata(c), usdc, payToATA, c) }, item: "C12", reason: ReasonAmountMismatch},
		{name: "C12_amount_high", parts: func(p *parts) { p.ixs[2] = k.transfer(testPriceUnits+1, 6, k.ata(c), usdc, payToATA, c) }, item: "C12", reason: ReasonAmountMismatch},
		{name: "C13_wrong_mint", parts: func(p *parts) {
			p.ixs[2] = k.transfer(testPriceUnits, 6, k.ata(c), Mainnet.USDCMint, payToATA, c)
		}, item: "C13", reason: ReasonMintMismatch},
		{name: "C13_wrong_decimals", parts: func(p *parts) { p.ixs[2] = k.transfer(testPriceUnits, 2, k.ata(c), usdc, payToATA, c) }, item: "C13", reason: ReasonDecimalsMismatch},
		{name: "C14_destination_not_payTo_ata", parts: func(p *parts) {
			p.ixs[2] = k.transfer(testPriceUnits, 6, k.ata(c), usdc, k.ata(other.PublicKey()), c)
		}, item: "C14", reason: ReasonRecipientMismatch},
		{name: "C14_destination_is_payTo_wallet", parts: func(p *parts) {
			p.ixs[2] = k.transfer(testPriceUnits, 6, k.ata(c), usdc, k.cfg.PayTo, c)
		}, item: "C14", reason: ReasonRecipientMismatch},
		{name: "C15_fee_payer_is_source", parts: func(p *parts) {
			p.ixs[2] = k.transfer(testPriceUnits, 6, fee, usdc, payToATA, c)
		}, item: "C15", reason: ReasonFeePayerTransferring},
		{name: "C15_fee_payer_is_authority", parts: func(p *parts) {
			p.ixs[2] = k.transfer(testPriceUnits, 6, k.ata(c), usdc, payToATA, fee)
			p.ixs[3] = solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{{PublicKey: c, IsSigner: true}}, []byte(k.memo))
		}, item: "C15", reason: ReasonFeePayerTransferring},
		{name: "C15_fee_payer_in_memo", parts: func(p *parts) {
			p.ixs[3] = solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{{PublicKey: fee, IsSigner: true, IsWritable: true}}, []byte(k.memo))
		}, item: "C15", reason: ReasonFeePayerTransferring},
		{name: "C15_authority_not_client", parts: func(p *parts) {
			ix := k.transfer(testPriceUnits, 6, k.ata(c), usdc, payToATA, other.PublicKey())
			d, _ := ix.Data()
			accts := ix.Accounts()
			accts[3] = &solana.AccountMeta{PublicKey: other.PublicKey()}
			p.ixs[2] = solana.NewInstruction(solana.TokenProgramID, accts, d)
			p.ixs[3] = solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{{PublicKey: c, IsSigner: true}}, []byte(k.memo))
		}, item: "C15", reason: ReasonAuthorityNotClient},
		{name: "C16_memo_missing", parts: func(p *parts) { p.ixs[3] = limitIx(1) }, item: "C16", reason: ReasonMemoCount},
		{name: "C16_two_memos", parts: func(p *parts) { p.ixs = append(p.ixs, memoIx("x")) }, item: "C16", reason: ReasonMemoCount},
		{name: "C16_memo_wrong_text", parts: func(p *parts) { p.ixs[3] = memoIx("0123456789abcdef0123456789abcdef") }, item: "C16", reason: ReasonMemoMismatch},
		{name: "C16_memo_other_challenge", parts: func(p *parts) {
			m, _, _ := k.ch.Issue()
			p.ixs[3] = memoIx(m)
		}, item: "C16", reason: ReasonMemoMismatch},
		{name: "C16_memo_with_accounts", parts: func(p *parts) {
			p.ixs[3] = solana.NewInstruction(solana.MemoProgramID, solana.AccountMetaSlice{{PublicKey: c, IsSigner: true}}, []byte(k.memo))
		}, item: "C16", reason: ReasonMemoMismatch},
	}
	names := map[string]bool{}
	for _, tc := range cases {
		if names[tc.name] {
			t.Fatalf("duplicate case %s", tc.name)
		}
		names[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			p := k.valid()
			if tc.parts != nil {
				tc.parts(p)
			}
			pl := k.payload(k.build(t, p))
			if tc.pay != nil {
				tc.pay(pl)
			}
			h := k.header(t, pl)
			if tc.header != nil {
				h = tc.header(h)
			}
			_, err := k.v.VerifyHeader(h)
			rj, ok := err.(*Rejection)
			if !ok {
				t.Fatalf("want rejection %s/%s, got %v", tc.item, tc.reason, err)
			}
			if rj.Item != tc.item || rj.Reason != tc.reason {
				t.Fatalf("refused at %s/%s, want %s/%s", rj.Item, rj.Reason, tc.item, tc.reason)
			}
		})
	}
	// Every offline checklist item C01..C16 has at least one case.
	for i := 1; i <= 16; i++ {
		id := "C" + string(rune('0'+i/10)) + string(rune('0'+i%10))
		found := false
		for n := range names {
			if strings.HasPrefix(n, id+"_") {
				found = true
			}
		}
		if !found {
			t.Errorf("no mutation case for checklist item %s", id)
		}
	}
}

func TestChallengeRoundTrip(t *testing.T) {
	k := newKit(t)
	if _, err := k.ch.Check(k.memo); err != nil {
		t.Fatalf("fresh challenge refused: %v", err)
	}
	if len(k.memo) > 256 {
		t.Fatalf("challenge is %d bytes, memo limit is 256", len(k.memo))
	}
	later := NewChallenger(k.cfg, func() time.Time { return k.now.Add(DefaultChallengeTTL) })
	if _, err := later.Check(k.memo); err != ErrChallengeExpired {
		t.Fatalf("challenge at expiry: %v, want expired", err)
	}
	other := *k.cfg
	other.ChallengeKey = []byte("another-key-another-key-another-key")
	if _, err := NewChallenger(&other, func() time.Time { return k.now }).Check(k.memo); err == nil {
		t.Fatal("challenge accepted under another key")
	}
	other = *k.cfg
	other.PayTo = keyFromSeed(8).PublicKey()
	if _, err := NewChallenger(&other, func() time.Time { return k.now }).Check(k.memo); err == nil {
		t.Fatal("challenge accepted for another payTo")
	}
}

func TestHeaderEncoding(t *testing.T) {
	k := newKit(t)
	pr := PaymentRequired{X402Version: 2, Resource: Resource{URL: "/audit"}, Accepts: []PaymentRequirements{k.cfg.Requirements(k.memo)}}
	h, err := EncodeHeader(pr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := base64.StdEncoding.DecodeString(h); err != nil {
		t.Fatal("header is not standard base64")
	}
	back, err := DecodePaymentRequired(h)
	if err != nil || back.Accepts[0].Amount != "50000" || back.Accepts[0].Extra.Memo != k.memo {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}

// TestExpiredChallengeOnlyResumes: a payment answering an expired challenge passes the offline
// checks marked expired; the settler refuses it (C02 challenge_expired) without reserving or
// broadcasting anything unless its settlement row exists, so a resume outlives the challenge.
func TestExpiredChallengeOnlyResumes(t *testing.T) {
	k := newKit(t)
	old := NewChallenger(k.cfg, func() time.Time { return k.now.Add(-time.Hour) })
	m, _, _ := old.Issue()
	p := k.valid()
	p.ixs[3] = memoIx(m)
	pl := k.payload(k.build(t, p))
	pl.Accepted.Extra.Memo = m
	ver, err := k.v.VerifyHeader(k.header(t, pl))
	if err != nil || !ver.ChallengeExpired {
		t.Fatalf("verify: %v expired=%v, want a verified payment marked expired", err, ver != nil && ver.ChallengeExpired)
	}
	st := NewMemStore()
	s, err := NewSettler(k.cfg, nil, st, func() time.Time { return k.now })
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Settle(context.Background(), ver)
	if rj, ok := err.(*Rejection); !ok || rj.Item != "C02" || rj.Reason != ReasonChallengeExpired {
		t.Fatalf("settle without a row: %v, want C02/challenge_expired", err)
	}
	if rows, _ := st.List(context.Background(), StatusReserved, 10); len(rows) != 0 {
		t.Fatal("an expired challenge reserved a row")
	}
	// With a settled, undelivered row the same payment resumes (no RPC needed).
	_, sig, _ := ver.CoSign(k.cfg.FeePayer)
	settled := k.now.Add(-time.Minute)
	if _, err := st.Reserve(context.Background(), &Settlement{TxSig: sig.String(), Challenge: m, Payer: ver.Payer.String(),
		Status: StatusSettled, SettledAt: &settled, UpdatedAt: settled, CreatedAt: settled}); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Settle(context.Background(), ver)
	if err != nil || !rc.Resumed && rc.TxSig != sig.String() {
		t.Fatalf("resume on an expired challenge: %v", err)
	}
}

// lighthouseProgram is the Lighthouse guard program Phantom and Solflare append to transfers.
var lighthouseProgram = solana.MustPublicKeyFromBase58("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95")

// TestLighthouseGuardRefused is the guard-instruction decision (docs/x402.md): a payment whose
// wallet appended a Lighthouse assertion is refused before anything is co-signed, whether the
// guard references the fee payer read-only (as real wallets' account-state guards do) or not.
// A guard is an assertion the wallet controls that can pass simulation and fail on landing,
// and a failed landing costs our fee payer the fee: the drain this service must not allow.
// LiteSVM has no Lighthouse program, so acceptance could not be proven end to end either.
func TestLighthouseGuardRefused(t *testing.T) {
	k := newKit(t)
	// The layout wallets produce: limit, price, transfer, memo, then one Lighthouse
	// instruction (an assert on an account's state, data opaque here).
	guard := func(accounts ...*solana.AccountMeta) solana.Instruction {
		return solana.NewInstruction(lighthouseProgram, accounts, []byte{0x0c, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00})
	}
	c := k.client.PublicKey()
	for _, tc := range []struct {
		name  string
		guard solana.Instruction
	}{
		{"guard_reads_fee_payer", guard(solana.Meta(k.cfg.FeePayer.PublicKey()))},
		{"guard_reads_client_token_account", guard(solana.Meta(k.ata(c)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := k.valid()
			p.ixs = append(p.ixs, tc.guard)
			_, err := k.v.VerifyHeader(k.header(t, k.payload(k.build(t, p))))
			rj, ok := err.(*Rejection)
			if !ok || rj.Item != "C08" || rj.Reason != ReasonInstructionsLength {
				t.Fatalf("guard instruction: %v, want C08/%s", err, ReasonInstructionsLength)
			}
		})
	}
}

// forgeMemo changes the last two characters of a challenge memo. It never returns the memo
// itself: a memo that already ends in "AA" (about one run in four thousand) gets "BB".
func forgeMemo(memo string) string {
	if strings.HasSuffix(memo, "AA") {
		return memo[:len(memo)-2] + "BB"
	}
	return memo[:len(memo)-2] + "AA"
}
