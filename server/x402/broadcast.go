package x402

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	bin "github.com/gagliardetto/binary"
	solana "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"
)

// MinBroadcastTime is the least time left before the settlement's deadline for a payment to be
// broadcast; with less, it is released unsent (503 request_deadline, nothing charged).
const MinBroadcastTime = time.Second

// broadcast runs S19..S22 on a row this request reserved (status reserved).
func (s *Settler) broadcast(ctx context.Context, ver *Verified, signed []byte, sig solana.Signature, row *Settlement) (*Receipt, error) {
	lastValid, err := s.checkBeforeSend(ctx, ver, signed, row)
	if err != nil {
		return nil, err
	}
	if err := s.submit(ctx, ver, signed, row, lastValid); err != nil {
		return nil, err
	}
	return s.confirm(ctx, row, sig)
}

// checkBeforeSend runs S19 on a reserved row: the fee budgets, the blockhash, the simulation, the
// source's balance and the time left. A refusal releases the row (nothing was sent); otherwise it
// returns the last block height the transaction can land at.
func (s *Settler) checkBeforeSend(ctx context.Context, ver *Verified, signed []byte, row *Settlement) (uint64, error) {
	refuse := func(reason string, err error) (uint64, error) {
		s.release(ctx, row, StatusReserved, reason)
		return 0, err
	}
	bh, err := solana.HashFromBase58(row.Blockhash)
	if err != nil {
		return refuse(ReasonUndecodable, reject("S19", ReasonUndecodable))
	}
	if err := s.feeBudget(ctx, ver); err != nil {
		return refuse(ReasonPayerFeeBudget, err)
	}
	if err := s.globalBudget(ctx, ver, nil); err != nil {
		return refuse(ReasonPaymentsPaused, err)
	}
	valid, err := s.rpc.IsBlockhashValid(ctx, bh)
	if err != nil {
		return refuse(ReasonRPCUnavailable, unavailable("S19", ReasonRPCUnavailable))
	}
	if !valid {
		return refuse(ReasonBlockhashExpired, reject("S19", ReasonBlockhashExpired))
	}
	// Upper bound of the last height this transaction can land at: its blockhash is not newer
	// than the latest one.
	_, lastValid, err := s.rpc.LatestBlockhash(ctx)
	if err != nil {
		return refuse(ReasonRPCUnavailable, unavailable("S19", ReasonRPCUnavailable))
	}
	simErr, err := s.rpc.Simulate(ctx, signed)
	if err != nil {
		return refuse(ReasonRPCUnavailable, unavailable("S19", ReasonRPCUnavailable))
	}
	if simErr != nil {
		reason, ours := classify(simErr)
		if ours {
			return refuse(reason, unavailable("S19", reason))
		}
		return refuse(reason, reject("S19", reason))
	}
	// The last read before the broadcast: the source account still covers the price.
	covers, err := s.sourceCovers(ctx, ver)
	if err != nil {
		return refuse(ReasonRPCUnavailable, unavailable("S19", ReasonRPCUnavailable))
	}
	if !covers {
		return refuse(ReasonInsufficientFunds, reject("S19", ReasonInsufficientFunds))
	}
	// Nothing is sent that could not be answered in time: past this point the answer names the
	// transaction, and the confirmation needs at least a poll or two.
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < MinBroadcastTime {
		return refuse(ReasonDeadline, unavailable("S20", ReasonDeadline))
	}
	return lastValid, nil
}

// submit runs S20: it marks the row submitted, checks the global budget once more and sends the
// transaction once.
func (s *Settler) submit(ctx context.Context, ver *Verified, signed []byte, row *Settlement, lastValid uint64) error {
	// Mark submitted before sending: from here on the row is never released unless the
	// signature is provably absent and the blockhash provably dead.
	row.Status, row.ExpiryHeight, row.UpdatedAt = StatusSubmitted, lastValid, s.now().UTC()
	ok, err := s.store.Update(ctx, row, StatusReserved)
	if err != nil || !ok {
		s.release(ctx, row, StatusReserved, "settlement_store_unavailable")
		return unavailable("S20", "settlement_store_unavailable")
	}
	// The global budget again, now that this payment counts as in flight for every other check:
	// nothing was sent yet, so a refusal releases the row.
	if err := s.globalBudget(ctx, ver, row); err != nil {
		s.release(ctx, row, StatusSubmitted, ReasonPaymentsPaused)
		return err
	}
	if _, err := s.rpc.Send(ctx, signed); err != nil && !isRPCReply(err) {
		// Transport failure: the node may or may not have it. Fall through to confirmation;
		// the row stays submitted and is reconciled, never re-sent blindly.
		_ = err
	}
	return nil
}

