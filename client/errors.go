package client

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Kind classifies why a call did not produce a verified result; commands map it to exit codes.
type Kind int

// The kinds of failure.
const (
	// KindRefused: the service refused the export or the call (a rule id says which).
	KindRefused Kind = iota + 1
	// KindSpendCap: the 402 asks more than the caller's cap; nothing was signed.
	KindSpendCap
	// KindPayment: the payment was not accepted or not settled (see Transaction when broadcast).
	KindPayment
	// KindVerify: the signed result does not verify against the published key.
	KindVerify
	// KindTransport: the service or the chain could not be reached, or answered unexpectedly.
	KindTransport
	// KindProof: sign-in-with-x was asked and this client cannot give it (no wallet, other wallet).
	KindProof
)

// Error is a failed call. Its text is static plus numbers, rule ids and transaction ids.
type Error struct {
	Kind Kind
	// Status is the HTTP status of the answer, when there was one.
	Status int
	// Rule is the refusal rule or payment reason the service named.
	Rule string
	// Transaction is the payment transaction id when a payment was broadcast.
	Transaction string
	// Msg is a static description.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Rule != "" {
		b.WriteString(" rule=" + e.Rule)
	}
	if e.Transaction != "" {
		b.WriteString(" transaction=" + e.Transaction)
	}
	return b.String()
}

// refusal turns a non-success answer into an Error naming the service's rule.
func refusal(a *answer, route string) *Error {
	var b struct {
		Kind  string `json:"kind"`
		Rule  string `json:"rule"`
		Error string `json:"error"`
	}
	_ = json.Unmarshal(a.body, &b)
	rule := b.Rule
	if rule == "" && b.Kind != "error" {
		rule = b.Error
	}
	if !staticToken(rule) {
		rule = ""
	}
	kind := KindRefused
	if a.status >= 500 {
		kind = KindTransport
	}
	return &Error{Kind: kind, Status: a.status, Rule: rule, Msg: "client: " + route + " refused"}
}

// staticToken accepts only identifier-like strings (rule ids, reasons), so nothing else a server
// sends is ever printed.
func staticToken(s string) bool {
	if s == "" || len(s) > 120 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
