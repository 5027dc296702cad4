package session

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// factorFigures are the words of each factor's figures in the summary, with the report members
// they read in order.
var factorFigures = map[string]struct {
	format  string
	members []string
}{
	"scope_presence":       {"%d of %d eligible records scoped, %d distinct scopes", []string{"scoped", "eligible", "distinct_scopes"}},
	"unscoped_rate":        {"%d of %d eligible records unscoped", []string{"unscoped", "eligible"}},
	"cross_scope_clusters": {"%d candidate clusters: %d undeclared, %d marked shared, %d ambiguous", []string{"candidate", "undeclared", "marked_shared", "ambiguous"}},
	"scope_conflicts":      {"%d conflicts", []string{"conflicts"}},
	"duplicates":           {"%d excess duplicates among %d live records", []string{"excess", "live"}},
}

// factorOrder lists a result's factors in the order the criteria's factor_rules text numbers
// them ("(1) scope_presence: ...", "(5) reopens (terminal mode): ..."); a factor the text does not number goes last, by name. The
// order is the criteria's, not a ranking.
func factorOrder(factors map[string]map[string]json.RawMessage, rulesText string) []string {
	names := make([]string, 0, len(factors))
	for f := range factors {
		names = append(names, f)
	}
	at := func(f string) int {
		for _, after := range []string{":", " ("} { // "(5) reopens (terminal mode): ..."
			if i := strings.Index(rulesText, ") "+f+after); i >= 0 {
				return i
			}
		}
		return len(rulesText) + 1
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := at(names[i]), at(names[j]); a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	return names
}

// factorFigureWords renders an ASSESSABLE factor's counts ("" when the document does not carry them, as
// in a pre-check result). A factor without words of its own (the second rule set's) lists its
// counts, rates and seq lists by member name.
func factorFigureWords(factor string, m map[string]json.RawMessage) string {
	ff, ok := factorFigures[factor]
	if !ok {
		return memberWords(m)
	}
	args := make([]any, len(ff.members))
	for i, k := range ff.members {
		var n int64
		if json.Unmarshal(m[k], &n) != nil {
			return ""
		}
		args[i] = n
	}
	return ", " + fmt.Sprintf(ff.format, args...)
}

// memberWords lists a factor's numbers, rates and lists of numbers by member name, in name order.
func memberWords(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		var n int64
		var rate struct {
			Numerator, Denominator *int64
			Value                  string
		}
		var list []int64
		switch {
		case json.Unmarshal(m[k], &n) == nil:
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		case json.Unmarshal(m[k], &rate) == nil && rate.Numerator != nil && rate.Denominator != nil && rate.Value != "":
			parts = append(parts, fmt.Sprintf("%s %s (%d of %d)", k, rate.Value, *rate.Numerator, *rate.Denominator))
		case json.Unmarshal(m[k], &list) == nil && len(list) > 0:
			s := make([]string, len(list))
			for i, v := range list {
				s[i] = fmt.Sprint(v)
			}
			parts = append(parts, k+" "+strings.Join(s, " "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// WriteText writes, for people, what was verified and paid and each factor's status, one by one.
// A NOT ASSESSABLE factor is written with its reason, never as a number. It writes nothing for a
// session that ended in an error.
func (o *Outcome) WriteText(w io.Writer) {
	s := o.Summary
	if o.Err != nil || s.Verified == nil {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "verified\tOK, %s signed by %s (criteria revision %s)\n", s.Verified.Kind, s.Verified.KeyID, s.Verified.CriteriaRevision)
	fmt.Fprintf(tw, "saved\t%s (key: %s)\n", s.Saved, s.Criteria)
	if p := s.Payment; p != nil {
		fmt.Fprintf(tw, "paid\t%d units of %s on %s\n", p.Units, p.Asset, p.Network)
		fmt.Fprintf(tw, "transaction\t%s (payer %s)\n", p.Transaction, p.Payer)
	}
	if s.Verdict != "" {
		fmt.Fprintf(tw, "verdict\t%s\n", s.Verdict)
	}
	writeFactors(tw, o.doc, o.factorRules)
	if fo := s.FailOn; fo != nil {
		switch {
		case fo.Status == "NOT ASSESSABLE":
			fmt.Fprintf(tw, "fail-on\t%s: the factor is NOT ASSESSABLE, no figure to compare\n", fo.Gate)
		case fo.Crossed:
			fmt.Fprintf(tw, "fail-on\t%s: figure %s, crossed\n", fo.Gate, fo.Value)
		default:
			fmt.Fprintf(tw, "fail-on\t%s: figure %s, not crossed\n", fo.Gate, fo.Value)
		}
	}
	tw.Flush()
}

// writeFactors writes one row per factor of doc, in the order rulesText numbers them.
func writeFactors(w io.Writer, doc []byte, rulesText string) {
	var rep struct {
		Factors map[string]map[string]json.RawMessage `json:"factors"`
	}
	if json.Unmarshal(doc, &rep) != nil || rep.Factors == nil {
		return
	}
	for _, f := range factorOrder(rep.Factors, rulesText) {
		m := rep.Factors[f]
		var status, reason string
		json.Unmarshal(m["status"], &status)
		json.Unmarshal(m["reason"], &reason)
		if status == "ASSESSABLE" {
			fmt.Fprintf(w, "%s\t%s%s\n", f, status, factorFigureWords(f, m))
		} else {
			fmt.Fprintf(w, "%s\t%s: %s\n", f, status, reason)
		}
	}
}
