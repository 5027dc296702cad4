package rules

import (
	"fmt"
	"strings"
)

// mutLogCheck is one independent check of a mutation-log criteria file.
type mutLogCheck func(crit *MutLogCriteria, bad problemAt)

// mutLogChecks are what the strict decoder cannot check of a mutation-log criteria file: closed
// sets, the slots the mechanics fill, and the words they print. They run in this order.
var mutLogChecks = []mutLogCheck{
	checkMutLogHeader, checkMutLogTerms, checkMutLogRefusals, checkMutLogOps, checkMutLogCanonicalization,
	checkMutLogReplay, checkMutLogGates, checkMutLogDeclarations, checkMutLogDoesNotApply,
	checkMutLogFactGates, checkMutLogVerdict,
}

func (c *compiler) validateMutLog(crit *MutLogCriteria) {
	bad := c.problemAt()
	for _, check := range mutLogChecks {
		check(crit, bad)
	}
}

// checkMutLogHeader checks the schema, the kind and the required members.
func checkMutLogHeader(crit *MutLogCriteria, bad problemAt) {
	if crit.Schema != SchemaID {
		bad("schema", "schema must be %q", SchemaID)
	}
	if crit.Kind != KindMutationLog {
		bad("kind", "kind must be %q", KindMutationLog)
	}
	checkRequired(bad, []required{
		{"criteria_id", crit.CriteriaID}, {"criteria_revision", crit.CriteriaRevision}, {"service", crit.Service},
		{"format", crit.Format}, {"corpus.id", crit.Corpus.ID}, {"corpus.dir", crit.Corpus.Dir},
		{"words.assessable", crit.Words.Assessable}, {"words.not_assessable", crit.Words.NotAssessable},
		{"words.verdict", crit.Words.Verdict}, {"texts.scope_text", crit.Texts["scope_text"]},
		{"texts.honesty_line", crit.Texts["honesty_line"]}, {"replay.initial", crit.Replay.Initial},
		{"replay.live", crit.Replay.Live},
	})
}

// checkMutLogTerms checks the caps, the price and the free tier.
func checkMutLogTerms(crit *MutLogCriteria, bad problemAt) {
	cp := crit.Caps
	if cp.BodyBytes <= 0 || cp.EventsPerAudit <= 0 || cp.SnapshotEntries <= 0 || cp.ScopeDimensions <= 0 || cp.JSONDepth <= 0 || cp.RuleCostEstimate == 0 || cp.RuleCostRuntime == 0 {
		bad("caps", "caps must all be positive")
	}
	if crit.Price.USDCUnitsPerCall < 0 {
		bad("price.usdc_units_per_call", "price must not be negative")
	}
	if crit.Price.USDCUnitsPerCall == 0 && crit.Price.Status != "UNPRICED" {
		bad("price.status", "an unpriced rule set (usdc_units_per_call 0) must say status UNPRICED")
	}
	if crit.FreeTier.PerDay <= 0 || crit.FreeTier.MinIntervalMS < 0 {
		bad("free_tier", "free_tier.per_day must be positive and min_interval_ms not negative")
	}
}

// checkMutLogRefusals: every implemented refusal once, none other, in the author's order.
func checkMutLogRefusals(crit *MutLogCriteria, bad problemAt) {
	seen := map[string]bool{}
	for i, r := range crit.Refusals {
		if !contains(MutLogRefusalCodes, r) {
			bad(fmt.Sprintf("refusals[%d]", i), "unknown refusal %q (the mechanics implement: %s)", r, strings.Join(MutLogRefusalCodes, ", "))
		}
		if seen[r] {
			bad(fmt.Sprintf("refusals[%d]", i), "refusal %q is listed twice", r)
		}
		seen[r] = true
	}
	for _, r := range MutLogRefusalCodes {
		if !seen[r] {
			bad("refusals", "refusal %q is missing: every implemented refusal must be placed in the order", r)
		}
	}
}

// checkMutLogOps checks that the event operations are exactly the mechanics', each reading its
// target.
func checkMutLogOps(crit *MutLogCriteria, bad problemAt) {
	for op, target := range MutLogOps {
		spec, ok := crit.OpsEvents[op]
		if !ok {
			bad("ops_events", "operation %q is missing", op)
			continue
		}
		if spec.Target != target {
			bad("ops_events."+op+".target", "operation %q reads its target from %q", op, target)
		}
	}
	for _, op := range sortedKeys(crit.OpsEvents) {
		if _, ok := MutLogOps[op]; !ok {
			bad("ops_events."+op, "unknown operation %q", op)
		}
	}
}

