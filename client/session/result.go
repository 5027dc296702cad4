package session

import (
	"context"
	"encoding/json"

	"github.com/scopehygiene/scope-hygiene/client"
)

// call runs the pre-check or the audit and notes what was paid.
func (s *session) call(ctx context.Context, body []byte) (*client.Result, error) {
	var res *client.Result
	var err error
	if s.op == "precheck" {
		res, err = s.c.Precheck(ctx, body)
	} else {
		res, err = s.c.Audit(ctx, body)
	}
	if err != nil {
		return nil, err
	}
	if res.Settlement != nil {
		s.out.Summary.Payment = &PaymentSummary{Units: res.Units, Asset: res.Asset, Network: res.Network,
			Transaction: res.Settlement.Transaction, Payer: res.Settlement.Payer}
	}
	return res, nil
}

// keep saves the signed result beside the criteria document, verifies it against the key the
// criteria publish, and notes its verdict line and factors exactly as signed.
func (s *session) keep(doc []byte) error {
	if err := s.save(doc); err != nil {
		return usage(err)
	}
	v, err := client.Verify(doc, s.pub)
	if err != nil {
		return err
	}
	var head struct {
		Verdict string          `json:"verdict_line"`
		Factors json.RawMessage `json:"factors"`
	}
	_ = json.Unmarshal(doc, &head)
	sum := &s.out.Summary
	sum.Verified = &VerifiedSummary{KeyID: v.KeyID, Kind: v.Kind, CriteriaRevision: v.CriteriaRevision}
	sum.Verdict, sum.Factors = head.Verdict, head.Factors
	s.out.doc = doc
	return nil
}
