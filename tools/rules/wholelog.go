package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// `rules audit --whole --criteria criteria/forget-envelope.yaml INPUT...`: the local whole-log
// check (docs/whole-store.md, section "Mutation logs"). One mutation log of any length, or its
// parts (consecutive runs of its events under one header, the snapshot in the last), audited as
// one log; every output opens and closes with the statement that it is a local check beyond the
// published caps, not a signed audit, and never a certification of the store.

func init() { wholeMutLog = runWholeLog }

// wholeLogKind is the kind of the JSON form of this check.
const wholeLogKind = "local_whole_log_check"

// wholeLogMode is what the check is, for the rule set of the criteria id.
func wholeLogMode(id string) string {
	return "local whole-log check beyond the published caps — not a signed " + id + " audit"
}

// wholeLogCertification is the sentence of the criteria's scope text that says a report is never
// a certification ("" when it has none): the criteria's own words, not this tool's.
func wholeLogCertification(c *rules.MutLogCriteria) string {
	return rules.SentenceWith(c.Texts["scope_text"], "certification")
}

// wholeLogNotice is the line every output of the check opens and closes with.
func wholeLogNotice(c *rules.MutLogCriteria) string {
	n := wholeLogMode(c.CriteriaID) + "."
	if cert := wholeLogCertification(c); cert != "" {
		n += " " + cert
	}
	return n
}

// wholeLogPart is one part in the machine form: its name as given and the events it gave.
type wholeLogPart struct {
	Name   string `json:"name"`
	Events int    `json:"events"`
}

// wholeLogJSON is the machine form: the statements first and last, the parts, then the report or
// the refusal.
type wholeLogJSON struct {
	Mode          string               `json:"mode"`
	Certification string               `json:"certification"`
	Kind          string               `json:"kind"`
	Parts         []wholeLogPart       `json:"parts,omitempty"`
	Report        *mutlog.Report       `json:"report,omitempty"`
	Refused       *mutlog.WholeRefusal `json:"refused,omitempty"`
	Closing       string               `json:"closing"`
}

// wholeLogRules say in words what the mode's own refusals mean.
var wholeLogRules = map[string]string{
	mutlog.WholeHeaderDiffers:     "its header (every member but events and snapshot) differs from the first part's",
	mutlog.WholeHeaderAfterEvents: "it is over the body cap and names a header member after its events; a large part lists its header first",
	mutlog.WholeSnapshotNotLast:   "only the last part may carry the snapshot",
	mutlog.WholeSeqOrder:          "an event's seq comes more than one event cap of events out of seq order, or repeats one that far back",
}

func runWholeLog(ms *rules.MutLogSet, parts []part, asJSON bool, stdout io.Writer) error {
	srcs := make([]mutlog.PartSource, len(parts))
	for i, p := range parts {
		srcs[i] = p.open
	}
	c := ms.Criteria()
	res, ref, err := mutlog.AuditWhole(ms, srcs, time.Now())
	switch {
	case errors.Is(err, rules.ErrRuleFailed):
		return fail(exitCompile, "%w", err)
	case err != nil:
		return fail(exitInput, "read a part: %w", err)
	}
	out := wholeLogJSON{Mode: wholeLogMode(c.CriteriaID), Certification: wholeLogCertification(c), Kind: wholeLogKind,
		Refused: ref, Closing: wholeLogNotice(c)}
	if res != nil {
		out.Report = res.Report
		for i, p := range parts {
			out.Parts = append(out.Parts, wholeLogPart{Name: p.name, Events: res.PartEvents[i]})
		}
	}
	if asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		fmt.Fprint(stdout, renderWholeLog(&out, parts))
	}
	if ref != nil {
		return &exitError{code: exitInput, err: errors.New("")}
	}
	return nil
}

// renderWholeLog is the terminal form: the notice, the parts as a table, the report as
// `rules audit` prints one (or the refusal), and the notice again.
func renderWholeLog(w *wholeLogJSON, parts []part) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", w.Closing)
	if w.Refused != nil {
		b.WriteString(wholeLogRefusalText(w.Refused, parts))
		fmt.Fprintf(&b, "\n%s\n", w.Closing)
		return b.String()
	}
	names, counts := make([]string, len(w.Parts)), make([]int, len(w.Parts))
	for i, p := range w.Parts {
		names[i], counts[i] = p.Name, p.Events
	}
	writePartsTable(&b, "replayed as one log", "events", names, counts)
	b.WriteString(renderMutLogReport(w.Report))
	fmt.Fprintf(&b, "\n%s\n", w.Closing)
	return b.String()
}

// wholeLogRefusalText is a refusal in words: the rule, where it was found, and for the mode's own
// rules what they mean.
func wholeLogRefusalText(r *mutlog.WholeRefusal, parts []part) string {
	line := "REFUSED (free): " + r.Rule
	switch {
	case r.Index != nil && r.Rule == "snapshot_invalid":
		line += fmt.Sprintf(" at snapshot entry %d", *r.Index)
	case r.Index != nil:
		line += fmt.Sprintf(" at index %d of the whole log", *r.Index)
	case r.Seq != nil:
		line += fmt.Sprintf(" at seq %d", *r.Seq)
	}
	if r.Part > 0 && r.Part <= len(parts) {
		line += fmt.Sprintf(", in part %d (%s)", r.Part, parts[r.Part-1].name)
	}
	line += "\n"
	if why, ok := wholeLogRules[r.Rule]; ok {
		line += "  a rule of the whole-log mode, not of the criteria: " + why + "\n"
	}
	return line
}
