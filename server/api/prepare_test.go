package api

import (
	"errors"
	"testing"
	"time"
)

// lateEngine refuses in its audit what its pre-check accepted, or answers nothing.
type lateEngine struct {
	Engine
	ref *Refusal
}

func (e lateEngine) Precheck([]byte, time.Time) (any, *Refusal, error) { return nil, e.ref, nil }

func (e lateEngine) Audit([]byte, func() time.Time) (*AuditResult, *Refusal, error) {
	return nil, e.ref, nil
}

// TestPreparedAdapterLateRefusal: an Engine without Prepare that refuses, at its audit, a body it
// had accepted yields errRefusedLate carrying the refusal (an unpriced audit answers it; a paid
// one answers 500), and one that answers nothing yields errRefusedLate alone.
func TestPreparedAdapterLateRefusal(t *testing.T) {
	ref := &Refusal{Rule: "late", Status: 400}
	_, err := prepared{e: lateEngine{ref: ref}}.Audit(time.Now)
	var late lateRefusal
	if !errors.As(err, &late) || late.ref != ref || !errors.Is(err, errRefusedLate) {
		t.Fatalf("late refusal: %v", err)
	}
	_, err = prepared{e: lateEngine{}}.Audit(time.Now)
	if !errors.Is(err, errRefusedLate) || errors.As(err, &late) {
		t.Fatalf("no result: %v", err)
	}
	if _, err := (prepared{e: lateEngine{ref: ref}}).Precheck(time.Now()); !errors.Is(err, errRefusedLate) {
		t.Fatalf("late pre-check refusal: %v", err)
	}
}

// preparingEngine is lateEngine that can decode once.
type preparingEngine struct{ lateEngine }

func (preparingEngine) Prepare([]byte) (Prepared, *Refusal, error) {
	return nil, nil, errors.New("decoded")
}

// TestCheckBodyKeepsTheBodyOnly: checkBody keeps no decode even for an Engine that can prepare;
// prepare decodes with it.
func TestCheckBodyKeepsTheBodyOnly(t *testing.T) {
	s := &Server{cfg: Config{Engine: preparingEngine{}}}
	if _, _, err := s.prepare([]byte(`{}`), time.Now()); err == nil {
		t.Fatal("prepare did not decode with the Engine's Prepare")
	}
	p, ref, err := s.checkBody([]byte(`{}`), time.Now())
	if err != nil || ref != nil {
		t.Fatal(ref, err)
	}
	if _, ok := p.(prepared); !ok {
		t.Fatalf("checkBody kept a %T", p)
	}
}
