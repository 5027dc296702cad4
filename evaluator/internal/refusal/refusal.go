// Package refusal holds what the export's and the mutation log's refusals share: the body cap's
// rule id, the HTTP status and error text of a rule, and the body cap check (R-2, R-46, FE-R-2).
package refusal

import "net/http"

// Kind is the kind member of every refusal.
const Kind = "refusal"

// BodyBytesCap is the rule id of a body over the byte cap, checked before parsing (R-2, FE-R-2).
const BodyBytesCap = "body_bytes_cap"

// HTTPStatus is 413 for the body cap and 400 for every other rule.
func HTTPStatus(rule string) int {
	if rule == BodyBytesCap {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// Error is a refusal's error text; it holds only the rule id.
func Error(rule string) string { return "refused: " + rule }

// OverCap reports whether a body of n bytes is over the cap limit, and if so the cap and the
// observed size as a refusal gives them.
func OverCap(limit, n int) (capp, observed *int, over bool) {
	if n > limit {
		return &limit, &n, true
	}
	return nil, nil, false
}
