package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scopehygiene/scope-hygiene/client"
	"github.com/scopehygiene/scope-hygiene/server/api"
)

// guardPrecheck runs the free pre-check before a priced -fail-on audit. It returns the signed
// pre-check when it states the gate's factor NOT ASSESSABLE (nothing is to be paid), and nil when
// the audit may go ahead. A pre-check refused for the free tier's interval runs once more after
// the interval the criteria publish.
func (s *session) guardPrecheck(ctx context.Context, body []byte) ([]byte, error) {
	pre, err := s.c.Precheck(ctx, body)
	var ce *client.Error
	if errors.As(err, &ce) && ce.Rule == api.RuleFreeTierInterval && s.crit.FreeTier.MinIntervalMS > 0 {
		wait := time.Duration(s.crit.FreeTier.MinIntervalMS)*time.Millisecond + 200*time.Millisecond
		s.progress(fmt.Sprintf("fail-on: free pre-checks are %d ms apart; running it again in %s", s.crit.FreeTier.MinIntervalMS, wait))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		pre, err = s.c.Precheck(ctx, body)
	}
	if err != nil {
		return nil, err
	}
	ok, err := s.gate.Assessable(pre.Body)
	if err != nil {
		return nil, usage(err)
	}
	if !ok {
		return pre.Body, nil
	}
	s.progress("fail-on: the pre-check states " + s.gate.Factor + " ASSESSABLE; auditing")
	return nil, nil
}

// stopAtPrecheck ends a -fail-on audit whose factor the free pre-check states NOT ASSESSABLE:
// the signed pre-check is saved and verified, nothing is paid, exit 7.
func (s *session) stopAtPrecheck(pre []byte) (int, error) {
	s.op = "precheck"
	if err := s.keep(pre); err != nil {
		return 0, err
	}
	s.out.Summary.PaidNothing = true
	s.out.Summary.FailOn = &FailOnSummary{Gate: s.o.FailOn, Status: "NOT ASSESSABLE"}
	s.progress("fail-on: the free pre-check states the factor NOT ASSESSABLE: nothing was paid")
	return ExitNotAssessable, nil
}

// compare checks the -fail-on gate against the verified report: exit 1 when its figure crosses
// the threshold, 7 when the report states the factor NOT ASSESSABLE.
func (s *session) compare(report []byte) (int, error) {
	if s.gate == nil {
		return ExitOK, nil
	}
	fo := &FailOnSummary{Gate: s.o.FailOn}
	code := ExitOK
	out, err := s.gate.Check(report)
	switch {
	case errors.Is(err, client.ErrNotAssessable):
		fo.Status, code = "NOT ASSESSABLE", ExitNotAssessable
	case err != nil:
		return 0, usage(err)
	default:
		fo.Value, fo.Crossed, fo.Status = out.Value, out.Crossed, "ASSESSABLE"
		if out.Crossed {
			code = ExitGateCrossed
		}
	}
	s.out.Summary.FailOn = fo
	return code, nil
}
