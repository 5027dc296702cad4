package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/tools/rules/internal/pin"
)

// The commands on a criteria file of kind mutation-log (criteria/forget-envelope.yaml): the kind
// in the file selects these, never its name.

// mutLogCriteria compiles path when it is of kind mutation-log (ok false for any other kind).
func mutLogCriteria(path string) (ms *rules.MutLogSet, ok bool, err error) {
	src, rerr := os.ReadFile(path)
	if rerr != nil {
		return nil, false, nil // the v1 path reports the unreadable file
	}
	k, kerr := rules.KindOf(src)
	if kerr != nil || k != rules.KindMutationLog {
		return nil, false, nil
	}
	ms, err = rules.LoadMutationLog(path, src)
	if err != nil {
		if errors.Is(err, rules.ErrCompile) {
			return nil, true, &exitError{code: exitCompile, err: err}
		}
		return nil, true, &exitError{code: exitInput, err: err}
	}
	return ms, true, nil
}

// corpusDir is --corpus when given, else the criteria's own corpus directory.
func corpusDir(given string, set bool, ms *rules.MutLogSet) string {
	if set {
		return given
	}
	return ms.Criteria().Corpus.Dir
}

func pinMutLog(ms *rules.MutLogSet, crit, dir string, write bool, stdout io.Writer) error {
	c, sum, err := pin.Of(dir)
	if err != nil {
		return pinFailure(err)
	}
	if write {
		if err := pin.Write(crit, sum); err != nil {
			return pinFailure(err)
		}
		if ms, _, err = mutLogCriteria(crit); err != nil {
			return err
		}
	}
	if want := ms.Criteria().Corpus.SHA256; want != sum {
		return fail(exitCorpus, "%s names corpus pin %s, the corpus is %s (run: rules pin --criteria %s --write)", crit, want, sum, crit)
	}
	fmt.Fprintf(stdout, "%s %s\n", c.Index.ID, sum)
	return nil
}

// runMutLog is `rules audit|precheck --criteria FILE INPUT` for a mutation-log rule set.
func runMutLog(op string, ms *rules.MutLogSet, body []byte, cs *corpus.Case, asJSON bool, stdout io.Writer) error {
	now := time.Now()
	var (
		res any
		ref *mutlog.Refusal
		err error
	)
	if op == "audit" {
		var rep *mutlog.Report
		if rep, ref, err = mutlog.Audit(ms, body, now); rep != nil {
			res = rep
		}
	} else {
		var pre *mutlog.PrecheckResult
		if pre, ref, err = mutlog.Precheck(ms, body, now); pre != nil {
			res = pre
		}
	}
	switch {
	case err != nil:
		return fail(exitCompile, "%w", err)
	case ref != nil:
		if asJSON {
			_ = writeJSON(stdout, ref)
		} else {
			line := "REFUSED (free): " + ref.Rule
			switch {
			case ref.Index != nil:
				line += fmt.Sprintf(" at index %d", *ref.Index)
			case ref.Cap != nil:
				line += fmt.Sprintf(" (cap %d, observed %d)", *ref.Cap, *ref.Observed)
			}
			fmt.Fprintln(stdout, line)
		}
		if cs != nil && op == "audit" {
			return checkCaseMutLog(ms, cs, stdout)
		}
		return &exitError{code: exitInput, err: errors.New("")}
	}
	if asJSON {
		return writeJSON(stdout, res)
	}
	if rep, ok := res.(*mutlog.Report); ok {
		fmt.Fprint(stdout, renderMutLogReport(rep))
	} else {
		pre := res.(*mutlog.PrecheckResult)
		fmt.Fprintf(stdout, "%s pre-check: %d events, forget mode %s\n", pre.CriteriaID, pre.Events, pre.ForgetMode)
		for _, f := range rules.MutLogFactors {
			st := pre.Factors[f]
			fmt.Fprintf(stdout, "%-28s %s\n", f, statusText(st.Status, st.Reason))
		}
	}
	if cs != nil && op == "audit" {
		return checkCaseMutLog(ms, cs, stdout)
	}
	return nil
}

func statusText(status, reason string) string {
	if reason == "" {
		return status
	}
	return status + ": " + reason
}

func checkCaseMutLog(ms *rules.MutLogSet, cs *corpus.Case, stdout io.Writer) error {
	r := corpus.RunCaseMutLog(ms, cs, nil)
	if r.Passed() {
		fmt.Fprintf(stdout, "\ncorpus case %s: the engine gives the expected output\n", cs.Name)
		return nil
	}
	fmt.Fprintf(stdout, "\ncorpus case %s: the engine differs from the expected output\n", cs.Name)
	if r.Err != "" {
		fmt.Fprintf(stdout, "    error: %s\n", r.Err)
	}
	for _, d := range r.Diffs {
		fmt.Fprintf(stdout, "    %s\n        expected: %s\n        got:      %s\n", d.Path, d.Expected, d.Got)
	}
	return fail(exitCorpus, "the case differs")
}

