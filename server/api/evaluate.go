package api

import (
	"errors"
	"time"
)

// Refusal is an engine refusal: its rule id, HTTP status and the JSON body of docs/contract.md.
type Refusal struct {
	Rule   string
	Status int
	Body   any
}

// AuditResult is an audit report with the facts the ledger keeps.
type AuditResult struct {
	Report           any
	VerdictLine      string
	Undeclared       *int
	CriteriaRevision string
}

// Engine runs the criteria on one export held in memory.
type Engine interface {
	// CheckBodySize refuses a body of n bytes when it is over the cap (nil otherwise).
	CheckBodySize(n int) *Refusal
	// Precheck validates the export and resolves assessability (no factor computed).
	Precheck(body []byte, now time.Time) (any, *Refusal, error)
	// Audit computes the report; it reads clock when the check has ended (the check-end time).
	Audit(body []byte, clock func() time.Time) (*AuditResult, *Refusal, error)
}

// evaluatePrecheck is the evaluate stage of a pre-check: assessability, at the request's time.
func (r *request) evaluatePrecheck() error {
	res, err := r.prep.Precheck(r.now)
	if err != nil {
		return r.s.internalAnswered(r.c, "rule failed at run time")
	}
	r.checked = res
	return nil
}

// evaluateAudit is the evaluate stage of a paid audit: the report, on the export prepared before
// the payment. A refusal the engine finds only now is a defect (500): the payment is abandoned.
func (r *request) evaluateAudit() error { return r.audit(false) }

// evaluateFreeAudit is the evaluate stage of an unpriced audit: the engine runs on the body
// checkBody accepted (nothing decoded was kept across the store work), and a refusal it finds
// only now is answered as that refusal.
func (r *request) evaluateFreeAudit() error {
	r.prep = prepared{e: r.s.cfg.Engine, body: r.body}
	return r.audit(true)
}

func (r *request) audit(answerLateRefusal bool) error {
	res, err := r.prep.Audit(r.s.cfg.Now)
	// The decoded export is dropped now, not when the answer has been written: a slow reader
	// must not hold an export's memory while its report is sent.
	r.prep = nil
	var late lateRefusal
	if answerLateRefusal && errors.As(err, &late) {
		return r.s.refuse(r.c, late.ref)
	}
	if err != nil || res == nil {
		return r.s.internalAnswered(r.c, "rule failed at run time")
	}
	r.report = res
	return nil
}
