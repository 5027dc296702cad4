package portability

import (
	"time"
)

// ConditionsInput are the transfer conditions the policy reviewer attaches (never issues).
type ConditionsInput struct {
	Recipient      string
	RecipientKeyID string // the key the recipient's receipts are signed with
	Tenant         string
	Purpose        string
	GrantRef       string
	PolicyRef      string
	Duties         []string
	Prohibitions   []string
	ExpiresAt      time.Time
}

// ConditionsRecord is the scoped authority evidence for this revision.
type ConditionsRecord struct {
	Recipient      string   `json:"recipient"`
	RecipientKeyID string   `json:"recipient_key_id,omitempty"`
	Tenant         string   `json:"tenant,omitempty"`
	Purpose        string   `json:"purpose"`
	GrantRef       string   `json:"grant_ref,omitempty"`
	PolicyRef      string   `json:"policy_ref,omitempty"`
	Duties         []string `json:"duties"`
	Prohibitions   []string `json:"prohibitions"`
	ExpiresAt      string   `json:"expires_at"`
	FailClosed     string   `json:"fail_closed"`
	Issued         bool     `json:"grant_issued_here"`
}

func (st *State) conditions(in ConditionsInput, now time.Time) (ConditionsRecord, []string) {
	var reasons []string
	if in.Recipient == "" || in.Purpose == "" {
		reasons = append(reasons, "conditions name the recipient and the purpose")
	}
	if in.GrantRef == "" && in.PolicyRef == "" {
		reasons = append(reasons, "unscoped: no grant or policy reference permits this export")
	}
	if in.ExpiresAt.IsZero() || !in.ExpiresAt.After(now) {
		reasons = append(reasons, "the conditions have no expiry or have expired")
	}
	r := ConditionsRecord{Recipient: in.Recipient, RecipientKeyID: in.RecipientKeyID, Tenant: in.Tenant, Purpose: in.Purpose,
		GrantRef: in.GrantRef, PolicyRef: in.PolicyRef, Duties: orEmpty(in.Duties), Prohibitions: orEmpty(in.Prohibitions),
		ExpiresAt:  in.ExpiresAt.UTC().Format(time.RFC3339),
		FailClosed: "after expiry, withdrawal or when authority cannot be rechecked: preflight and attempts are refused"}
	return r, reasons
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
