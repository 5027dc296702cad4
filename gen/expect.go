package gen

// Expect returns the oracle's expected outcome for one request body: a refusal, or
// the compared fields of the pre-check and the audit. The error is non-nil only when
// the embedded criteria cannot be read; it never carries any part of the body.
func Expect(body []byte) (Expected, error) {
	c, err := criteria()
	if err != nil {
		return Expected{}, err
	}
	if len(body) > BodyBytesCap { // before parsing
		return Expected{Refusal: &Refusal{Rule: ruleBodyBytesCap, Cap: intp(BodyBytesCap), Observed: intp(len(body))}}, nil
	}
	top, err := decodeStrict(body)
	if err != nil {
		return Expected{Refusal: refusal(ruleExportRequired)}, nil
	}
	v, ref := validate(top)
	if ref != nil {
		return Expected{Refusal: ref}, nil
	}
	a := analyse(v)
	st := a.resolveStatuses()
	pre, err := a.precheck(c, st)
	if err != nil {
		return Expected{}, err
	}
	return Expected{Precheck: pre, Audit: a.audit(c, st)}, nil
}
