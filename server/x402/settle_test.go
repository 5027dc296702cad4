package x402

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"
)

// fakeChain is an in-memory RPC: it lands every sent transaction unless told otherwise.
type fakeChain struct {
	mu         sync.Mutex
	k          *kit
	down       bool
	expired    bool
	simErr     TxError
	dropSends  bool // sends vanish (ambiguous)
	landed     map[solana.Signature]*Outcome
	sends      int
	height     uint64
	lastValid  uint64
	statusErr  TxError
	visibleTx  bool
	sendFails  bool
	simulateCt int
	// balance is the payer's USDC (nil: rich); drainAfterSim empties it after the next
	// successful simulation, as a transfer racing our broadcast would.
	balance       *uint64
	drainAfterSim bool
	frozen        bool
	accountReads  int
}

func newFakeChain(k *kit) *fakeChain {
	return &fakeChain{k: k, landed: map[solana.Signature]*Outcome{}, height: 100, lastValid: 250, visibleTx: true}
}

var errDown = errors.New("connection refused")

func (f *fakeChain) IsBlockhashValid(context.Context, solana.Hash) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return false, errDown
	}
	return !f.expired, nil
}
func (f *fakeChain) LatestBlockhash(context.Context) (solana.Hash, uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return solana.Hash{}, 0, errDown
	}
	return solana.Hash{9}, f.lastValid, nil
}
func (f *fakeChain) BlockHeight(context.Context) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return 0, errDown
	}
	return f.height, nil
}
func (f *fakeChain) Simulate(_ context.Context, raw []byte) (TxError, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.simulateCt++
	if f.down {
		return nil, errDown
	}
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil {
		return "decode", nil
	}
	if err := tx.VerifySignatures(); err != nil {
		return "SignatureFailure", nil
	}
	if _, ok := f.landed[tx.Signatures[0]]; ok {
		return "AlreadyProcessed", nil
	}
	if f.simErr == nil && f.drainAfterSim {
		zero := uint64(0)
		f.balance, f.drainAfterSim = &zero, false
	}
	return f.simErr, nil
}
func (f *fakeChain) Send(_ context.Context, raw []byte) (solana.Signature, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends++
	tx, _ := solana.TransactionFromBytes(raw)
	if f.sendFails {
		return solana.Signature{}, errDown
	}
	if !f.dropSends {
		one := big.NewInt(int64(testPriceUnits))
		f.landed[tx.Signatures[0]] = &Outcome{Slot: 7, Fee: 10001, Err: f.statusErr,
			Pre:  []TokenBalance{{Owner: f.k.cfg.PayTo, Mint: f.k.cfg.Network.USDCMint, Amount: big.NewInt(0)}},
			Post: []TokenBalance{{Owner: f.k.cfg.PayTo, Mint: f.k.cfg.Network.USDCMint, Amount: one}}}
	}
	return tx.Signatures[0], nil
}
func (f *fakeChain) Status(_ context.Context, sig solana.Signature) (*SigStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, errDown
	}
	o, ok := f.landed[sig]
	if !ok {
		return nil, nil
	}
	return &SigStatus{Slot: o.Slot, Err: o.Err, Confirmation: "confirmed"}, nil
}
func (f *fakeChain) Transaction(_ context.Context, sig solana.Signature) (*Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, errDown
	}
	o, ok := f.landed[sig]
	if !ok || !f.visibleTx {
		return nil, ErrTxNotFound
	}
	return o, nil
}

// Account answers the client's USDC account (its balance, rich by default) and nothing else.
func (f *fakeChain) Account(_ context.Context, pk solana.PublicKey) (*Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accountReads++
	if f.down {
		return nil, errDown
	}
	c := f.k.client.PublicKey()
	if !pk.Equals(f.k.ata(c)) {
		return nil, nil
	}
	amount := uint64(1_000_000)
	if f.balance != nil {
		amount = *f.balance
	}
	ta := token.Account{Mint: f.k.cfg.Network.USDCMint, Owner: c, Amount: amount, State: token.Initialized}
	if f.frozen {
		ta.State = token.Frozen
	}
	var buf bytes.Buffer
	if err := bin.NewBinEncoder(&buf).Encode(ta); err != nil {
		return nil, err
	}
	return &Account{Lamports: 2_039_280, Owner: solana.TokenProgramID, Data: buf.Bytes()}, nil
}

