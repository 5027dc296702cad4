package portability

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// AttemptInput is an import attempt the custodian records before submitting.
type AttemptInput struct {
	AttemptID string // empty: a fresh one
	Recipient string
	Member    string
	NotBefore time.Time
	NotAfter  time.Time
}

// AttemptRecord is a recorded import attempt: one recipient, one revision, one member.
type AttemptRecord struct {
	AttemptID    string `json:"attempt_id"`
	Recipient    string `json:"recipient"`
	RecipientKey string `json:"recipient_key_id,omitempty"`
	Member       string `json:"member"`
	MemberSHA256 string `json:"member_sha256"`
	MemberCount  int    `json:"member_records"`
	NotBefore    string `json:"not_before"`
	NotAfter     string `json:"not_after"`
}

func (st *State) attempt(files map[string][]byte, in AttemptInput, now time.Time) (AttemptRecord, []string) {
	var reasons []string
	c := st.Conditions
	if st.Preflight == nil || !st.Preflight.Ready {
		reasons = append(reasons, "the last preflight is not ready: an attempt follows a clean receiver review")
	}
	if exp, ok := parseTime(c.ExpiresAt); !ok || !exp.After(now) || in.NotAfter.After(exp) {
		reasons = append(reasons, "the transfer conditions expire before the attempt's window ends")
	}
	if in.Recipient != c.Recipient {
		reasons = append(reasons, "the attempt's recipient is not the one the conditions name")
	}
	if !in.NotBefore.Before(in.NotAfter) {
		reasons = append(reasons, "the attempt's window is empty")
	}
	if in.AttemptID == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		in.AttemptID = "attempt-" + hex.EncodeToString(b[:])
	}
	if _, dup := st.Attempts[in.AttemptID]; dup {
		reasons = append(reasons, "the attempt id is recorded already")
	}
	r := AttemptRecord{AttemptID: in.AttemptID, Recipient: in.Recipient, RecipientKey: c.RecipientKeyID, Member: in.Member,
		NotBefore: in.NotBefore.UTC().Format(time.RFC3339), NotAfter: in.NotAfter.UTC().Format(time.RFC3339)}
	found := false
	for _, mm := range st.Manifest.Members {
		if mm.Path == in.Member && mm.Role == mpp.RoleSubmissionPart {
			found = true
			r.MemberSHA256, r.MemberCount = mm.SHA256, mm.Records
			if b, ok := files[mm.Path]; !ok || pack.SHA256Hex(b) != mm.SHA256 {
				reasons = append(reasons, "the member's bytes are not the sealed ones")
			}
		}
	}
	if !found {
		reasons = append(reasons, "the attempt names no submission part of the package")
	}
	return r, reasons
}
