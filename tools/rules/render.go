package main

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// renderReport is the terminal form of a report: the verdict line first, then each factor, then
// the coverage block.
func renderReport(r *evaluator.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", r.VerdictLine)
	fmt.Fprintf(&b, "%s %s · %s/%s (%s) · criteria digest %s\n\n", r.CriteriaID, r.CriteriaRevision, r.Family, r.Form, r.Variant, r.CriteriaDigest)
	f := r.Factors
	writeScopeRates(&b, f)
	c := f.CrossScopeClusters
	writeFactorHead(&b, 3, "cross_scope_clusters", c.Status, c.Reason)
	writeCrossScopeClusters(&b, c)
	sc := f.ScopeConflicts
	writeFactorHead(&b, 4, "scope_conflicts", sc.Status, sc.Reason)
	writeScopeConflicts(&b, sc)
	d := f.Duplicates
	writeFactorHead(&b, 5, "duplicates", d.Status, d.Reason)
	writeDuplicates(&b, d)
	writeReportCoverage(&b, r.Coverage, c.Reason)
	fmt.Fprintf(&b, "\n%s\n", r.ScopeStatement)
	return b.String()
}

// writeFactorHead writes a factor's numbered head line: its name, status and reason.
func writeFactorHead(b *strings.Builder, n int, name, status, reason string) {
	fmt.Fprintf(b, "(%d) %-22s %s", n, name, status)
	if reason != "" {
		fmt.Fprintf(b, " — %s", reason)
	}
	b.WriteString("\n")
}

// writeScopeRates writes factors 1 and 2, scope_presence and unscoped_rate.
func writeScopeRates(b *strings.Builder, f evaluator.Factors) {
	writeFactorHead(b, 1, "scope_presence", f.ScopePresence.Status, f.ScopePresence.Reason)
	if f.ScopePresence.Rate != nil {
		fmt.Fprintf(b, "    %s of eligible records scoped (%d/%d), %d distinct scopes\n",
			rateText(f.ScopePresence.Rate), *f.ScopePresence.Scoped, *f.ScopePresence.Eligible, *f.ScopePresence.DistinctScopes)
	}
	writeFactorHead(b, 2, "unscoped_rate", f.UnscopedRate.Status, f.UnscopedRate.Reason)
	if f.UnscopedRate.Rate != nil {
		fmt.Fprintf(b, "    %s unscoped (%d/%d)\n", rateText(f.UnscopedRate.Rate), *f.UnscopedRate.Unscoped, *f.UnscopedRate.Eligible)
	}
}

// writeCrossScopeClusters writes the body of factor 3: its counts, then each cluster and its
// members.
func writeCrossScopeClusters(b *strings.Builder, c evaluator.CrossScopeClusters) {
	if c.Candidate != nil {
		fmt.Fprintf(b, "    candidate %d · marked shared %d · undeclared %d · ambiguous %d · template lineage %d · marked share %s\n",
			*c.Candidate, *c.MarkedShared, *c.Undeclared, *c.Ambiguous, *c.TemplateLineage, rateText(c.MarkedShare))
		for _, cl := range *c.Clusters {
			fmt.Fprintf(b, "    #%d %s [%s]: %s", cl.Cluster, cl.Classification, cl.DecidedBy, cl.Statement)
			if cl.Reason != "" {
				fmt.Fprintf(b, " — %s", cl.Reason)
			}
			fmt.Fprintf(b, " · %d distinct scopes", cl.DistinctScopes)
			if cl.DistinctSources != nil {
				fmt.Fprintf(b, " · %d distinct sources", *cl.DistinctSources)
			} else {
				b.WriteString(" · B5 not run (a copy carries no source)")
			}
			b.WriteString("\n")
			for _, m := range cl.Members {
				tag := ""
				switch {
				case m.Global:
					tag = " (global)"
				case m.Covered:
					tag = " (covered)"
				}
				fmt.Fprintf(b, "        %s  scope %s%s\n", m.ID, scopeText(m.Scope), tag)
			}
		}
	}
}

// writeScopeConflicts writes the body of factor 4: the conflicts by sub-check.
func writeScopeConflicts(b *strings.Builder, sc evaluator.ScopeConflicts) {
	if sc.Conflicts != nil {
		fmt.Fprintf(b, "    %d conflicts\n", *sc.Conflicts)
		for _, k := range sortedKeys(sc.BySubcheck) {
			fmt.Fprintf(b, "      %-20s %d %s\n", k, sc.BySubcheck[k], strings.Join(sc.Records[k], " "))
		}
		if sc.Referrals != nil && len(*sc.Referrals) > 0 {
			fmt.Fprintf(b, "      referred by B5:      %s\n", strings.Join(*sc.Referrals, " "))
		}
	}
}

