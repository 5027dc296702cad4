package session

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/scopehygiene/scope-hygiene/client"
)

// Exit codes of a session (the `scope-hygiene client` command exits with them; its usage and the
// README list them).
const (
	ExitOK            = 0
	ExitGateCrossed   = 1
	ExitUsage         = 2
	ExitRefused       = 3
	ExitSpendCap      = 4
	ExitPayment       = 5
	ExitVerify        = 6
	ExitNotAssessable = 7
	ExitUnreachable   = 8
)

// Summary is what a session established, as the -json output carries it.
type Summary struct {
	OK        bool             `json:"ok"`
	Exit      int              `json:"exit"`
	Op        string           `json:"op"`
	Saved     string           `json:"saved,omitempty"`
	Criteria  string           `json:"criteria_saved,omitempty"`
	Verified  *VerifiedSummary `json:"verified,omitempty"`
	Payment   *PaymentSummary  `json:"payment,omitempty"`
	FailOn    *FailOnSummary   `json:"fail_on,omitempty"`
	Error     *ErrorSummary    `json:"error,omitempty"`
	Verdict   string           `json:"verdict_line,omitempty"`
	HashOnly  *bool            `json:"hash_only,omitempty"`
	SentBytes int              `json:"sent_bytes,omitempty"`
	// CriteriaID is the rule set the export was sent to.
	CriteriaID string `json:"criteria_id,omitempty"`
	// Factors are every factor of the verified result, exactly as signed (a pre-check states each
	// factor's status and reason; a report adds its figures). NOT ASSESSABLE carries no number.
	Factors json.RawMessage `json:"factors,omitempty"`
	// PaidNothing says -fail-on stopped after the free pre-check: nothing was paid.
	PaidNothing bool `json:"paid_nothing,omitempty"`
}

// VerifiedSummary names the key that signed the saved result and what it is.
type VerifiedSummary struct {
	KeyID            string `json:"key_id"`
	Kind             string `json:"kind"`
	CriteriaRevision string `json:"criteria_revision"`
}

// PaymentSummary is what a paid audit paid, and the transaction that paid it.
type PaymentSummary struct {
	Units       uint64 `json:"units"`
	Asset       string `json:"asset"`
	Network     string `json:"network"`
	Transaction string `json:"transaction"`
	Payer       string `json:"payer"`
}

// FailOnSummary is the -fail-on comparison: the figure, or NOT ASSESSABLE without one.
type FailOnSummary struct {
	Gate    string `json:"gate"`
	Value   string `json:"value,omitempty"`
	Crossed bool   `json:"crossed"`
	Status  string `json:"status"`
}

// ErrorSummary is why a session failed: a static message, and the status, rule and transaction
// the service or the chain named.
type ErrorSummary struct {
	Message     string `json:"message"`
	Status      int    `json:"status,omitempty"`
	Rule        string `json:"rule,omitempty"`
	Transaction string `json:"transaction,omitempty"`
}

// Outcome is how a session ended: its summary, the error that ended it early (nil when a signed
// result was verified), and what the words of WriteText need.
type Outcome struct {
	Summary Summary
	Err     error
	// doc is the verified signed result; factorRules the criteria's text that numbers its factors.
	doc         []byte
	factorRules string
}

// Code is the exit code the session ended with.
func (o *Outcome) Code() int { return o.Summary.Exit }

// WriteJSON writes the summary as one indented JSON object (the -json output).
func (o *Outcome) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(o.Summary)
}

// usageError marks an error the caller's flags or files caused (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usage(err error) error { return usageError{err} }

// exitFor is the exit code of an error that ended a session.
func exitFor(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	var ce *client.Error
	if !errors.As(err, &ce) {
		return ExitUnreachable
	}
	switch ce.Kind {
	case client.KindRefused, client.KindProof:
		return ExitRefused
	case client.KindSpendCap:
		return ExitSpendCap
	case client.KindPayment:
		return ExitPayment
	case client.KindVerify:
		return ExitVerify
	}
	return ExitUnreachable
}

// end fills the summary's outcome members from the exit code and the error.
func (o *Outcome) end(op string, code int, err error) {
	o.Err = err
	o.Summary.Exit, o.Summary.OK, o.Summary.Op = code, code == ExitOK, op
	if err == nil {
		return
	}
	e := &ErrorSummary{Message: err.Error()}
	var ce *client.Error
	if errors.As(err, &ce) {
		e.Status, e.Rule, e.Transaction = ce.Status, ce.Rule, ce.Transaction
	}
	o.Summary.Error = e
}

// Refuse is the outcome of a session that cannot start because its options or files are not
// usable (exit 2); err says why.
func Refuse(op string, err error) *Outcome {
	o := &Outcome{}
	o.end(op, ExitUsage, usage(err))
	return o
}
