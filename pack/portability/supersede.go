package portability

import (
	"encoding/json"
	"fmt"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// SupersedeInput is the successor revision's manifest.
type SupersedeInput struct {
	Successor []byte
	Reason    string
}

// SupersedeRecord links a sealed revision to the revision that supersedes it.
type SupersedeRecord struct {
	SuccessorRevision    int    `json:"successor_revision"`
	SuccessorRevisionRef string `json:"successor_revision_ref"`
	Reason               string `json:"supersession_reason"`
}

func (st *State) supersede(in SupersedeInput) (SupersedeRecord, []string) {
	var m mpp.Manifest
	var reasons []string
	if err := json.Unmarshal(in.Successor, &m); err != nil {
		return SupersedeRecord{}, []string{"the successor is not a package manifest"}
	}
	r := SupersedeRecord{SuccessorRevision: m.Revision, SuccessorRevisionRef: "sha256:" + pack.SHA256Hex(in.Successor), Reason: in.Reason}
	if m.PackageID != st.PackageID || m.Revision != st.Revision+1 || m.PriorRevisionRef != st.RevisionRef {
		reasons = append(reasons, fmt.Sprintf("the successor is not revision %d of this package naming this revision as its prior", st.Revision+1))
	}
	if in.Reason == "" {
		reasons = append(reasons, "a supersession states its reason")
	}
	return r, reasons
}
