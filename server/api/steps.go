package api

import (
	"time"

	"github.com/scopehygiene/scope-hygiene/server/metrics"
)

// Step metrics and deadlines, attached to the stages they measure or bound. A route names, in
// its list of stages, the audit step (metrics.AuditSteps) each stage is observed as; the stages
// that bound their own wait do so with these deadlines:
//
//   - reading the body: Config.BodyTimeout, from the end of the headers (body.go);
//   - waiting for an evaluation slot: slotWait, never past the request's end (slot.go);
//   - looking up a write that failed and may have committed: LookupTimeout (health.go);
//   - everything else: the request's own end (outOfTime in admit.go).

// slotWait is the longest a request waits for an evaluation slot before it is shed.
const slotWait = 2 * time.Second

// timed is stage observed as the audit step named step when it completes (a stage that answers
// the call early is not observed).
func (r *request) timed(step string, stage func() error) func() error {
	return r.timedAs(func() string { return step }, stage)
}

// timedAs is timed for a stage whose step name is known only once it has run.
func (r *request) timedAs(step func() string, stage func() error) func() error {
	return func() error {
		start := time.Now()
		if err := stage(); err != nil {
			return err
		}
		r.s.step(step(), start)
		return nil
	}
}

// step observes one step of an audit begun at start (metrics.AuditSteps) and returns its end.
// Durations use the monotonic clock, never the configured Now.
func (s *Server) step(name string, start time.Time) time.Time {
	end := time.Now()
	s.cfg.Metrics.AuditSteps.WithLabelValues(s.cfg.Criteria.ID(), name).Observe(end.Sub(start).Seconds())
	return end
}

// commitStep is the step a paid audit's commit is observed as: a house audit's ledger row, or a
// paid audit's settlement with its row.
func (r *request) commitStep() string {
	if r.house {
		return metrics.AuditStepLedger
	}
	return metrics.AuditStepSettle
}
