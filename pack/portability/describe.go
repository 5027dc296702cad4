package portability

import (
	"strings"

	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// DescribeInput is the curator's evidence of the selection: the source snapshot it was taken
// from, the query or rule that selected it, and (refused) a delta baseline.
type DescribeInput struct {
	SnapshotRef       string
	SelectionQueryRef string
	BaselineRef       string
	CaptureInterval   string
}

// DescribeRecord is the draft description of the selected export.
type DescribeRecord struct {
	SnapshotRef          string         `json:"snapshot_ref"`
	SelectionQueryRef    string         `json:"selection_query_ref,omitempty"`
	CaptureInterval      string         `json:"capture_interval,omitempty"`
	CaptureTime          string         `json:"capture_time"`
	Cutoff               string         `json:"cutoff"`
	SourceSystem         string         `json:"source_system"`
	PackageKind          string         `json:"package_kind"`
	CompletenessState    string         `json:"completeness_state"`
	EmptySelectionReason string         `json:"empty_selection_reason,omitempty"`
	Members              int            `json:"members"`
	Records              int            `json:"records"`
	RecordsByClass       map[string]int `json:"records_by_class"`
	OmissionsBlocking    int            `json:"omissions_blocking"`
	OmissionsNonBlocking int            `json:"omissions_non_blocking"`
	NamePolicy           string         `json:"name_policy"`
}

func (st *State) describe(in DescribeInput) (DescribeRecord, []string) {
	m := st.Manifest
	var reasons []string
	if strings.TrimSpace(in.SnapshotRef) == "" {
		reasons = append(reasons, "unidentified source revision: no snapshot reference was given")
	}
	if in.BaselineRef != "" {
		reasons = append(reasons, "a delta against a baseline is not supported: this profile packages snapshots and selections")
	}
	r := DescribeRecord{
		SnapshotRef: in.SnapshotRef, SelectionQueryRef: in.SelectionQueryRef, CaptureInterval: in.CaptureInterval,
		CaptureTime: m.CaptureTime, Cutoff: m.Cutoff, SourceSystem: m.SourceSystem, PackageKind: m.PackageKind,
		EmptySelectionReason: m.EmptySelection, Members: len(m.Members), Records: len(m.Records),
		RecordsByClass: map[string]int{}, OmissionsBlocking: m.Totals.OmissionsBlocking,
		OmissionsNonBlocking: m.Totals.OmissionsNonBlocking, NamePolicy: m.NamePolicy,
	}
	for _, rec := range m.Records {
		r.RecordsByClass[rec.Class]++
	}
	switch {
	case len(m.Records) == 0:
		r.CompletenessState = "empty_selection"
	case m.Totals.OmissionsBlocking > 0:
		r.CompletenessState = "incomplete"
	case m.PackageKind == mpp.KindSelection:
		if in.SelectionQueryRef == "" {
			reasons = append(reasons, "a selection names the query or rule that selected it")
		}
		r.CompletenessState = "selection"
	default:
		r.CompletenessState = "complete_snapshot"
	}
	return r, reasons
}