// writeDuplicates writes the body of factor 5: the excess and each duplicate cluster.
func writeDuplicates(b *strings.Builder, d evaluator.Duplicates) {
	if d.Excess != nil {
		fmt.Fprintf(b, "    excess %d · live-duplicate rate %s\n", *d.Excess, rateText(d.Rate))
		for _, cl := range *d.Clusters {
			fmt.Fprintf(b, "    #%d %s scope %s ×%d: %s\n", cl.Cluster, cl.Partition, scopeText(cl.Scope), cl.Count, strings.Join(cl.Members, " "))
		}
	}
}

// writeReportCoverage writes the report's coverage block; clustersReason says why the cluster
// counts are not assessable when they are not.
func writeReportCoverage(b *strings.Builder, cv evaluator.Coverage, clustersReason string) {
	keys := strings.Join(cv.ScopeKeys, ", ")
	if keys == "" {
		keys = "none"
	}
	fmt.Fprintf(b, "\ncoverage: scope keys %s (%s)\n", keys, cv.ScopeKeysSource)
	if cv.MarkedShare != nil {
		fmt.Fprintf(b, "  marked share of live records %s (%d/%d)\n", rateText(cv.MarkedShare), cv.MarkedShare.Numerator, cv.MarkedShare.Denominator)
	}
	fmt.Fprintf(b, "  eligible %d · excluded templates %d · excluded source passages %d · not live %d\n",
		cv.Eligible, cv.ExcludedTemplates, cv.ExcludedSourcePass, cv.NotLive)
	fmt.Fprintf(b, "  split state %d · contested %d · dangling supersedes %d · session_id as run_id %d · non-string scope values %d\n",
		cv.SplitState, cv.Contested, cv.DanglingSupersedes, cv.SessionIDAsRunID, cv.NonStringScopeValues)
	fmt.Fprintf(b, "  manifest ignored %d\n", cv.ManifestIgnored)
	if cv.B5NotRun != nil && cv.TemplateLineage != nil && cv.M3DeclaredAbsent != nil {
		fmt.Fprintf(b, "  B5 not run %d · template lineage %d\n", *cv.B5NotRun, *cv.TemplateLineage)
		fmt.Fprintf(b, "  M3 declared but absent: global_scopes %d · global_content_keys %d · global_claim_ids %d\n",
			cv.M3DeclaredAbsent["global_scopes"], cv.M3DeclaredAbsent["global_content_keys"], cv.M3DeclaredAbsent["global_claim_ids"])
	} else {
		fmt.Fprintf(b, "  marked share, B5 not run, template lineage, M3 declared but absent: NOT ASSESSABLE (cross_scope_clusters is NOT ASSESSABLE: %s)\n", clustersReason)
	}
}

// scopeText prints a scope string as it is, or "(none)" for the unscoped "".
func scopeText(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func rateText(r *evaluator.Rate) string {
	if r == nil {
		return ""
	}
	if r.Reason != "" {
		return r.Value + " (" + r.Reason + ")"
	}
	return r.Value
}

func renderPrecheck(p *evaluator.PrecheckResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "PRE-CHECK %s %s · %s/%s (%s) · records %d · live %d\n\n", p.CriteriaID, p.CriteriaRevision, p.Family, p.Form, p.Variant, p.Records, p.Live)
	for _, f := range rules.Factors {
		st := p.Factors[f]
		cell := p.MatrixRow[f]
		fmt.Fprintf(&b, "%-22s %s", f, st.Status)
		if st.Reason != "" {
			fmt.Fprintf(&b, " — %s", st.Reason)
		}
		fmt.Fprintf(&b, "\n    matrix: %s — %s\n", cell.Status, cell.Note)
	}
	return b.String()
}

// renderExplanation is the terminal form of an explanation: the verdict line, the record rules
// and what held for each record, each cluster's facts and precedence, then the gates.
func renderExplanation(ex *evaluator.Explanation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", ex.Report.VerdictLine)
	writeRecordRules(&b, ex.Records)
	writeRecordsExplained(&b, ex.Records)
	writeClustersExplained(&b, ex.Clusters)
	writeGatesExplained(&b, ex.Gates)
	return b.String()
}

// writeRecordRules writes each record predicate once, by its published name and text; the
// records then say which held.
func writeRecordRules(b *strings.Builder, records []evaluator.RecordExplanation) {
	if len(records) == 0 {
		return
	}
	b.WriteString("\nrecord rules (criteria record:, by name):\n")
	legend := func(kind string, rv []evaluator.RuleValue) {
		for _, r := range rv {
			fmt.Fprintf(b, "  %-10s %-20s %s\n", kind, r.Rule, oneLine(r.Text))
		}
	}
	legend("not live if", records[0].Liveness)
	legend("predicate", records[0].Predicates)
	for _, r := range records {
		if len(r.Marks) > 0 {
			legend("mark", r.Marks)
			break
		}
	}
}

