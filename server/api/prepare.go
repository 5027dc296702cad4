package api

import (
	"errors"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/freetier"
)

// Preparer is an Engine that decodes an export once per request: Prepare validates and decodes
// the body, and the Prepared answers the pre-check, the audit and the caller member from that one
// decode. The server uses it when its Engine implements it.
// The body is the request's own: the server never writes to it or reuses it after Prepare, so a
// Preparer may keep pointing into it (and results may, for as long as they live) instead of
// copying it.
type Preparer interface {
	Prepare(body []byte) (Prepared, *Refusal, error)
}

// Prepared is one export decoded by a Preparer, used by one request.
type Prepared interface {
	// Precheck resolves assessability (no factor computed).
	Precheck(now time.Time) (any, error)
	// Audit computes the report; it reads clock when the check has ended. It is called once.
	Audit(clock func() time.Time) (*AuditResult, error)
	// Caller is the export's top-level caller member as freetier.CallerFromBody reads it.
	Caller() (string, error)
}

// prepare is the prepare stage: the export is decoded here, once, and every later stage answers
// from this decode. A malformed export is refused free, before anything else happens.
func (r *request) prepare() error {
	r.now = r.s.cfg.Now()
	p, ref, err := r.s.prepare(r.body, r.now)
	return r.prepared(p, ref, err)
}

// checkBody is the prepare stage of a route whose evaluation comes after store work (the
// unpriced audit): the engine checks the body and nothing decoded is kept, so waiting for the
// store and then for a slot holds the body only.
func (r *request) checkBody() error {
	r.now = r.s.cfg.Now()
	p, ref, err := r.s.checkBody(r.body, r.now)
	return r.prepared(p, ref, err)
}

func (r *request) prepared(p Prepared, ref *Refusal, err error) error {
	if err != nil {
		return r.s.internalAnswered(r.c, "rule failed at run time")
	}
	if ref != nil {
		return r.s.refuse(r.c, ref)
	}
	r.prep = p
	return nil
}

// releasePrepared gives the decoded export back before store work.
func (r *request) releasePrepared() {
	if r.prep != nil {
		release(r.prep)
		r.prep = nil
	}
}

// prepare decodes the export once (Preparer), or checks it and keeps the body for an Engine that
// cannot (a refusal or rule failure is found before anything else happens either way).
func (s *Server) prepare(body []byte, now time.Time) (Prepared, *Refusal, error) {
	if p, ok := s.cfg.Engine.(Preparer); ok {
		return p.Prepare(body)
	}
	return s.checkBody(body, now)
}

// checkBody has the engine check the body (its pre-check) and keeps the body only: each answer
// of the Prepared runs the engine on it again.
func (s *Server) checkBody(body []byte, now time.Time) (Prepared, *Refusal, error) {
	if _, ref, err := s.cfg.Engine.Precheck(body, now); err != nil || ref != nil {
		return nil, ref, err
	}
	return prepared{e: s.cfg.Engine, body: body}, nil, nil
}

// release lets a Prepared that can give its memory back do so (it must not be used afterwards).
func release(p Prepared) {
	if r, ok := p.(interface{ Release() }); ok {
		r.Release()
	}
}

// prepared adapts an Engine without Prepare: each answer decodes the body again.
type prepared struct {
	e    Engine
	body []byte
}

// errRefusedLate is an engine refusing, in its audit, a body its pre-check had accepted.
var errRefusedLate = errors.New("engine refused a body it had accepted")

// lateRefusal is errRefusedLate with the refusal, which an unpriced audit answers as it is.
type lateRefusal struct{ ref *Refusal }

func (lateRefusal) Error() string { return errRefusedLate.Error() }
func (lateRefusal) Unwrap() error { return errRefusedLate }

func (p prepared) Precheck(now time.Time) (any, error) {
	res, ref, err := p.e.Precheck(p.body, now)
	if err == nil && ref != nil {
		err = errRefusedLate
	}
	return res, err
}

func (p prepared) Audit(clock func() time.Time) (*AuditResult, error) {
	res, ref, err := p.e.Audit(p.body, clock)
	switch {
	case ref != nil:
		return res, lateRefusal{ref}
	case err == nil && res == nil:
		err = errRefusedLate
	}
	return res, err
}

func (p prepared) Caller() (string, error) { return freetier.CallerFromBody(p.body) }
