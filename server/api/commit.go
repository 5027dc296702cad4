package api

import (
	"errors"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// commit is the commit stage of a paid audit: the report is signed while its ledger row commits,
// and nothing is answered before the row is durable. Everything about signing that can fail
// happens before the row (or the settlement): the report's canonical form and its signature
// cannot fail, and both are written while the row commits (sign.Canonicaler). The evaluation
// slot goes with the signature, which is evaluation work.
func (r *request) commit() error {
	s, c := r.s, r.c
	unsigned, err := s.cfg.Signer.Canonicalize(r.report.Report)
	if err != nil {
		return s.internalAnswered(c, "signing failed")
	}
	r.signing = s.signAside(unsigned, r.slot.handOff())
	entry := store.LedgerEntry{Timestamp: r.now, Day: store.Day(r.now), CriteriaVersion: r.report.CriteriaRevision,
		VerdictLine: r.report.VerdictLine, Op: store.OpAudit, UndeclaredClusters: r.report.Undeclared, House: r.house}
	// The report is signed aside: the answer holds its signed bytes only. The body goes with it:
	// the report's strings may point into it until it is signed, and nothing else reads it now,
	// so a request waiting for its row or a slow reader holds one of the two, never both.
	r.report, r.body = nil, nil
	keyText := ""
	if r.house {
		keyText = writeKeyText(c)
	}
	appendLedger := func(e store.LedgerEntry) (int64, error) { return s.appendLedger(c, e, keyText) }
	if r.house {
		_, err = appendLedger(entry)
	} else {
		err = s.cfg.Payments.Settle(c, r.pay, entry, appendLedger)
	}
	r.settled = true // Settle owns the payment from here, whatever it returns
	if err != nil {
		return answered(s.writeFailed(c, "ledger write failed", err, keyText))
	}
	return nil
}

// awaitSignature waits for the signature commit started (after the row is durable).
func (r *request) awaitSignature() error {
	if r.signed = <-r.signing; r.signed == nil {
		return r.s.internalAnswered(r.c, "signing failed")
	}
	return nil
}

// signAside signs the report on its own goroutine, which holds the evaluation slot (released by
// receiving from slot) until it is done. A panic there is a defect, never an input: the signed
// document is then nil and the request answers 500.
func (s *Server) signAside(unsigned *sign.Unsigned, slot chan struct{}) chan []byte {
	signed := make(chan []byte, 1)
	go func() {
		defer func() {
			if recover() != nil {
				signed <- nil
			}
			<-slot
		}()
		t := time.Now()
		doc := unsigned.Sign()
		s.step(metrics.AuditStepSign, t)
		signed <- doc
	}()
	return signed
}

// appendLedger writes an audit's ledger row: a house audit's under the write key of keyText, a
// paid one's under its payment transaction (the ledger's own key). When the write fails and may
// have committed, the row is looked up; found, the write is reported as committed.
func (s *Server) appendLedger(c echo.Context, e store.LedgerEntry, keyText string) (int64, error) {
	ctx := c.Request().Context()
	k, keyed := s.cfg.Store.(store.Keyed)
	if !keyed {
		return s.cfg.Store.AppendLedger(ctx, e)
	}
	var wk store.WriteKey
	if e.PaymentTx == "" && keyText != "" {
		wk = store.NewWriteKey(store.WriteHouse, s.cfg.Criteria.ID(), keyText)
	}
	id, _, err := k.AppendLedgerOnce(ctx, e, wk, s.cfg.Now())
	if err == nil {
		s.writes.succeeded()
		return id, nil
	}
	if errors.Is(err, store.ErrNotApplied) || errors.Is(err, store.ErrNotDurable) {
		return 0, err
	}
	lctx, cancel := lookupContext(c)
	defer cancel()
	switch {
	case e.PaymentTx != "":
		if id, ferr := k.FindPayment(lctx, e.PaymentTx); ferr == nil {
			return id, nil
		}
	case wk != "":
		if r, ferr := k.FindWrite(lctx, wk, s.cfg.Now()); ferr == nil && r.LedgerID > 0 {
			return r.LedgerID, nil
		}
	}
	return 0, err
}