type settleEnv struct {
	k     *kit
	chain *fakeChain
	store *MemStore
	s     *Settler
	now   time.Time
	mu    sync.Mutex
}

func newSettleEnv(t *testing.T) *settleEnv {
	k := newKit(t)
	e := &settleEnv{k: k, chain: newFakeChain(k), store: NewMemStore(), now: k.now}
	s, err := NewSettler(k.cfg, e.chain, e.store, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	s.PollInterval, s.ConfirmTimeout = time.Millisecond, 50*time.Millisecond
	e.s = s
	return e
}

func (e *settleEnv) clock() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.now }
func (e *settleEnv) advance(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

func (e *settleEnv) verified(t *testing.T) *Verified {
	raw := e.k.build(t, e.k.valid())
	v, err := e.k.v.VerifyPayload(e.k.payload(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantReason(t *testing.T, err error, reason string) {
	t.Helper()
	switch e := err.(type) {
	case *Rejection:
		if e.Reason == reason {
			return
		}
	case *Unavailable:
		if e.Reason == reason {
			return
		}
	}
	t.Fatalf("got %v, want reason %s", err, reason)
}

func TestSettleHappyPathThenReplay(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	v := e.verified(t)
	r, err := e.s.Settle(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	if r.FeeLamports != 10001 || r.Payer != e.k.client.PublicKey().String() || r.Resumed {
		t.Fatalf("receipt %+v", r)
	}
	ledgerWrites := 0
	appendFn := func() (int64, error) { ledgerWrites++; return 42, nil }
	if err := e.s.RecordLedger(ctx, r, appendFn); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Delivered(ctx, r); err != nil {
		t.Fatal(err)
	}
	// Replay of the same header after delivery: refused, nothing sent again.
	_, err = e.s.Settle(ctx, e.verified(t))
	wantReason(t, err, ReasonDuplicateSettlement)
	if e.chain.sends != 1 || ledgerWrites != 1 {
		t.Fatalf("sends=%d ledger=%d, want 1/1", e.chain.sends, ledgerWrites)
	}
}

func TestSettleConcurrentDoubleSubmission(t *testing.T) {
	e := newSettleEnv(t)
	v := e.verified(t)
	var wg sync.WaitGroup
	results := make([]error, 8)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, results[i] = e.s.Settle(context.Background(), v)
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, err := range results {
		if err == nil {
			ok++
		} else {
			wantReason(t, err, ReasonDuplicateSettlement)
		}
	}
	if ok != 1 || e.chain.sends != 1 {
		t.Fatalf("settled %d times with %d sends, want 1/1", ok, e.chain.sends)
	}
}

func TestSettleChallengeBindsOnePayment(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	if _, err := e.s.Settle(ctx, e.verified(t)); err != nil {
		t.Fatal(err)
	}
	// A second, different transaction answering the same challenge (different compute price).
	p := e.k.valid()
	p.ixs[1] = priceIx(2)
	v2, err := e.k.v.VerifyPayload(e.k.payload(e.k.build(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.s.Settle(ctx, v2)
	wantReason(t, err, ReasonDuplicateSettlement)
}

func TestSettleExpiredBlockhash(t *testing.T) {
	e := newSettleEnv(t)
	e.chain.expired = true
	_, err := e.s.Settle(context.Background(), e.verified(t))
	wantReason(t, err, ReasonBlockhashExpired)
	if e.chain.sends != 0 {
		t.Fatal("sent an expired transaction")
	}
}

func TestSettleInsufficientFunds(t *testing.T) {
	e := newSettleEnv(t)
	e.chain.simErr = map[string]any{"InstructionError": []any{2, map[string]any{"Custom": 1}}}
	_, err := e.s.Settle(context.Background(), e.verified(t))
	wantReason(t, err, ReasonInsufficientFunds)
	// Funded later, the same payment can be retried (the reservation was released).
	e.chain.simErr = nil
	if _, err := e.s.Settle(context.Background(), e.verified(t)); err != nil {
		t.Fatalf("retry after funding: %v", err)
	}
}

func TestSettleRPCDown(t *testing.T) {
	e := newSettleEnv(t)
	e.chain.down = true
	_, err := e.s.Settle(context.Background(), e.verified(t))
	u, ok := err.(*Unavailable)
	if !ok || u.Reason != ReasonRPCUnavailable || u.HTTPStatus() != 503 {
		t.Fatalf("got %v, want 503 rpc_unavailable", err)
	}
	if e.chain.sends != 0 {
		t.Fatal("sent while RPC down")
	}
	e.chain.down = false
	if _, err := e.s.Settle(context.Background(), e.verified(t)); err != nil {
		t.Fatalf("after RPC recovery: %v", err)
	}
}

func TestSettleAmbiguousTimeoutStaysPendingThenReconciles(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	e.chain.dropSends = true
	v := e.verified(t)
	_, err := e.s.Settle(ctx, v)
	wantReason(t, err, ReasonSettlementPending)
	sig := err.(*Unavailable).TxSig
	// A retry while in flight does not re-send: it reads the status once and is answered
	// pending again with the transaction (202 upstream), never "pay again".
	sends := e.chain.sends
	_, err = e.s.Settle(ctx, v)
	wantReason(t, err, ReasonSettlementPending)
	if un := err.(*Unavailable); un.TxSig != sig || e.chain.sends != sends {
		t.Fatalf("in-flight retry: tx %q, sends %d → %d", un.TxSig, sends, e.chain.sends)
	}
	// Past the in-flight grace, still before the expiry height: stays pending, never re-sent.
	e.advance(time.Minute)
	if _, err := e.s.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	row, _ := e.store.Get(ctx, sig)
	if row.Status != StatusSubmitted || e.chain.sends != 1 {
		t.Fatalf("status %s sends %d, want submitted/1", row.Status, e.chain.sends)
	}
	_, err = e.s.Settle(ctx, v)
	wantReason(t, err, ReasonSettlementPending)
	if e.chain.sends != 1 {
		t.Fatal("pending payment re-sent")
	}
	// Past the expiry height and absent: released, the payer is told the blockhash expired.
	e.chain.height = 251
	if _, err := e.s.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	row, _ = e.store.Get(ctx, sig)
	if row.Status != StatusReleased {
		t.Fatalf("status %s, want released", row.Status)
	}
}

func TestSettleLateLandingReconcilesToResume(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	e.chain.visibleTx = false // confirmed but getTransaction not yet visible
	v := e.verified(t)
	_, err := e.s.Settle(ctx, v)
	wantReason(t, err, ReasonSettlementPending)
	e.chain.visibleTx = true
	e.advance(time.Minute)
	r, err := e.s.Settle(ctx, v)
	if err != nil {
		t.Fatalf("retry after landing: %v", err)
	}
	if r.FeeLamports != 10001 || e.chain.sends != 1 {
		t.Fatalf("receipt %+v sends %d", r, e.chain.sends)
	}
}

func TestResumeWindowAndCount(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	v := e.verified(t)
	r, err := e.s.Settle(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	// The run is still inside its lease: a concurrent replay is a duplicate.
	_, err = e.s.Settle(ctx, v)
	wantReason(t, err, ReasonDuplicateSettlement)
	// The report was not delivered (the run abandoned): resume at once, no new send.
	if err := e.s.Abandon(ctx, r); err != nil {
		t.Fatal(err)
	}
	r2, err := e.s.Settle(ctx, v)
	if err != nil || !r2.Resumed {
		t.Fatalf("resume: %+v %v", r2, err)
	}
	// After the lease, a third run is allowed (MaxClaims = 3), then the count is exhausted.
	e.advance(DefaultClaimLease + time.Second)
	if _, err := e.s.Settle(ctx, v); err != nil {
		t.Fatalf("third run: %v", err)
	}
	e.advance(DefaultClaimLease + time.Second)
	_, err = e.s.Settle(ctx, v)
	wantReason(t, err, ReasonResumeWindowClosed)
	if e.chain.sends != 1 {
		t.Fatalf("sends = %d, want 1 (never charged twice)", e.chain.sends)
	}
}

func TestResumeOutsideWindow(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	v := e.verified(t)
	if _, err := e.s.Settle(ctx, v); err != nil {
		t.Fatal(err)
	}
	e.advance(DefaultResumeWindow + time.Second)
	_, err := e.s.Settle(ctx, v)
	wantReason(t, err, ReasonResumeWindowClosed)
}

func TestResumeDifferentPayerRefused(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	v := e.verified(t)
	r, err := e.s.Settle(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	_ = e.s.Abandon(ctx, r)
	v.Payer = keyFromSeed(11).PublicKey() // a different wallet presenting the same settlement
	_, err = e.s.Settle(ctx, v)
	wantReason(t, err, ReasonResumePayerMismatch)
}

func TestSettleFailedOnChain(t *testing.T) {
	e := newSettleEnv(t)
	e.chain.statusErr = map[string]any{"InstructionError": []any{2, map[string]any{"Custom": 1}}}
	_, err := e.s.Settle(context.Background(), e.verified(t))
	wantReason(t, err, ReasonTransactionFailed)
}

// TestBalanceCheckBeforeBroadcast: the payer's source account is read right before the send;
// emptied after a passing simulation (a transfer racing ours), frozen, or below the price, the
// payment is refused insufficient_funds with nothing broadcast, and its reservation released.
func TestBalanceCheckBeforeBroadcast(t *testing.T) {
	low := uint64(testPriceUnits - 1)
	for _, tc := range []struct {
		name string
		set  func(*fakeChain)
	}{
		{"drained_after_simulation", func(f *fakeChain) { f.drainAfterSim = true }},
		{"below_price", func(f *fakeChain) { f.balance = &low }},
		{"frozen", func(f *fakeChain) { f.frozen = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newSettleEnv(t)
			tc.set(e.chain)
			v := e.verified(t)
			_, err := e.s.Settle(context.Background(), v)
			wantReason(t, err, ReasonInsufficientFunds)
			if e.chain.sends != 0 || e.chain.simulateCt != 1 || e.chain.accountReads != 1 {
				t.Fatalf("sends=%d simulations=%d reads=%d, want 0/1/1", e.chain.sends, e.chain.simulateCt, e.chain.accountReads)
			}
			row, err := e.s.Lookup(context.Background(), v)
			if err != nil || row.Status != StatusReleased || row.Reason != ReasonInsufficientFunds {
				t.Fatalf("row %+v %v, want released insufficient_funds", row, err)
			}
		})
	}
	t.Run("exactly_the_price_passes", func(t *testing.T) {
		e := newSettleEnv(t)
		exact := testPriceUnits
		e.chain.balance = &exact
		if _, err := e.s.Settle(context.Background(), e.verified(t)); err != nil || e.chain.sends != 1 {
			t.Fatalf("settle with exactly the price: %v (sends %d)", err, e.chain.sends)
		}
	})
}

// TestFeeBudget: a payer's failed transactions are counted against FeeBudget over a rolling
// FeeBudgetWindow; past it the next payment is throttled before any RPC call, with the time
// until the oldest failure leaves the window; once it has, the payer may pay again.
func TestFeeBudget(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	e.s.FeeBudget = 25_000
	e.chain.statusErr = map[string]any{"InstructionError": []any{2, map[string]any{"Custom": 1}}}
	lost := int64(0)
	e.s.OnFailedFee = func(l int64) { lost += l }
	pay := func() error {
		memo, _, err := e.k.ch.Issue()
		if err != nil {
			t.Fatal(err)
		}
		e.k.memo = memo
		_, err = e.s.Settle(ctx, e.verified(t))
		return err
	}
	for i := 0; i < 2; i++ {
		wantReason(t, pay(), ReasonTransactionFailed)
		e.advance(10 * time.Minute)
	}
	if lost != 20002 {
		t.Fatalf("lamports lost %d, want 20002 (each failed landing's fee recorded)", lost)
	}
	sims := e.chain.simulateCt
	err := pay()
	th, ok := err.(*Throttled)
	if !ok || th.Reason != ReasonPayerFeeBudget || th.RetryAfter != 40*time.Minute {
		t.Fatalf("third payment: %v, want throttled payer_fee_budget for 40m", err)
	}
	if e.chain.simulateCt != sims || e.chain.sends != 2 {
		t.Fatal("a throttled payment reached the RPC")
	}
	e.advance(40 * time.Minute) // the first failure leaves the window
	e.chain.statusErr = nil
	if err := pay(); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// TestGlobalFeeBudgetCountsPaymentsInFlight: the global budget's last check, right before the
// send, counts every other payment in flight (on any replica: a submitted row of the shared
// store) at its worst case, so payments checked together cannot pass the budget together.
func TestGlobalFeeBudgetCountsPaymentsInFlight(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	e.s.FeeBudget, e.s.GlobalFeeBudget = 0, 25_000
	now := e.clock()
	other := &Settlement{TxSig: "other-replica-payment", Challenge: "other", ChallengeExpiry: now.Add(time.Minute), Payer: "another-payer",
		Network: e.k.cfg.Network.CAIP2, Blockhash: "bh", Status: StatusSubmitted, CreatedAt: now, UpdatedAt: now}
	if _, err := e.store.Reserve(ctx, other); err != nil {
		t.Fatal(err)
	}
	var events []bool
	e.s.OnPaused = func(p bool) { events = append(events, p) }
	v := e.verified(t)
	_, err := e.s.Settle(ctx, v)
	pz, ok := err.(*Paused)
	if !ok || pz.RetryAfter != 5*time.Second {
		t.Fatalf("with another payment in flight: %v, want paused for 5 s (15 000 + %d > 25 000)", err, v.MaxFeeLamports)
	}
	if e.chain.sends != 0 || len(events) == 0 || !events[len(events)-1] {
		t.Fatalf("%d sends, pause events %v: want nothing sent and the pause reported", e.chain.sends, events)
	}
	// The other payment settles: this one goes through.
	other.Status = StatusSettled
	if ok, err := e.store.Update(ctx, other, StatusSubmitted); err != nil || !ok {
		t.Fatal(err)
	}
	memo, _, err := e.k.ch.Issue()
	if err != nil {
		t.Fatal(err)
	}
	e.k.memo = memo
	if _, err := e.s.Settle(ctx, e.verified(t)); err != nil {
		t.Fatalf("once nothing else is in flight: %v", err)
	}
	if e.chain.sends != 1 || events[len(events)-1] {
		t.Fatalf("%d sends, last pause event %v", e.chain.sends, events[len(events)-1])
	}
}

// TestGlobalFeeBudgetSharedByReplicas: two settlers over one store (two replicas): the failures
// one replica's payments cost the fee payer pause the other's payments too.
func TestGlobalFeeBudgetSharedByReplicas(t *testing.T) {
	e := newSettleEnv(t)
	ctx := context.Background()
	e.s.FeeBudget, e.s.GlobalFeeBudget = 0, 25_000
	e.chain.statusErr = map[string]any{"InstructionError": []any{2, map[string]any{"Custom": 1}}}
	other, err := NewSettler(e.k.cfg, e.chain, e.store, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	other.PollInterval, other.ConfirmTimeout, other.FeeBudget, other.GlobalFeeBudget = time.Millisecond, 50*time.Millisecond, 0, 25_000
	pay := func(s *Settler) error {
		memo, _, err := e.k.ch.Issue()
		if err != nil {
			t.Fatal(err)
		}
		e.k.memo = memo
		_, err = s.Settle(ctx, e.verified(t))
		return err
	}
	for i := 0; i < 2; i++ {
		wantReason(t, pay(e.s), ReasonTransactionFailed)
		e.advance(time.Minute)
	}
	sends := e.chain.sends
	if _, ok := pay(other).(*Paused); !ok || e.chain.sends != sends {
		t.Fatalf("the other replica's payment after 20 002 lamports lost: %d new sends, want paused with none", e.chain.sends-sends)
	}
}
