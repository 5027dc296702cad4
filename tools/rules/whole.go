package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// `rules audit --whole INPUT...`: the local whole-store check (docs/whole-store.md). Its inputs
// are one export of any size or its parts (files in order, a directory of *.json parts, - for
// standard input), analysed as one export; every output opens and closes with the statement that
// it is a local check beyond the published caps, never a signed audit nor a whole-store
// certification.

// wholeMutLog runs the check for a criteria file of kind mutation-log; nil until that kind has
// its own whole-store mode (it is set where that mode lives).
var wholeMutLog func(ms *rules.MutLogSet, parts []part, asJSON bool, stdout io.Writer) error

// wholeRequested reports whether an audit's arguments ask for the whole-store check.
func wholeRequested(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-whole" || a == "--whole" || a == "-whole=true" || a == "--whole=true":
			return true
		}
	}
	return false
}

// cmdWhole is `rules audit --whole [--json] [--criteria FILE] INPUT...`.
func cmdWhole(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("audit --whole", stderr)
	fs.Bool("whole", true, "analyse one export of any size, or its parts, as one export (a local check, never a signed audit)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	crit := fs.String("criteria", defaultCrit, "criteria file")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fail(exitUsage, "audit --whole takes one or more inputs: export files or parts, a directory of parts, - for standard input")
	}
	parts, err := listParts(pos)
	if err != nil {
		return fail(exitInput, "%w", err)
	}
	ms, ok, err := mutLogCriteria(*crit)
	if err != nil {
		return err
	}
	if ok {
		if wholeMutLog == nil {
			return fail(exitUsage, "audit --whole: criteria %s are of kind mutation-log, which has no whole-store check here", *crit)
		}
		return wholeMutLog(ms, parts, *asJSON, stdout)
	}
	ps, err := loadCriteria(*crit)
	if err != nil {
		return err
	}
	wparts := make([]evaluator.WholePart, len(parts))
	for i, p := range parts {
		wparts[i] = evaluator.WholePart{Name: p.name, Open: p.open}
	}
	rep, ref, err := evaluator.AuditWhole(ps, wparts, time.Now())
	switch {
	case errors.Is(err, rules.ErrRuleFailed):
		return fail(exitCompile, "%w", err)
	case err != nil:
		return fail(exitInput, "%w", err)
	case ref != nil:
		writeWholeRefusal(ps.Criteria(), ref, *asJSON, stdout)
		return &exitError{code: exitInput, err: errors.New("")}
	}
	if *asJSON {
		return writeJSON(stdout, rep)
	}
	fmt.Fprint(stdout, renderWhole(rep))
	return nil
}

// wholeRefusalJSON is the machine form of a refusal in this mode: the refusal under the mode.
type wholeRefusalJSON struct {
	Mode          string                  `json:"mode"`
	Certification string                  `json:"certification"`
	Kind          string                  `json:"kind"`
	Refused       *evaluator.WholeRefusal `json:"refused"`
	Closing       string                  `json:"closing"`
}

func writeWholeRefusal(c *rules.Criteria, ref *evaluator.WholeRefusal, asJSON bool, stdout io.Writer) {
	notice := evaluator.WholeNotice(c)
	if asJSON {
		_ = writeJSON(stdout, wholeRefusalJSON{Mode: evaluator.WholeMode(c.CriteriaID),
			Certification: evaluator.WholeCertification(c), Kind: evaluator.WholeKind, Refused: ref, Closing: notice})
		return
	}
	fmt.Fprintf(stdout, "%s\n\npart %s: %s\n\n%s\n", notice, ref.Part, renderRefusal(ref.Refusal), notice)
}

// writePartsTable writes the parts of a whole check as a table of what each holds (unit: records
// or events), after a line that says how they were read together (how) and their total.
func writePartsTable(b *strings.Builder, how, unit string, names []string, counts []int) {
	total, width := 0, len("part")
	for i, n := range names {
		total += counts[i]
		width = max(width, len(n))
	}
	fmt.Fprintf(b, "%d part(s) %s, %d %s:\n", len(names), how, total, unit)
	fmt.Fprintf(b, "  %-*s  %s\n", width, "part", unit)
	for i, n := range names {
		fmt.Fprintf(b, "  %-*s  %d\n", width, n, counts[i])
	}
	b.WriteString("\n")
}

// renderWhole is the terminal form of a whole-store check: the notice, the parts as a table, the
// report as `rules audit` prints one, and the notice again.
func renderWhole(w *evaluator.WholeReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", w.Closing)
	names, counts := make([]string, len(w.Parts)), make([]int, len(w.Parts))
	for i, p := range w.Parts {
		names[i], counts[i] = p.Name, p.Records
	}
	writePartsTable(&b, "analysed as one export", "records", names, counts)
	b.WriteString(renderReport(w.Report))
	fmt.Fprintf(&b, "\n%s\n", w.Closing)
	return b.String()
}