// confirm runs S21 and S22 on a sent transaction: it waits for its confirmation, reads its
// outcome, and claims the first audit run of a settled payment.
func (s *Settler) confirm(ctx context.Context, row *Settlement, sig solana.Signature) (*Receipt, error) {
	st, err := s.waitConfirmed(ctx, sig)
	if err != nil || st == nil {
		return nil, &Unavailable{Item: "S20", Reason: ReasonSettlementPending, TxSig: row.TxSig}
	}
	if st.Err != nil {
		// Landed with an error: finish reads the fee our fee payer lost and records the row failed.
		err := s.finish(ctx, row, sig)
		var rj *Rejection
		switch {
		case err == nil: // getTransaction, which settlement trusts, says it settled
			return s.claimBroadcast(ctx, row.TxSig)
		case errors.As(err, &rj):
			return nil, err
		}
		row.Status, row.Reason, row.Slot, row.UpdatedAt = StatusFailed, ReasonTransactionFailed, st.Slot, s.now().UTC()
		_, _ = s.store.Update(context.WithoutCancel(ctx), row, StatusSubmitted)
		return nil, reject("S20", ReasonTransactionFailed)
	}
	if err := s.finish(ctx, row, sig); err != nil {
		return nil, err
	}
	return s.claimBroadcast(ctx, row.TxSig)
}

// sourceCovers reads the payer's source token account right before broadcast and reports
// whether it still holds the price for the transfer's authority: an account emptied after
// simulation would make the transfer fail on-chain at our fee payer's expense.
func (s *Settler) sourceCovers(ctx context.Context, ver *Verified) (bool, error) {
	acc, err := s.rpc.Account(ctx, ver.Source)
	if err != nil {
		return false, err
	}
	if acc == nil || !acc.Owner.Equals(solana.TokenProgramID) {
		return false, nil
	}
	var ta token.Account
	if err := bin.NewBinDecoder(acc.Data).Decode(&ta); err != nil {
		return false, nil
	}
	price := s.cfg.Price.Units
	if !ta.Mint.Equals(s.cfg.Network.USDCMint) || ta.State != token.Initialized || ta.Amount < price {
		return false, nil
	}
	if ta.Owner.Equals(ver.Payer) {
		return true, nil
	}
	// A delegate may spend at most its delegated amount.
	return ta.Delegate != nil && ta.Delegate.Equals(ver.Payer) && ta.DelegatedAmount >= price, nil
}

// classify maps a simulation error to a reason.
func classify(e TxError) (reason string, ours bool) {
	j := errJSON(e)
	switch {
	case strings.Contains(j, "BlockhashNotFound"):
		return ReasonBlockhashExpired, false
	case strings.Contains(j, "AlreadyProcessed"):
		return ReasonDuplicateSettlement, false
	case strings.Contains(j, "InsufficientFundsForFee"), strings.Contains(j, "InsufficientFundsForRent"):
		return "fee_payer_unfunded", true
	case strings.Contains(j, `"InstructionError":[2,{"Custom":1}]`):
		return ReasonInsufficientFunds, false
	}
	return ReasonSimulationFailed, false
}

// waitConfirmed polls getSignatureStatuses until confirmed, failed, or ConfirmTimeout.
func (s *Settler) waitConfirmed(ctx context.Context, sig solana.Signature) (*SigStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, s.ConfirmTimeout)
	defer cancel()
	for {
		st, err := s.rpc.Status(ctx, sig)
		if err == nil && st != nil && (st.Err != nil || st.Confirmed()) {
			return st, nil
		}
		if err := s.sleep(ctx, s.PollInterval); err != nil {
			return nil, fmt.Errorf("x402: confirmation: %w", err)
		}
	}
}

// finish runs S22 on a confirmed signature: getTransaction, fee, balance change, then marks
// the row settled (compare-and-set from submitted; losing the race to a reconciler is fine).
func (s *Settler) finish(ctx context.Context, row *Settlement, sig solana.Signature) error {
	var out *Outcome
	var err error
	for i := 0; i < 20; i++ {
		out, err = s.rpc.Transaction(ctx, sig)
		if !errors.Is(err, ErrTxNotFound) {
			break
		}
		if s.sleep(ctx, s.PollInterval) != nil {
			break
		}
	}
	if err != nil || out == nil {
		return &Unavailable{Item: "S22", Reason: ReasonSettlementPending, TxSig: row.TxSig}
	}
	if out.Err != nil {
		row.Status, row.Reason, row.Slot, row.UpdatedAt = StatusFailed, ReasonTransactionFailed, out.Slot, s.now().UTC()
		fee := int64(out.Fee)
		row.FeeLamports = &fee
		if ok, _ := s.store.Update(context.WithoutCancel(ctx), row, StatusSubmitted); ok && s.OnFailedFee != nil {
			s.OnFailedFee(fee)
		}
		return reject("S22", ReasonTransactionFailed)
	}
	fee := int64(out.Fee)
	row.FeeLamports, row.Slot = &fee, out.Slot
	if out.TokenDelta(s.cfg.PayTo, s.cfg.Network.USDCMint).Cmp(new(big.Int).SetUint64(s.cfg.Price.Units)) != 0 {
		row.Status, row.Reason, row.UpdatedAt = StatusFailed, ReasonTransferNotObservedOnce, s.now().UTC()
		_, _ = s.store.Update(context.WithoutCancel(ctx), row, StatusSubmitted)
		return reject("S22", ReasonTransferNotObservedOnce)
	}
	now := s.now().UTC()
	row.Status, row.UpdatedAt, row.SettledAt, row.Reason = StatusSettled, now, &now, ""
	if _, err := s.store.Update(context.WithoutCancel(ctx), row, StatusSubmitted); err != nil {
		return &Unavailable{Item: "S22", Reason: ReasonSettlementPending, TxSig: row.TxSig}
	}
	return nil
}
