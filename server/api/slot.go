package api

import (
	"time"

	"github.com/labstack/echo/v4"
)

// The evaluation slots bound the exports being decoded, evaluated or signed at once to the number
// of CPUs: a request waiting for a slot holds its body only, never a decoded export. Store and
// network work (a caller's proof, the free allowance, a payment) holds no slot.

// slot is one held evaluation slot; release is idempotent.
type slot struct{ s *Server }

// takeSlot is the slot stage: it waits for an evaluation slot, at most slotWait and never past
// the request's end (then it answers a fast 503 with Retry-After).
func (r *request) takeSlot() error {
	sl, err := r.s.evalSlot(r.c)
	if err != nil {
		return err
	}
	r.slot = sl
	return nil
}

// holdSlot takes an evaluation slot however long that takes: the call is paid for, or its
// allowance spent, so it is evaluated whatever happens to the request meanwhile.
func (r *request) holdSlot() error {
	r.slot = r.s.holdSlot()
	return nil
}

// leaveSlot frees the request's slot before store or network work.
func (r *request) leaveSlot() { r.slot.release() }

// evalSlot waits for an evaluation slot, at most slotWait and never past the request's end (then
// it answers a fast 503 with Retry-After).
func (s *Server) evalSlot(c echo.Context) (*slot, error) {
	select {
	case s.evalSlots <- struct{}{}:
		return &slot{s: s}, nil
	default:
	}
	wait := time.NewTimer(slotWait)
	defer wait.Stop()
	select {
	case s.evalSlots <- struct{}{}:
		return &slot{s: s}, nil
	case <-wait.C:
	case <-c.Request().Context().Done():
	}
	if err := overloaded(c); err != nil {
		return nil, err
	}
	return nil, errAnswered
}

// holdSlot waits for an evaluation slot without a limit.
func (s *Server) holdSlot() *slot {
	s.evalSlots <- struct{}{}
	return &slot{s: s}
}

func (sl *slot) release() {
	if sl != nil && sl.s != nil {
		<-sl.s.evalSlots
		sl.s = nil
	}
}

// handOff gives the held slot to another goroutine, which must release it by receiving from the
// returned channel; sl holds nothing afterwards.
func (sl *slot) handOff() chan struct{} {
	ch := sl.s.evalSlots
	sl.s = nil
	return ch
}
