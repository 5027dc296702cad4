package mpp

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ReportCheck is the outcome of CheckReport.
type ReportCheck struct {
	Part       string // the package part the report was made from ("" when none matches)
	Records    int
	IDsNamed   int
	Mismatches []string
}

func (rc *ReportCheck) bad(f string, a ...any) {
	rc.Mismatches = append(rc.Mismatches, fmt.Sprintf(f, a...))
}

// auditReport is what CheckReport reads of an audit report.
type auditReport struct {
	CriteriaID string          `json:"criteria_id"`
	Family     string          `json:"family"`
	Form       string          `json:"form"`
	Variant    string          `json:"variant"`
	Records    *int            `json:"records"`
	Factors    json.RawMessage `json:"factors"`
}

// partIDs is the record ids of each part of a package, with the parts in index order.
type partIDs struct {
	ids   map[string]map[string]bool
	order []string
}

func newPartIDs(recs []Record) partIDs {
	p := partIDs{ids: map[string]map[string]bool{}}
	for _, rec := range recs {
		if p.ids[rec.Part] == nil {
			p.ids[rec.Part] = map[string]bool{}
			p.order = append(p.order, rec.Part)
		}
		p.ids[rec.Part][rec.ID] = true
	}
	return p
}

// missing counts the ids that part does not hold.
func (p partIDs) missing(part string, ids []string) (n int) {
	for _, id := range ids {
		if !p.ids[part][id] {
			n++
		}
	}
	return n
}

// CheckReport ties a signed audit report (its signature already checked by the caller) to the
// package part it was made from: the report's criteria id is the package's target, its family,
// form and variant are the package's, and some part holds exactly its record count and every
// record id it names. A split package has one report per part; part ("" = find it) names one.
func CheckReport(m *Manifest, report []byte, part string) *ReportCheck {
	rc := &ReportCheck{}
	var r auditReport
	if err := json.Unmarshal(report, &r); err != nil || r.Records == nil {
		rc.bad("the report is not an audit report (no records count)")
		return rc
	}
	rc.Records = *r.Records
	if r.CriteriaID != m.TargetCriteriaID {
		rc.bad("the report's criteria id %q is not the package's target %q", r.CriteriaID, m.TargetCriteriaID)
	}
	if r.Family != m.Family || r.Form != m.Form || r.Variant != m.Variant {
		rc.bad("the report's family/form/variant %s/%s/%s differ from the package's %s/%s/%s", r.Family, r.Form, r.Variant, m.Family, m.Form, m.Variant)
	}
	ids := ReportRecordIDs(r.Factors)
	rc.IDsNamed = len(ids)
	parts := newPartIDs(m.Records)
	if part != "" {
		rc.checkPart(parts, part, ids)
	} else {
		rc.findPart(parts, ids)
	}
	return rc
}

// checkPart holds the part the caller named to the report's count and ids.
func (rc *ReportCheck) checkPart(parts partIDs, part string, ids []string) {
	held := parts.ids[part]
	if held == nil {
		rc.bad("the package has no part %s", part)
		return
	}
	rc.Part = part
	if len(held) != rc.Records {
		rc.bad("the report counts %d records; part %s holds %d", rc.Records, part, len(held))
	}
	if n := parts.missing(part, ids); n > 0 {
		rc.bad("%d record ids the report names are not in part %s", n, part)
	}
}

// findPart finds the one part that holds the report's count and every id it names.
func (rc *ReportCheck) findPart(parts partIDs, ids []string) {
	var match []string
	for _, p := range parts.order {
		if len(parts.ids[p]) == rc.Records && parts.missing(p, ids) == 0 {
			match = append(match, p)
		}
	}
	switch len(match) {
	case 1:
		rc.Part = match[0]
	case 0:
		counts := make([]string, 0, len(parts.order))
		for _, p := range parts.order {
			counts = append(counts, p+": "+strconv.Itoa(len(parts.ids[p]))+" records, "+strconv.Itoa(parts.missing(p, ids))+" named ids missing")
		}
		rc.bad("no part of the package matches the report (%d records, %d named ids): %s", rc.Records, len(ids), strings.Join(counts, "; "))
	default:
		rc.bad("%d parts match the report equally (%s): name one with --part", len(match), strings.Join(match, ", "))
	}
}

// ReportRecordIDs lists every record id an audit report's factors name: cluster members, the
// duplicate clusters' members and the conflicting records of every sub-check.
func ReportRecordIDs(factors json.RawMessage) []string {
	var f struct {
		Cross struct {
			Clusters []struct {
				Members []struct {
					ID string `json:"id"`
				} `json:"members"`
			} `json:"clusters"`
		} `json:"cross_scope_clusters"`
		Dups struct {
			Clusters []struct {
				Members []string `json:"members"`
			} `json:"clusters"`
		} `json:"duplicates"`
		Conflicts struct {
			Records map[string][]string `json:"records"`
		} `json:"scope_conflicts"`
	}
	_ = json.Unmarshal(factors, &f)
	set := map[string]bool{}
	for _, c := range f.Cross.Clusters {
		for _, m := range c.Members {
			set[m.ID] = true
		}
	}
	for _, c := range f.Dups.Clusters {
		for _, id := range c.Members {
			set[id] = true
		}
	}
	for _, ids := range f.Conflicts.Records {
		for _, id := range ids {
			set[id] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
