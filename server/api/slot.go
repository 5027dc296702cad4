package api

import "time"

// The evaluation slots bound the exports being decoded, evaluated or signed at once to the number
// of CPUs: a request waiting for a slot holds its body only, never a decoded export. Store and
// network work (a caller's proof, the free allowance, a payment) holds no slot.

// slot is one held evaluation slot; release is idempotent.
type slot struct{ s *Server }

// takeSlot is the slot stage: it waits for an evaluation slot, at most slotWait and never past
// the request's end (then it answers a fast 503 with Retry-After).
func (r *request) takeSlot() error {
	s := r.s
	select {
	case s.evalSlots <- struct{}{}:
		r.slot = &slot{s: s}
		return nil
	default:
	}
	wait := time.NewTimer(slotWait)
	defer wait.Stop()
	select {
	case s.evalSlots <- struct{}{}:
		r.slot = &slot{s: s}
		return nil
	case <-wait.C:
	case <-r.c.Request().Context().Done():
	}
	return answered(overloaded(r.c))
}

// holdSlot takes an evaluation slot however long that takes: the call is paid for, or its
// allowance spent, so it is evaluated whatever happens to the request meanwhile.
func (r *request) holdSlot() error {
	r.s.evalSlots <- struct{}{}
	r.slot = &slot{s: r.s}
	return nil
}

// leaveSlot frees the request's slot before store or network work.
func (r *request) leaveSlot() { r.slot.release() }

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