// renderMutLogReport prints a report as words: the verdict line, then one line per factor.
func renderMutLogReport(r *mutlog.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", r.VerdictLine)
	line := func(name string, v any, text func() string) {
		if st, ok := v.(mutlog.Status); ok {
			fmt.Fprintf(&b, "%-28s %s\n", name, statusText(st.Status, st.Reason))
			return
		}
		fmt.Fprintf(&b, "%-28s %s\n", name, text())
	}
	f := r.Factors
	line("forget_envelopes", f.ForgetEnvelopes, func() string {
		x := f.ForgetEnvelopes.(mutlog.ForgetEnvelopes)
		return fmt.Sprintf("ASSESSABLE, %d of %d forgets record an envelope (%s); without: %s", x.WithEnvelope, x.Forgets, x.Rate.Value, seqText(x.WithoutEnvelope))
	})
	line("reinserts_after_forget", f.ReinsertsAfterForget, func() string {
		x := f.ReinsertsAfterForget.(mutlog.Reinserts)
		return fmt.Sprintf("ASSESSABLE, %d reinserts: %s", x.Reinserts, seqText(x.Seqs))
	})
	line("reinserts_outside_envelope", f.ReinsertsOutsideEnvelope, func() string {
		x := f.ReinsertsOutsideEnvelope.(mutlog.OutsideEnvelope)
		judged := ""
		if x.Judged != nil && x.Unjudged != nil {
			judged = fmt.Sprintf("%d judged, %d not judged; ", *x.Judged, *x.Unjudged)
		}
		return fmt.Sprintf("ASSESSABLE, %d reinserts, %d with a recorded envelope, %s%d without an envelope, %d without a principal: %s; outside the envelope: %s; silent: %s",
			x.Reinserts, x.Checked, judged, x.NoEnvelope, x.Unattributed, seqText(x.UnattributedSeqs),
			gatedText(x.Outside, x.OutsideSeqs), gatedText(x.Silent, x.SilentSeqs))
	})
	line("alias_reinserts", f.AliasReinserts, func() string {
		x := f.AliasReinserts.(mutlog.Aliases)
		return fmt.Sprintf("ASSESSABLE, %d of %d reinserts through an alias: %s", x.Aliases, x.Reinserts, seqText(x.Seqs))
	})
	line("reopens", f.Reopens, func() string {
		x := f.Reopens.(mutlog.Reopens)
		return fmt.Sprintf("ASSESSABLE, %d reopens, %d unchecked: %s; retired-key writes: %s", x.Reopens, x.Unchecked, seqText(x.UncheckedSeqs), seqText(x.RetiredWriteSeqs))
	})
	line("reassignments", f.Reassignments, func() string {
		x := f.Reassignments.(mutlog.Reassignments)
		return fmt.Sprintf("ASSESSABLE, %d reassignments, %d without an authority check: %s", x.Reassignments, x.Unchecked, seqText(x.UncheckedSeqs))
	})
	line("replay", f.Replay, func() string {
		x := f.Replay.(mutlog.Replay)
		return fmt.Sprintf("ASSESSABLE, %d mismatches over %d live slots and %d entries: %d missing, %d extra, %d version, %d repeated",
			x.Mismatches, x.LiveSlots, x.SnapshotEntries, x.Missing, x.Extra, x.Version, x.Duplicate)
	})
	c := r.Coverage
	fmt.Fprintf(&b, "\ncoverage: %d slots (%d aliased), %d live after replay, %d forgets of a slot not live, %d reopens without effect, %d events without a principal, %d principals\n",
		c.Slots, c.AliasedSlots, c.LiveSlots, c.ForgetsOfNotLive, c.ReopensIneffective, c.UnattributedEvents, c.Principals)
	return b.String()
}

// gatedText is a gated fact (FE-R-35, FE-R-37): its count and seqs, or NOT ASSESSABLE with the
// reason.
func gatedText(v any, seqs *[]int64) string {
	if st, ok := v.(mutlog.Status); ok {
		return statusText(st.Status, st.Reason)
	}
	if seqs == nil {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%v (%s)", v, seqText(*seqs))
}

func seqText(s []int64) string {
	if len(s) == 0 {
		return "none"
	}
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = fmt.Sprint(n)
	}
	return "seq " + strings.Join(parts, ", ")
}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// programsOf lists a compiled set's programs, whatever its kind.
func programsOf(s rules.Served) []*rules.Program {
	if p, ok := s.(interface{ Programs() []*rules.Program }); ok {
		return p.Programs()
	}
	return nil
}

// readInput reads the one input of audit/precheck: an export file, "-", or a corpus case file.
func readInput(cmd string, pos []string) ([]byte, *corpus.Case, error) {
	if len(pos) != 1 {
		return nil, nil, fail(exitUsage, "%s takes one input: an export file, - for standard input, or a corpus case file (audit --whole takes a log of any length or its parts, or a directory of them)", cmd)
	}
	var body []byte
	var err error
	if pos[0] == "-" {
		body, err = io.ReadAll(stdin)
	} else {
		body, err = os.ReadFile(pos[0])
	}
	if err != nil {
		return nil, nil, fail(exitInput, "read export: %w", err)
	}
	cs := corpusCase(body)
	if cs == nil {
		return body, nil, nil
	}
	export, err := cs.RequestBody()
	if err != nil {
		return nil, nil, fail(exitInput, "corpus case: %w", err)
	}
	return export, cs, nil
}

