// Package refusal holds what the export's and the mutation log's refusals share: the kind and
// rule id with the HTTP status and error text they give, the cap numbers, and the body cap check
// (R-2, R-46, FE-R-2).
package refusal

import "net/http"

// Kind is the kind member of every refusal.
const Kind = "refusal"

// BodyBytesCap is the rule id of a body over the byte cap, checked before parsing (R-2, FE-R-2).
const BodyBytesCap = "body_bytes_cap"

// Head is the kind and the rule id every refusal begins with.
type Head struct {
	Kind string `json:"kind"`
	Rule string `json:"rule"`
}

// NewHead is the head of a refusal of rule.
func NewHead(rule string) Head { return Head{Kind: Kind, Rule: rule} }

// HTTPStatus is 413 for the body cap and 400 for every other refusal.
func (h *Head) HTTPStatus() int {
	if h.Rule == BodyBytesCap {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// Error makes a refusal usable as an error; it holds only the rule id.
func (h *Head) Error() string { return "refused: " + h.Rule }

// Caps are the cap and the observed number, given for the cap rules.
type Caps struct {
	Cap      *int `json:"cap,omitempty"`
	Observed *int `json:"observed,omitempty"`
}

// OverCap reports whether a body of n bytes is over the cap limit, and if so the cap and the
// observed size as a refusal gives them.
func OverCap(limit, n int) (Caps, bool) {
	if n > limit {
		return Caps{Cap: &limit, Observed: &n}, true
	}
	return Caps{}, false
}