// checkMutLogCanonicalization checks that every canonicalization step is implemented.
func checkMutLogCanonicalization(crit *MutLogCriteria, bad problemAt) {
	for i, s := range crit.Canonicalization {
		if !contains(CanonicalSteps, s) {
			bad(fmt.Sprintf("canonicalization[%d]", i), "unknown step %q (the mechanics implement: %s)", s, strings.Join(CanonicalSteps, ", "))
		}
	}
}

// checkMutLogReplay checks the replay transition table.
func checkMutLogReplay(crit *MutLogCriteria, bad problemAt) {
	if len(crit.Replay.Modes) == 0 {
		bad("replay.modes", "at least one forget mode is required")
	}
	for _, m := range sortedKeys(crit.Replay.Modes) {
		for _, op := range sortedKeys(crit.Replay.Modes[m]) {
			if op == "reassign" || MutLogOps[op] == "" {
				bad("replay.modes."+m+"."+op, "operation %q moves no slot (write, forget, reopen)", op)
			}
			for _, from := range sortedKeys(crit.Replay.Modes[m][op]) {
				if from == "" || crit.Replay.Modes[m][op][from] == "" {
					bad("replay.modes."+m+"."+op, "a transition needs a from and a to status")
				}
			}
		}
	}
}

// gatesCarryNoNumber reports each gate of a list that keeps counts or has no reason: path is the
// list's path, what the thing the gate makes NOT ASSESSABLE.
func gatesCarryNoNumber(bad problemAt, path, what string, gates []Gate) {
	for i, g := range gates {
		if g.KeepCounts {
			bad(fmt.Sprintf("%s[%d].keep_counts", path, i), "a NOT ASSESSABLE %s carries no number", what)
		}
		if g.Reason == "" {
			bad(fmt.Sprintf("%s[%d].reason", path, i), "a gate needs its reason")
		}
	}
}

// gatesOf checks a map of gate lists: each key is one of known (unknown is the problem's format,
// given the key and known), and each gate carries no number.
func gatesOf(bad problemAt, section string, gates map[string][]Gate, known []string, unknown, what string) {
	for _, f := range sortedKeys(gates) {
		if !contains(known, f) {
			bad(section+"."+f, unknown, f, strings.Join(known, ", "))
		}
		gatesCarryNoNumber(bad, section+"."+f, what, gates[f])
	}
}

// checkMutLogGates checks that gates name known factors and carry no number.
func checkMutLogGates(crit *MutLogCriteria, bad problemAt) {
	gatesOf(bad, "gates", crit.Gates, MutLogFactors, "unknown factor %q (expected one of: %s)", "factor of this kind")
}

// checkMutLogDeclarations checks that each declaration sets a declarable fact by a member and a
// value.
func checkMutLogDeclarations(crit *MutLogCriteria, bad problemAt) {
	for _, f := range sortedKeys(crit.Declarations) {
		d := crit.Declarations[f]
		if !contains(MutLogDeclaredFacts, f) {
			bad("declarations."+f, "unknown fact %q (a declaration can set: %s)", f, strings.Join(MutLogDeclaredFacts, ", "))
		}
		if d.Member == "" || d.Value == "" {
			bad("declarations."+f, "a declaration needs its member and its value")
		}
	}
}

// checkMutLogDoesNotApply checks the does_not_apply gates and the verdict that prints them.
func checkMutLogDoesNotApply(crit *MutLogCriteria, bad problemAt) {
	gatesCarryNoNumber(bad, "does_not_apply", "factor of this kind", crit.DoesNotApply)
	if len(crit.DoesNotApply) > 0 {
		for _, fld := range []string{"{events}", "{forgets}", "{does_not_apply}", "{check_end}"} {
			if !strings.Contains(crit.Words.VerdictDoesNotApply, fld) {
				bad("words.verdict_does_not_apply", "with does_not_apply gates the does-not-apply verdict must carry %s", fld)
			}
		}
	}
}

// checkMutLogFactGates checks that fact gates name gated facts and carry no number.
func checkMutLogFactGates(crit *MutLogCriteria, bad problemAt) {
	gatesOf(bad, "fact_gates", crit.FactGates, MutLogGatedFacts, "unknown fact %q (the mechanics can gate: %s)", "fact")
}

// checkMutLogVerdict checks that the verdict template carries every figure and ends with the
// check-end time.
func checkMutLogVerdict(crit *MutLogCriteria, bad problemAt) {
	for _, fld := range mutLogVerdictFields {
		if !strings.Contains(crit.Words.Verdict, fld) {
			bad("words.verdict", "the verdict must carry %s", fld)
		}
	}
	if crit.Words.Verdict != "" && !strings.HasSuffix(crit.Words.Verdict, " — {check_end}") {
		bad("words.verdict", "the verdict must end with \" — {check_end}\"")
	}
}
