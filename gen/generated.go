package gen

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
)

// generatedCount is the number of seeded generated corpus cases.
const generatedCount = 220

// generatedCases returns the seeded generated cases (provenance "synthetic
// generated"): RandomExport with seeds 1..generatedCount, expected from Expect.
func generatedCases() ([]Case, error) {
	var out []Case
	for seed := 1; seed <= generatedCount; seed++ {
		body := RandomExport(rand.New(rand.NewSource(int64(seed))))
		c, err := makeCase("", ProvenanceGenerated, nil, body, false)
		if err != nil {
			return nil, err
		}
		main, rules := summarizeRules(c.Expected)
		c.Name = fmt.Sprintf("%s-gen-%03d", main, seed)
		c.Rules = rules
		out = append(out, c)
	}
	return out, nil
}

// makeCase builds a case from request bytes: as `body` (the bytes must be a JSON
// object that survives an encoding/json round trip) or as `body_base64`.
func makeCase(name, provenance string, rules []string, raw []byte, asBase64 bool) (Case, error) {
	c := Case{Name: name, Provenance: provenance, Rules: rules}
	if asBase64 {
		c.BodyBase64 = base64Std(raw)
	} else {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return Case{}, errCaseBody
		}
		b, err := json.Marshal(v)
		if err != nil {
			return Case{}, errCaseBody
		}
		c.Body = b
	}
	submitted, err := c.SubmittedBytes()
	if err != nil {
		return Case{}, err
	}
	exp, err := Expect(submitted)
	if err != nil {
		return Case{}, err
	}
	c.Expected = exp
	if c.Rules == nil {
		c.Rules = []string{}
	}
	return c, nil
}

// precedenceOrder lists cluster decisions from the strongest to the weakest.
var precedenceOrder = []string{"N4", "N3", "N2", "N5", "B5", "N1", "B1", "B2"}

// summarizeRules names the rules a generated case exercises, from its outcome.
func summarizeRules(e Expected) (main string, rules []string) {
	if e.Refusal != nil {
		return e.Refusal.Rule, []string{e.Refusal.Rule}
	}
	a := e.Audit
	set := map[string]bool{}
	if cl := a.Factors.CrossScopeClusters.Clusters; cl != nil {
		for _, c := range *cl {
			set[c.DecidedBy] = true
		}
	}
	for _, r := range precedenceOrder {
		if set[r] && main == "" {
			main = r
		}
	}
	extra := map[string]bool{}
	if a.Factors.CrossScopeClusters.TemplateLineage != nil && *a.Factors.CrossScopeClusters.TemplateLineage > 0 {
		extra["L-4"] = true
	}
	if a.Factors.Duplicates.Excess > 0 {
		extra["duplicates"] = true
	}
	if a.Factors.ScopeConflicts.Conflicts != nil && *a.Factors.ScopeConflicts.Conflicts > 0 {
		extra["scope_conflicts"] = true
	}
	if a.Coverage.NotLive > 0 {
		extra["liveness"] = true
	}
	if a.Coverage.Contested > 0 {
		extra["R-17"] = true
	}
	if main == "" {
		switch {
		case extra["L-4"]:
			main = "L-4"
		case extra["scope_conflicts"]:
			main = "scope_conflicts"
		case extra["duplicates"]:
			main = "duplicates"
		default:
			main = "scope_presence"
		}
	}
	for r := range set {
		rules = append(rules, r)
	}
	for r := range extra {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	var ordered []string
	ordered = append(ordered, main)
	for _, r := range rules {
		if r != main {
			ordered = append(ordered, r)
		}
	}
	rules = append(ordered, "factor_rules", "marker_convention", "assessability_matrix")
	return main, rules
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
