package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/freetier"
	"github.com/scopehygiene/scope-hygiene/server/siwx"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Refusal rules of the charge stage.
const (
	RuleFreeTierDaily     = "free_tier_daily"
	RuleFreeTierInterval  = "free_tier_interval"
	RuleHouseTokenInvalid = "house_token_invalid"
)

// chargeAudit is the charge stage of a paid audit: an operator's house token, or a payment. A
// bearer token that does not match spends the address's budget of failed attempts and is refused.
// A payment is network work, so the evaluation slot is given back while it is verified; once
// verified, the audit is evaluated whatever happens to the request meanwhile (holdSlot).
func (r *request) chargeAudit() error {
	s, c := r.s, r.c
	house, err := s.house(c)
	if err != nil {
		if !s.houseFailed(c) {
			return errAnswered
		}
		return s.refuse(c, &Refusal{Rule: RuleHouseTokenInvalid, Status: http.StatusUnauthorized,
			Body: map[string]any{"kind": "refusal", "rule": RuleHouseTokenInvalid}})
	}
	if r.house = house; house {
		return nil
	}
	r.leaveSlot()
	r.pay, err = s.cfg.Payments.Require(c, Quote{Op: store.OpAudit, USDCUnits: s.cfg.Criteria.PriceUnits(),
		Label: s.cfg.Criteria.PriceLabel(), Status: s.cfg.PriceStatus, CriteriaRevision: s.cfg.Criteria.Revision(),
		ResourceURL: s.absURL(c, "/audit"), MCPTool: MCPTool(c.Request().Context()), Discovery: s.auditDiscovery(c),
		ProveCaller: func(wallet, purpose string) error { return s.proveCaller(c, wallet, purpose) },
		Challenge:   func(purpose string) (siwx.Challenge, error) { return s.prover.Challenge(s.proofTarget(c, purpose)) }})
	if err != nil {
		return s.internalAnswered(c, "payment check failed")
	}
	if r.pay == nil {
		return errAnswered // Require answered (402 with the price)
	}
	return r.holdSlot()
}

// chargeFree is the charge stage of a free call: one unit of the caller's (or the address's)
// free allowance, committed under the request's write key. A spent daily allowance is refused
// with exhaustedStatus, one too soon after the last with 429; a refusal commits nothing.
func (r *request) chargeFree() error {
	s, c := r.s, r.c
	keyText := writeKeyText(c)
	wk := s.gate.WriteKey(c.Path(), r.caller, c.RealIP(), keyText)
	d, err := s.gate.TakeOnce(c.Request().Context(), r.caller, c.RealIP(), wk)
	if err != nil && !errors.Is(err, store.ErrNotApplied) && !errors.Is(err, store.ErrNotDurable) {
		// The commit may have happened before the failure: look for it.
		ctx, cancel := lookupContext(c)
		if found, ferr := s.gate.Find(ctx, wk); ferr == nil {
			d, err = found, nil
		}
		cancel()
	}
	if err != nil {
		return answered(s.writeFailed(c, "free-tier store failed", err, keyText))
	}
	if d.Outcome == store.FreeAllowed { // a refusal commits nothing: it says nothing of writes
		s.writes.succeeded()
	}
	switch d.Outcome {
	case store.FreeExhausted:
		s.cfg.Metrics.FreeTier.WithLabelValues(itoa(s.exhaustedStatus())).Inc()
		if s.exhaustedStatus() == http.StatusTooManyRequests { // every 429 carries Retry-After
			c.Response().Header().Set("Retry-After", itoa(untilNextDay(s.cfg.Now())))
		}
		return s.refuse(c, &Refusal{Rule: RuleFreeTierDaily, Status: s.exhaustedStatus(),
			Body: map[string]any{"kind": "refusal", "rule": RuleFreeTierDaily, "cap": s.gate.Limits.PerDay, "observed": d.Used}})
	case store.FreeTooSoon:
		s.cfg.Metrics.FreeTier.WithLabelValues("429").Inc()
		c.Response().Header().Set("Retry-After", itoa(freetier.RetryAfterSeconds(d.RetryAfter)))
		return s.refuse(c, &Refusal{Rule: RuleFreeTierInterval, Status: http.StatusTooManyRequests,
			Body: map[string]any{"kind": "refusal", "rule": RuleFreeTierInterval,
				"min_interval_ms": s.gate.Limits.MinInterval.Milliseconds(), "retry_after_ms": d.RetryAfter.Milliseconds()}})
	}
	return nil
}

// exhaustedStatus answers a spent daily allowance: 402 where an audit can be paid for, 429 for an
// unpriced criteria, whose audit is free under the same allowance (nothing to pay).
func (s *Server) exhaustedStatus() int {
	if s.cfg.Criteria.PriceUnits() == 0 {
		return http.StatusTooManyRequests
	}
	return http.StatusPaymentRequired
}

// untilNextDay is the whole seconds until the next UTC day, when a daily allowance starts again
// (store.Day is the UTC date).
func untilNextDay(now time.Time) int {
	now = now.UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return max(int((next.Sub(now)+time.Second-1)/time.Second), 1)
}
