package client

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// mintChain answers the two reads a payment makes: a classic-Token mint with 6 decimals, and a
// fixed blockhash. (End to end, the chain is the LiteSVM facade: tools/scope-hygiene client tests.)
type mintChain struct {
	mint  solana.PublicKey
	owner solana.PublicKey
	reads int
}

func (m *mintChain) GetAccountInfo(_ context.Context, a solana.PublicKey) (*rpc.GetAccountInfoResult, error) {
	m.reads++
	if !a.Equals(m.mint) {
		return &rpc.GetAccountInfoResult{}, nil
	}
	d := make([]byte, 82)
	d[44], d[45] = 6, 1
	return &rpc.GetAccountInfoResult{Value: &rpc.Account{Owner: m.owner, Data: rpc.DataBytesOrJSONFromBytes(d)}}, nil
}

func (m *mintChain) GetLatestBlockhash(context.Context, rpc.CommitmentType) (*rpc.GetLatestBlockhashResult, error) {
	h := solana.Hash{9, 9, 9}
	return &rpc.GetLatestBlockhashResult{Value: &rpc.LatestBlockhashResult{Blockhash: h, LastValidBlockHeight: 150}}, nil
}

// offerOf converts the server's requirements to the client's view through the wire (JSON).
func offerOf(t *testing.T, req x402.PaymentRequirements) *Offer {
	t.Helper()
	h, err := x402.EncodeHeader(x402.PaymentRequired{X402Version: 2, Resource: x402.Resource{URL: "http://127.0.0.1/audit"}, Accepts: []x402.PaymentRequirements{req}})
	if err != nil {
		t.Fatal(err)
	}
	var pr PaymentRequired
	if err := decodeHeader(h, &pr); err != nil {
		t.Fatal(err)
	}
	o, err := PickOffer(&pr)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The payment the client builds passes the server's whole offline checklist (C01..C16).
func TestBuildPaymentPassesTheServerChecklist(t *testing.T) {
	now := time.Now()
	cfg := &x402.Config{Network: x402.Devnet, RPCURL: "http://127.0.0.1:1", FeePayer: seedKey(1), PayTo: seedKey(2).PublicKey(),
		ChallengeKey: []byte("0123456789abcdef0123456789abcdef"), Price: criteriaPrice(t)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ch := x402.NewChallenger(cfg, func() time.Time { return now })
	v, err := x402.NewVerifier(cfg, ch)
	if err != nil {
		t.Fatal(err)
	}
	memo, _, err := ch.Issue()
	if err != nil {
		t.Fatal(err)
	}
	payer := seedKey(3)
	chain := &mintChain{mint: x402.Devnet.USDCMint, owner: solana.TokenProgramID}
	o := offerOf(t, cfg.Requirements(memo))
	p, err := BuildPayment(context.Background(), chain, o, payer, &Resource{URL: "http://127.0.0.1/audit"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := encodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	ver, err := v.VerifyHeader(h)
	if err != nil {
		t.Fatalf("the server refuses the client's payment: %v", err)
	}
	if !ver.Payer.Equals(payer.PublicKey()) || ver.ComputeUnits != computeUnitLimit || ver.MicroLamportsPerCU != microLamportsPerCU || ver.Challenge != memo {
		t.Fatalf("verified payment: payer %s units %d price %d", ver.Payer, ver.ComputeUnits, ver.MicroLamportsPerCU)
	}
	// The accepted requirements are echoed verbatim (extra included).
	var echoed, sent map[string]any
	b, _ := json.Marshal(p.Accepted)
	json.Unmarshal(b, &echoed)
	b, _ = json.Marshal(cfg.Requirements(memo))
	json.Unmarshal(b, &sent)
	if len(echoed) != len(sent) || echoed["extra"].(map[string]any)["memo"] != memo {
		t.Fatalf("accepted %v, offered %v", echoed, sent)
	}
}

func TestBuildPaymentRefusesWhatItCannotPay(t *testing.T) {
	base := x402.PaymentRequirements{Scheme: "exact", Network: x402.Devnet.CAIP2, Amount: "50000", Asset: x402.Devnet.USDCMint.String(),
		PayTo: seedKey(2).PublicKey().String(), MaxTimeoutSeconds: 60, Extra: x402.Extra{FeePayer: seedKey(1).PublicKey().String()}}
	for _, c := range []struct {
		name  string
		mut   func(*x402.PaymentRequirements)
		owner solana.PublicKey
	}{
		{"token_2022_mint", nil, solana.Token2022ProgramID},
		{"no_fee_payer", func(r *x402.PaymentRequirements) { r.Extra.FeePayer = "" }, solana.TokenProgramID},
		{"asset_not_an_address", func(r *x402.PaymentRequirements) { r.Asset = "USDC" }, solana.TokenProgramID},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := base
			if c.mut != nil {
				c.mut(&r)
			}
			if _, err := BuildPayment(context.Background(), &mintChain{mint: x402.Devnet.USDCMint, owner: c.owner}, offerOf(t, r), seedKey(3), nil); err == nil {
				t.Fatal("built a payment it cannot make")
			}
		})
	}
}

func TestPickOffer(t *testing.T) {
	if _, err := PickOffer(&PaymentRequired{X402Version: 1}); err == nil {
		t.Fatal("version 1 accepted")
	}
	if _, err := PickOffer(&PaymentRequired{X402Version: 2, Accepts: []Requirements{{Scheme: "exact", Network: "eip155:8453", Amount: "1"}}}); err != ErrNoOffer {
		t.Fatalf("EVM-only offer: %v", err)
	}
	o, err := PickOffer(&PaymentRequired{X402Version: 2, Accepts: []Requirements{{Scheme: "upto", Network: "solana:x", Amount: "1"}, {Scheme: "exact", Network: "solana:x", Amount: "50000"}}})
	if err != nil || o.Units != 50000 {
		t.Fatalf("offer %+v %v", o, err)
	}
}
