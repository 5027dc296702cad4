package api

import (
	"errors"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/metrics"
)

// stageCriteria is the least of a Criteria the stages' own tests need.
type stageCriteria struct{ Criteria }

func (stageCriteria) ID() string { return "stage-test/v1" }

// abandonCount is a Payments that counts the payments it is told were abandoned.
type abandonCount struct {
	NoPayments
	abandoned int
}

func (a *abandonCount) Abandon(echo.Context, *Payment) { a.abandoned++ }

// releaseCount is a Prepared that counts its releases.
type releaseCount struct {
	Prepared
	released int
}

func (p *releaseCount) Release() { p.released++ }

func stageServer(pay Payments) *Server {
	return &Server{cfg: Config{Criteria: stageCriteria{}, Metrics: metrics.New(), Payments: pay},
		evalSlots: make(chan struct{}, 1)}
}

// TestRunStopsAtTheAnswer: the stages run in order, and the first that answers the call ends it.
func TestRunStopsAtTheAnswer(t *testing.T) {
	r := stageServer(nil).newRequest(nil)
	var ran []int
	stage := func(i int, err error) func() error {
		return func() error { ran = append(ran, i); return err }
	}
	err := r.run(stage(1, nil), stage(2, errAnswered), stage(3, nil))
	if len(ran) != 2 || ran[0] != 1 || ran[1] != 2 {
		t.Fatalf("stages run: %v, want [1 2]", ran)
	}
	if done(err) != nil {
		t.Fatalf("an answered call ends with %v, want nil", done(err))
	}
	broken := errors.New("write failed")
	if err := r.run(stage(4, broken)); done(err) != broken {
		t.Fatalf("a failed answer ends with %v, want its error", done(err))
	}
}

// TestFinishGivesBackWhatIsHeld: an unsettled payment is abandoned, an export not audited is
// released and the slot is freed, once each; a settled payment is not abandoned.
func TestFinishGivesBackWhatIsHeld(t *testing.T) {
	pay := &abandonCount{}
	s := stageServer(pay)
	r := s.newRequest(nil)
	if err := r.takeSlot(); err != nil {
		t.Fatal(err)
	}
	prep := &releaseCount{}
	r.prep, r.pay = prep, &Payment{}
	r.finish()
	if pay.abandoned != 1 || prep.released != 1 {
		t.Fatalf("abandoned %d, released %d; want one each", pay.abandoned, prep.released)
	}
	if len(s.evalSlots) != 0 {
		t.Fatalf("%d slots still held after finish", len(s.evalSlots))
	}
	pay.abandoned = 0
	r = s.newRequest(nil)
	r.pay, r.settled = &Payment{}, true
	r.finish()
	if pay.abandoned != 0 {
		t.Fatal("a settled payment was abandoned")
	}
}

// TestSlotHandOff: a held slot handed to the signing goroutine is freed by it, not by the request.
func TestSlotHandOff(t *testing.T) {
	s := stageServer(nil)
	r := s.newRequest(nil)
	if err := r.holdSlot(); err != nil {
		t.Fatal(err)
	}
	slot := r.slot.handOff()
	r.finish()
	if len(s.evalSlots) != 1 {
		t.Fatal("finish freed a slot it had handed off")
	}
	<-slot
	if len(s.evalSlots) != 0 {
		t.Fatal("the slot is still held")
	}
}

// TestTimedObservesCompletedStages: a timed stage is observed as its step when it completes, not
// when it answers the call early; a commit is observed as the ledger (house) or settle (paid) step.
func TestTimedObservesCompletedStages(t *testing.T) {
	s := stageServer(nil)
	r := s.newRequest(nil)
	_ = r.timed(metrics.AuditStepRead, func() error { return nil })()
	_ = r.timed(metrics.AuditStepRead, func() error { return errAnswered })()
	r.house = true
	_ = r.timedAs(r.commitStep, func() error { return nil })()
	if got := stepCount(t, s, metrics.AuditStepRead); got != 1 {
		t.Errorf("read observed %d times, want 1", got)
	}
	if got := stepCount(t, s, metrics.AuditStepLedger); got != 1 {
		t.Errorf("ledger observed %d times, want 1", got)
	}
	if r.house = false; r.commitStep() != metrics.AuditStepSettle || r.payer() != "paid" {
		t.Errorf("a paid audit commits as %q for %q", r.commitStep(), r.payer())
	}
}

func stepCount(t *testing.T, s *Server, step string) uint64 {
	t.Helper()
	families, err := s.cfg.Metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "scope_hygiene_audit_step_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "step" && l.GetValue() == step {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

// TestUntilNextDay: a spent daily allowance starts again at the next UTC midnight.
func TestUntilNextDay(t *testing.T) {
	for _, c := range []struct {
		at   time.Time
		want int
	}{
		{time.Date(2026, 3, 1, 23, 59, 30, 0, time.UTC), 30},
		{time.Date(2026, 3, 1, 23, 59, 59, 500_000_000, time.UTC), 1},
		{time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 86400},
		{time.Date(2026, 3, 1, 20, 0, 0, 0, time.FixedZone("UTC-5", -5*3600)), 23 * 3600},
	} {
		if got := untilNextDay(c.at); got != c.want {
			t.Errorf("untilNextDay(%s) = %d, want %d", c.at, got, c.want)
		}
	}
}
