package x402

import (
	"context"
	"fmt"
	"time"

	solana "github.com/gagliardetto/solana-go"
)

// Verified-marker resume and reconciliation.
//
// A payment whose settlement row reached "settled" carries the verified marker: the USDC moved,
// the fee is recorded, and the report is owed. If the report was not delivered (the connection
// dropped, the process died, the audit run failed), the same payer may re-submit the export with
// the same PAYMENT-SIGNATURE within ResumeWindow of settlement, at most MaxClaims audit runs in
// all, and gets the audit without a second charge. Delivery (Delivered) closes the marker; a
// replay after it is duplicate_settlement. A different payer, a closed window or an exhausted
// count is refused.

// onExisting handles a payment whose transaction id is already reserved.
func (s *Settler) onExisting(ctx context.Context, ver *Verified, signed []byte, sig solana.Signature, row *Settlement) (*Receipt, error) {
	if row.Payer != ver.Payer.String() {
		return nil, reject("S23", ReasonResumePayerMismatch)
	}
	now := s.now().UTC()
	inFlight := now.Sub(row.UpdatedAt) < s.InFlightGrace
	switch row.Status {
	case StatusReleased:
		return s.retake(ctx, ver, signed, sig, row)
	case StatusReserved:
		if inFlight {
			return nil, reject("S18", ReasonDuplicateSettlement)
		}
		// A stale reservation was never broadcast (rows are marked submitted before sending).
		s.release(ctx, row, StatusReserved, "never_broadcast")
		return s.retake(ctx, ver, signed, sig, row)
	case StatusSubmitted:
		// Broadcast and not known confirmed. The request that sent it may still be waiting
		// (in flight) or may have answered 202; either way one status read (never a re-send)
		// tells whether it settled; if not, the answer is pending again with the transaction.
		if err := s.reconcileOne(ctx, row); err != nil {
			return nil, &Unavailable{Item: "S21", Reason: ReasonSettlementPending, TxSig: row.TxSig}
		}
		cur, err := s.store.Get(ctx, row.TxSig)
		if err != nil {
			return nil, unavailable("S21", "settlement_store_unavailable")
		}
		switch cur.Status {
		case StatusSettled:
			return s.claim(ctx, cur.TxSig, true)
		case StatusReleased:
			return nil, reject("S21", ReasonBlockhashExpired)
		case StatusFailed:
			return nil, reject("S21", ReasonTransactionFailed)
		case StatusDelivered:
			return nil, reject("S21", ReasonDuplicateSettlement)
		}
		if inFlight {
			return nil, &Unavailable{Item: "S18", Reason: ReasonSettlementPending, TxSig: row.TxSig}
		}
		return nil, &Unavailable{Item: "S21", Reason: ReasonSettlementPending, TxSig: row.TxSig}
	case StatusSettled:
		return s.claim(ctx, row.TxSig, true)
	case StatusDelivered:
		return nil, reject("S18", ReasonDuplicateSettlement)
	case StatusFailed:
		return nil, reject("S20", ReasonTransactionFailed)
	}
	return nil, unavailable("S18", "settlement_state_unknown")
}

// retake re-reserves a released row (compare-and-set, so one request wins) and broadcasts.
func (s *Settler) retake(ctx context.Context, ver *Verified, signed []byte, sig solana.Signature, row *Settlement) (*Receipt, error) {
	cur, err := s.store.Get(ctx, row.TxSig)
	if err != nil {
		return nil, unavailable("S18", "settlement_store_unavailable")
	}
	if cur.Status != StatusReleased {
		return nil, reject("S18", ReasonDuplicateSettlement)
	}
	now := s.now().UTC()
	cur.Status, cur.Reason, cur.UpdatedAt, cur.ExpiryHeight = StatusReserved, "", now, 0
	ok, err := s.store.Update(ctx, cur, StatusReleased)
	if err == ErrChallengeUsed {
		return nil, reject("S18", ReasonDuplicateSettlement)
	}
	if err != nil {
		return nil, unavailable("S18", "settlement_store_unavailable")
	}
	if !ok {
		return nil, reject("S18", ReasonDuplicateSettlement)
	}
	return s.broadcast(ctx, ver, signed, sig, cur)
}

// reconcileOne moves one submitted row forward when the chain allows a definite answer:
// confirmed → settled (fee recorded), failed → failed, absent and past its expiry height →
// released. Otherwise the row stays submitted. It never re-sends.
func (s *Settler) reconcileOne(ctx context.Context, row *Settlement) error {
	sig, err := solana.SignatureFromBase58(row.TxSig)
	if err != nil {
		return fmt.Errorf("x402: reconcile: bad signature in store")
	}
	st, err := s.rpc.Status(ctx, sig)
	if err != nil {
		return fmt.Errorf("x402: reconcile: %w", err)
	}
	if st != nil {
		if st.Err != nil {
			// finish records the fee the failed landing cost our fee payer.
			err := s.finish(ctx, row, sig)
			if _, ok := err.(*Rejection); ok || err == nil {
				return nil
			}
			row.Status, row.Reason, row.Slot, row.UpdatedAt = StatusFailed, ReasonTransactionFailed, st.Slot, s.now().UTC()
			_, err = s.store.Update(ctx, row, StatusSubmitted)
			return err
		}
		if st.Confirmed() {
			if err := s.finish(ctx, row, sig); err != nil {
				if _, ok := err.(*Rejection); ok {
					return nil
				}
				return err
			}
		}
		return nil
	}
	h, err := s.rpc.BlockHeight(ctx)
	if err != nil {
		return fmt.Errorf("x402: reconcile: %w", err)
	}
	if row.ExpiryHeight > 0 && h > row.ExpiryHeight {
		// Absent and its blockhash can no longer land: release. Re-check the status once more
		// after the height read so a landing between the two reads is not missed.
		st2, err := s.rpc.Status(ctx, sig)
		if err != nil || st2 != nil {
			return err
		}
		row.Status, row.Reason, row.UpdatedAt = StatusReleased, ReasonBlockhashExpired, s.now().UTC()
		_, err = s.store.Update(ctx, row, StatusSubmitted)
		return err
	}
	return nil
}

// Reconcile advances every stale reserved or submitted row once; call it periodically.
// It returns how many rows it examined.
func (s *Settler) Reconcile(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.InFlightGrace)
	n := 0
	res, err := s.store.List(ctx, StatusReserved, 100)
	if err != nil {
		return 0, fmt.Errorf("x402: reconcile: %w", err)
	}
	for _, r := range res {
		if r.UpdatedAt.Before(cutoff) {
			n++
			s.release(ctx, r, StatusReserved, "never_broadcast")
		}
	}
	sub, err := s.store.List(ctx, StatusSubmitted, 100)
	if err != nil {
		return n, fmt.Errorf("x402: reconcile: %w", err)
	}
	for _, r := range sub {
		if r.UpdatedAt.Before(cutoff) {
			n++
			if err := s.reconcileOne(ctx, r); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// RunReconciler calls Reconcile every period until ctx ends.
func (s *Settler) RunReconciler(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = s.Reconcile(ctx)
		}
	}
}

// Abandon marks an audit run that ended without delivering its report, so the payer can
// resume at once instead of waiting for the claim lease.
func (s *Settler) Abandon(ctx context.Context, r *Receipt) error {
	return s.updateSettled(ctx, r.TxSig, "abandon", func(row *Settlement) {
		row.Reason, row.UpdatedAt = ReasonUndelivered, s.now().UTC()
	})
}