// writeRecordsExplained writes each record: live or why not, and the predicates and marks that
// hold.
func writeRecordsExplained(b *strings.Builder, records []evaluator.RecordExplanation) {
	b.WriteString("\nrecords:\n")
	for _, r := range records {
		live := "live"
		if !r.Live {
			live = "not live (" + wordList(held(r.Liveness)) + ")"
		}
		fmt.Fprintf(b, "  %s  scope %s  %s\n", r.ID, scopeText(r.Scope), live)
		fmt.Fprintf(b, "    predicates that hold: %s\n", wordList(held(r.Predicates)))
		for _, s := range r.Pointer {
			fmt.Fprintf(b, "    M4 pointer %s -> %s: %s\n", s.From, s.To, s.Outcome)
		}
		if len(r.Marks) > 0 {
			fmt.Fprintf(b, "    marks that hold: %s\n", wordList(held(r.Marks)))
		}
	}
}

// writeClustersExplained writes each cluster: its facts by meaning, then its decision precedence.
func writeClustersExplained(b *strings.Builder, clusters []evaluator.ClusterExplanation) {
	b.WriteString("\nclusters:\n")
	if len(clusters) == 0 {
		b.WriteString("  none: no content key's live scoped records form a cluster\n")
	}
	for _, c := range clusters {
		fmt.Fprintf(b, "  members %s\n", strings.Join(c.Members, " "))
		b.WriteString("    facts:\n")
		for _, f := range clusterFacts(&c.Facts) {
			fmt.Fprintf(b, "      %-5s %s (%s)\n", f.value, f.meaning, f.name)
		}
		if c.TemplateLineage {
			b.WriteString("    a template-lineage cluster (L-4): counted apart, not judged\n")
			continue
		}
		fmt.Fprintf(b, "    B5 runs: %s (it runs only when every copy carries a source)\n", yesNo(c.B5Runs))
		b.WriteString("    decision precedence, in order (the first that holds decides):\n")
		for _, p := range c.Precedence {
			mark := " "
			if p.Rule == c.DecidedBy {
				mark = "→"
			}
			name := p.Rule
			if p.Name != "" {
				name += " " + p.Name
			}
			fmt.Fprintf(b, "    %s %-28s %-10s %s\n", mark, name, holdsText(p.Value), oneLine(p.Text))
		}
	}
}

// writeGatesExplained writes every factor's assessability gates in order.
func writeGatesExplained(b *strings.Builder, gates []evaluator.GateExplanation) {
	b.WriteString("\nassessability gates, per factor in order (the first that holds makes it NOT ASSESSABLE):\n")
	for _, g := range gates {
		fmt.Fprintf(b, "  %s: %s", g.Factor, g.Status.Status)
		if g.Status.Reason != "" {
			fmt.Fprintf(b, " — %s", g.Status.Reason)
		}
		b.WriteString("\n")
		if len(g.Gates) == 0 {
			b.WriteString("      no gate: always ASSESSABLE\n")
		}
		for _, r := range g.Gates {
			fmt.Fprintf(b, "      %-10s %q when %s\n", holdsText(r.Value), r.Rule, oneLine(r.Text))
		}
	}
}

// held lists the rules that held, by name.
func held(rv []evaluator.RuleValue) []string {
	var out []string
	for _, r := range rv {
		if r.Value {
			out = append(out, r.Rule)
		}
	}
	return out
}

func holdsText(v bool) string {
	if v {
		return "holds"
	}
	return "does not"
}

// oneLine folds an expression written over several YAML lines onto one.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func wordList(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// clusterFact is one cluster fact: its value, its meaning, and the name the criteria's
// expressions use for it.
type clusterFact struct{ name, meaning, value string }

// clusterFacts lists a cluster's facts by meaning (the meaning tags of rules.Cluster), with the
// name the criteria's expressions use (the cel tags).
func clusterFacts(c *rules.Cluster) []clusterFact {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	out := make([]clusterFact, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Tag.Get("cel")
		if name == "" {
			continue
		}
		f := v.Field(i)
		var val string
		switch f.Kind() {
		case reflect.Bool:
			val = yesNo(f.Bool())
		case reflect.Int64, reflect.Int:
			val = strconv.FormatInt(f.Int(), 10)
		default:
			continue
		}
		out = append(out, clusterFact{name: "cluster." + name, meaning: t.Field(i).Tag.Get("meaning"), value: val})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
