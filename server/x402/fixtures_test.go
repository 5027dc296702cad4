package x402

import (
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

const fixtureDir = "../../../shared/fixtures/solana"

func readFixture(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Skipf("fixture not available: %v", err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(env.Result, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// checkOutcome applies the S22 belt-and-braces check to a landed transaction: success and
// exactly testPriceUnits of the network's USDC into payTo.
func checkOutcome(o *Outcome, payTo, mint solana.PublicKey) bool {
	return o.Err == nil && o.TokDeltaIs(payTo, mint, int64(testPriceUnits))
}

// TokDeltaIs reports whether the balance change equals want.
func (o *Outcome) TokDeltaIs(owner, mint solana.PublicKey, want int64) bool {
	return o.TokenDelta(owner, mint).Cmp(big.NewInt(want)) == 0
}

func TestFixtureMainnetUSDCTransferChecked(t *testing.T) {
	var r rpc.GetParsedTransactionResult
	readFixture(t, "mainnet-usdc-transferchecked-jsonparsed.json", &r)
	if r.Slot != 184930610 || r.Meta == nil || r.Meta.Fee != 10000 || r.Meta.Err != nil {
		t.Fatalf("slot %d meta %+v", r.Slot, r.Meta)
	}
	o, err := OutcomeFromMeta(r.Slot, r.Meta.Fee, r.Meta.Err, r.Meta.PreTokenBalances, r.Meta.PostTokenBalances)
	if err != nil {
		t.Fatal(err)
	}
	owner := solana.MustPublicKeyFromBase58("3i476kTBBTy7pBGx4CXwJpJ6phuwLQgcwLTdHhU3c7ui")
	// The new ATA is absent from preTokenBalances: read as 0, so the delta is the 1 000 units.
	if !o.TokDeltaIs(owner, Mainnet.USDCMint, 1000) {
		t.Fatalf("recipient delta %s, want 1000", o.TokenDelta(owner, Mainnet.USDCMint))
	}
	if len(r.Transaction.Signatures) != 2 || len(r.Transaction.Message.Instructions) != 3 {
		t.Fatalf("signatures %d instructions %d", len(r.Transaction.Signatures), len(r.Transaction.Message.Instructions))
	}
	// Refused as our payment: wrong amount into the wrong wallet.
	if checkOutcome(o, owner, Mainnet.USDCMint) {
		t.Fatal("a 1 000-unit transfer passed as a 50 000-unit payment")
	}
}

func TestFixtureMainnetSOLTransferMemo(t *testing.T) {
	var r rpc.GetParsedTransactionResult
	readFixture(t, "mainnet-sol-transfer-memo-jsonparsed.json", &r)
	if r.Slot != 185471096 || r.Meta == nil || r.Meta.Fee != 10000 {
		t.Fatalf("slot %d meta %+v", r.Slot, r.Meta)
	}
	if r.Meta.PreBalances[0]-r.Meta.PostBalances[0] != 10000 {
		t.Fatal("fee payer balance change is not the fee")
	}
	o, err := OutcomeFromMeta(r.Slot, r.Meta.Fee, r.Meta.Err, r.Meta.PreTokenBalances, r.Meta.PostTokenBalances)
	if err != nil {
		t.Fatal(err)
	}
	to := solana.MustPublicKeyFromBase58("2b7iQq3PbWwWTotRSDFNXT9DauU418aCHK4jcAzETUem")
	if checkOutcome(o, to, Mainnet.USDCMint) {
		t.Fatal("a SOL transfer passed as a USDC payment")
	}
}

func TestFixtureMainnetV0LookupTables(t *testing.T) {
	var r rpc.GetTransactionResult
	readFixture(t, "mainnet-v0-lookup-tables-base64.json", &r)
	if r.Slot != 193487858 || r.Meta == nil || r.Meta.Fee != 5000 || len(r.Meta.LoadedAddresses.Writable) != 3 {
		t.Fatalf("slot %d meta %+v", r.Slot, r.Meta)
	}
	raw := r.Transaction.GetBinary()
	tx, err := r.Transaction.GetTransaction()
	if err != nil {
		t.Fatal(err)
	}
	if !tx.Message.IsVersioned() || len(tx.Message.AddressTableLookups) == 0 {
		t.Fatal("expected a v0 message with lookup tables")
	}
	o, err := OutcomeFromMeta(r.Slot, r.Meta.Fee, r.Meta.Err, r.Meta.PreTokenBalances, r.Meta.PostTokenBalances)
	if err != nil || o.Fee != 5000 {
		t.Fatalf("%+v %v", o, err)
	}
	// Refused as a payment, at the decoding step, before any other check.
	k := newKit(t)
	_, err = k.v.VerifyTransaction(raw, k.memo)
	rj, ok := err.(*Rejection)
	if !ok || rj.Item != "C04" || rj.Reason != ReasonLookupTables {
		t.Fatalf("got %v, want C04 lookup tables", err)
	}
}
