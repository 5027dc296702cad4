package x402

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Receipt is a settled payment that may run one audit.
type Receipt struct {
	TxSig       string
	Payer       string
	Network     string
	FeeLamports int64
	Slot        uint64
	// Resumed is true when this audit runs on an earlier settlement (no new charge).
	Resumed bool
	// LedgerID is the ledger row already written for this payment, if any.
	LedgerID *int64
	units    uint64
}

// Response is the PAYMENT-RESPONSE of a successful settlement.
func (r *Receipt) Response() SettlementResponse {
	return SettlementResponse{Success: true, Payer: r.Payer, Transaction: r.TxSig, Network: r.Network,
		Amount: fmt.Sprint(r.units)}
}

// claim starts one audit run on a settled row.
func (s *Settler) claim(ctx context.Context, txSig string, resumed bool) (*Receipt, error) {
	now := s.now().UTC()
	ok, err := s.store.Claim(ctx, txSig, ClaimRule{MaxClaims: s.MaxClaims, SettledAfter: now.Add(-s.ResumeWindow),
		IdleBefore: now.Add(-s.ClaimLease), Now: now})
	if err != nil {
		return nil, unavailable("S23", "settlement_store_unavailable")
	}
	row, gerr := s.store.Get(ctx, txSig)
	if gerr != nil {
		return nil, unavailable("S23", "settlement_store_unavailable")
	}
	if !ok {
		switch {
		case row.Status != StatusSettled:
			return nil, reject("S23", ReasonDuplicateSettlement)
		case row.Claims >= s.MaxClaims || row.SettledAt == nil || row.SettledAt.Before(now.Add(-s.ResumeWindow)):
			return nil, reject("S23", ReasonResumeWindowClosed)
		}
		// Another run of this payment is in progress.
		return nil, reject("S23", ReasonDuplicateSettlement)
	}
	var fee int64
	if row.FeeLamports != nil {
		fee = *row.FeeLamports
	}
	return &Receipt{TxSig: row.TxSig, Payer: row.Payer, Network: row.Network, FeeLamports: fee, Slot: row.Slot,
		Resumed: resumed || row.Claims > 1, LedgerID: row.LedgerID, units: s.cfg.Price.Units}, nil
}

// claimBroadcast claims the first run of a payment this request broadcast. The store writes do
// not share the settlement's deadline (the payment moved; its run must be recorded), and a
// failure names the transaction so the answer is a 202, never a bare 503.
func (s *Settler) claimBroadcast(ctx context.Context, txSig string) (*Receipt, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	rc, err := s.claim(ctx, txSig, false)
	var un *Unavailable
	if errors.As(err, &un) && un.TxSig == "" {
		return nil, &Unavailable{Item: un.Item, Reason: ReasonSettlementPending, TxSig: txSig}
	}
	return rc, err
}

// RecordLedger writes the ledger row of a payment once: if the settlement already has one
// (a resumed audit), appendFn is not called again.
func (s *Settler) RecordLedger(ctx context.Context, r *Receipt, appendFn func() (int64, error)) error {
	row, err := s.store.Get(ctx, r.TxSig)
	if err != nil {
		return fmt.Errorf("x402: record ledger: %w", err)
	}
	if row.LedgerID != nil {
		r.LedgerID = row.LedgerID
		return nil
	}
	id, err := appendFn()
	if err != nil {
		return fmt.Errorf("x402: record ledger: %w", err)
	}
	row.LedgerID, row.UpdatedAt = &id, s.now().UTC()
	if _, err := s.store.Update(ctx, row, StatusSettled); err != nil {
		return fmt.Errorf("x402: record ledger: %w", err)
	}
	r.LedgerID = &id
	return nil
}

// Delivered marks the report of a payment delivered: no further resume is possible.
func (s *Settler) Delivered(ctx context.Context, r *Receipt) error {
	return s.updateSettled(ctx, r.TxSig, "mark delivered", func(row *Settlement) {
		row.Status, row.UpdatedAt = StatusDelivered, s.now().UTC()
	})
}

// updateSettled applies change to the settled row of txSig (compare-and-set from settled); step
// names what it does in its errors.
func (s *Settler) updateSettled(ctx context.Context, txSig, step string, change func(row *Settlement)) error {
	row, err := s.store.Get(ctx, txSig)
	if err != nil {
		return fmt.Errorf("x402: %s: %w", step, err)
	}
	change(row)
	if _, err := s.store.Update(ctx, row, StatusSettled); err != nil {
		return fmt.Errorf("x402: %s: %w", step, err)
	}
	return nil
}