// explainMutLog prints why a log's report reads as it does: each decision of each event by its
// published name and text, then every gate by its reason and text.
func explainMutLog(ms *rules.MutLogSet, body []byte, asJSON bool, stdout io.Writer) error {
	ex, ref, err := mutlog.Explain(ms, body, time.Now())
	switch {
	case err != nil:
		return fail(exitCompile, "%w", err)
	case ref != nil:
		fmt.Fprintln(stdout, "REFUSED (free): "+ref.Rule)
		return &exitError{code: exitInput, err: errors.New("")}
	}
	if asJSON {
		return writeJSON(stdout, ex)
	}
	fmt.Fprint(stdout, renderMutLogExplanation(ms, ex))
	return nil
}

// decisionSubjects say in words which events each subject's decisions judge.
var decisionSubjects = map[string]string{
	"forget":   "every forget",
	"reinsert": "every reinsert (a write into a forgotten or retired slot), against its governing forget",
	"reopen":   "every reopen that takes a slot out of retirement",
	"reassign": "every session reassignment",
}

// renderMutLogExplanation is the terminal form of a log's explanation: the verdict line, the
// decisions by name, each judged event, then the log facts and the gates.
func renderMutLogExplanation(ms *rules.MutLogSet, ex *mutlog.Explanation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", ex.Report.VerdictLine)
	b.WriteString("decisions (criteria decisions:, by name), judging:\n")
	for _, subj := range rules.MutLogSubjects {
		fmt.Fprintf(&b, "  %s: %s\n", subj, decisionSubjects[subj])
		for i, name := range rules.DecisionSlots(subj) {
			fmt.Fprintf(&b, "    %-14s %s\n", name, oneLine(ms.Decisions(subj)[i].Expr.Text))
		}
	}
	b.WriteString("\nevents judged, in seq order:\n")
	if len(ex.Events) == 0 {
		b.WriteString("  none judged: no forget, reinsert, effective reopen or reassignment\n")
	}
	for _, e := range ex.Events {
		var holds, not []string
		for _, d := range e.Decisions {
			if d.Value {
				holds = append(holds, d.Rule)
			} else {
				not = append(not, d.Rule)
			}
		}
		fmt.Fprintf(&b, "  seq %d %s, judged as a %s: holds %s", e.Seq, e.Op, e.Subject, wordList(holds))
		if len(not) > 0 {
			fmt.Fprintf(&b, "; does not hold %s", wordList(not))
		}
		b.WriteString("\n")
	}
	writeMutLogGates(&b, ex)
	return b.String()
}

// writeMutLogGates writes the log facts the gates read, then the gates that say whether the rule
// set applies, each factor's assessability gates and the fact gates read after replay.
func writeMutLogGates(b *strings.Builder, ex *mutlog.Explanation) {
	b.WriteString("\nlog facts the gates read:\n")
	for _, k := range sortedKeys(ex.Facts) {
		fmt.Fprintf(b, "  %-22s %v\n", k, factText(ex.Facts[k]))
	}
	if len(ex.DoesNotApply) > 0 {
		b.WriteString("\ndoes the rule set apply (the first gate that holds says it does not):\n")
		for _, g := range ex.DoesNotApply {
			fmt.Fprintf(b, "      %-10s %q when %s\n", holdsText(g.Value), g.Rule, oneLine(g.Text))
		}
	}
	b.WriteString("\nassessability gates, per factor in order (the first that holds makes it NOT ASSESSABLE):\n")
	for _, g := range ex.Gates {
		fmt.Fprintf(b, "  %s\n", g.Factor)
		if len(g.Gates) == 0 {
			b.WriteString("      no gate\n")
		}
		for _, r := range g.Gates {
			fmt.Fprintf(b, "      %-10s %q when %s\n", holdsText(r.Value), r.Rule, oneLine(r.Text))
		}
	}
	if len(ex.FactGates) > 0 {
		b.WriteString("\nfact gates, read after replay over the factor's counts")
		for _, k := range sortedKeys(ex.Counts) {
			fmt.Fprintf(b, " · %s %d", k, ex.Counts[k])
		}
		b.WriteString(":\n")
		for _, g := range ex.FactGates {
			fmt.Fprintf(b, "  %s\n", g.Factor)
			for _, r := range g.Gates {
				fmt.Fprintf(b, "      %-10s %q when %s\n", holdsText(r.Value), r.Rule, oneLine(r.Text))
			}
		}
	}
}

func factText(v any) string {
	if bv, ok := v.(bool); ok {
		return yesNo(bv)
	}
	return fmt.Sprint(v)
}
