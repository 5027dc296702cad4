package portability

import (
	"fmt"
)

// CloseInput is a withdrawal or disposal: its reason, the notice or retention policy it follows
// and any holds (an active hold refuses disposal).
type CloseInput struct {
	Reason             string
	NoticeRef          string
	RetentionPolicyRef string
	Holds              []string
}

// CloseRecord is a local withdrawal or disposal: a minimal tombstone that claims nothing about
// the source store or any recipient.
type CloseRecord struct {
	Reason             string `json:"reason"`
	NoticeRef          string `json:"withdrawal_notice_ref,omitempty"`
	RetentionPolicyRef string `json:"retention_policy_ref,omitempty"`
	Tombstone          string `json:"tombstone"`
	RemoteEffect       string `json:"remote_effect"`
}

func (st *State) close(op string, in CloseInput) (CloseRecord, []string) {
	var reasons []string
	if in.Reason == "" {
		reasons = append(reasons, op+" states its reason")
	}
	if op == "dispose" {
		if in.RetentionPolicyRef == "" {
			reasons = append(reasons, "disposal follows a retention policy: name it")
		}
		if len(in.Holds) > 0 {
			reasons = append(reasons, fmt.Sprintf("%d hold(s) are active: disposal waits", len(in.Holds)))
		}
	}
	return CloseRecord{Reason: in.Reason, NoticeRef: in.NoticeRef, RetentionPolicyRef: in.RetentionPolicyRef,
		Tombstone:    fmt.Sprintf("%s revision %d %s", st.PackageID, st.Revision, st.RevisionRef),
		RemoteEffect: "none claimed: a local " + op + " neither deletes source memory nor proves that any recipient forgot it"}, reasons
}
