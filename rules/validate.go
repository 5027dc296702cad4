package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// RefusalCodes are the refusal rule ids the validator implements. criteria.yaml orders them
// it may not add or drop one, since each needs its mechanics.
var RefusalCodes = []string{
	"export_required", "family_required", "family_unknown", "form_invalid", "records_required",
	"records_empty", "record_count_cap", "record_not_object", "record_id_required",
	"record_id_duplicate", "content_text_required", "content_hash_required", "manifest_invalid",
	"declared_scope_keys_invalid", "variant_unknown",
}

// Classes are the cluster classifications a precedence rule may yield.
var Classes = []string{"marked_shared", "undeclared", "ambiguous"}

var matrixStatuses = []string{"ASSESSABLE", "CONDITIONAL", "NOT ASSESSABLE"}

var verdictFields = []string{"{records}", "{live}", "{unscoped}", "{undeclared}", "{conflicts}", "{duplicates}", "{check_end}"}

// problemAt reports a problem at the position of a dotted YAML path of the criteria file.
type problemAt func(path, format string, args ...any)

// problemAt parses the source once more as a node tree, for the positions of the problems.
func (c *compiler) problemAt() problemAt {
	var root yaml.Node
	_ = yaml.Unmarshal(c.src, &root)
	return func(path, format string, args ...any) {
		l, col := nodeAt(&root, path)
		c.probs.add(l, col, path, format, args...)
	}
}

// required is a member a criteria file must not leave empty, by its path.
type required struct{ path, v string }

// checkRequired reports each empty member of fields.
func checkRequired(bad problemAt, fields []required) {
	for _, f := range fields {
		if f.v == "" {
			bad(f.path, "%s is required", f.path)
		}
	}
}

// criteriaCheck is one independent check of a memory-export criteria file.
type criteriaCheck func(crit *Criteria, bad problemAt)

// criteriaChecks are what the type system of the YAML decoder cannot check: closed sets,
// references between sections, and the slots the evaluator fills. Each reports every problem it
// finds; they run in this order.
var criteriaChecks = []criteriaCheck{
	checkHeader, checkRefusals, checkCoverageFacts, checkFamilies, checkForms, checkMatrix,
	checkRuleIDs, checkClasses, checkPrecedence, checkGates, checkRecordRules,
}

// validate runs criteriaChecks over the decoded file.
func (c *compiler) validate() {
	bad := c.problemAt()
	for _, check := range criteriaChecks {
		check(c.c, bad)
	}
}

// checkHeader checks the schema, the required members, the caps, the price and the verdict
// template.
func checkHeader(crit *Criteria, bad problemAt) {
	if crit.Schema != SchemaID {
		bad("schema", "schema must be %q", SchemaID)
	}
	checkRequired(bad, []required{
		{"criteria_id", crit.CriteriaID}, {"criteria_revision", crit.CriteriaRevision}, {"service", crit.Service},
		{"words.assessable", crit.Words.Assessable}, {"words.not_assessable", crit.Words.NotAssessable},
		{"words.no_live_records", crit.Words.NoLiveRecords}, {"global_scope_value", crit.GlobalScopeValue},
		{"texts.undeclared_label", crit.Texts.UndeclaredLabel}, {"texts.scope_text", crit.Texts.ScopeText},
		{"texts.honesty_line", crit.Texts.HonestyLine},
	})
	if m := crit.Clusters.M4Depth; m != "" && m != M4DepthMembers && m != M4DepthLiveScoped {
		bad("clusters.m4_depth", "m4_depth must be %q or %q", M4DepthMembers, M4DepthLiveScoped)
	}
	if crit.Caps.BodyBytes <= 0 || crit.Caps.RecordsPerAudit <= 0 || crit.Caps.JSONDepth <= 0 || crit.Caps.RuleCostEstimate == 0 || crit.Caps.RuleCostRuntime == 0 {
		bad("caps", "caps must all be positive")
	}
	if crit.Price.USDCUnitsPerCall <= 0 {
		bad("price.usdc_units_per_call", "price must be positive")
	}
	for _, f := range verdictFields {
		if !strings.Contains(crit.Words.Verdict, f) {
			bad("words.verdict", "verdict template lacks %s", f)
		}
	}
}

// checkRefusals: exactly the implemented codes, each once, in the author's order.
func checkRefusals(crit *Criteria, bad problemAt) {
	seen := map[string]bool{}
	for i, r := range crit.Refusals {
		p := fmt.Sprintf("refusals[%d]", i)
		switch {
		case !contains(RefusalCodes, r):
			bad(p, "unknown refusal code %q", r)
		case seen[r]:
			bad(p, "refusal code %q listed twice", r)
		}
		seen[r] = true
	}
	for _, r := range RefusalCodes {
		if !seen[r] {
			bad("refusals", "refusal code %q is missing", r)
		}
	}
}

// checkCoverageFacts checks the free-text limits and the coverage members left out with a factor.
func checkCoverageFacts(crit *Criteria, bad problemAt) {
	if ft := crit.FreeTextScopeValue; ft != nil && (ft.MaxBytes <= 0 || ft.MaxBytesWithWhitespace <= 0) {
		bad("free_text_scope_value", "free_text_scope_value needs positive max_bytes and max_bytes_with_whitespace")
	}
	for _, f := range sortedKeys(crit.CoverageFacts) {
		if !contains(Factors, f) {
			bad("coverage_facts."+f, "unknown factor %q", f)
		}
		for i, m := range crit.CoverageFacts[f] {
			if !contains(CoverageFactMembers, m) {
				bad(fmt.Sprintf("coverage_facts.%s[%d]", f, i), "unknown coverage member %q (the mechanics can leave out: %s)", m, strings.Join(CoverageFactMembers, ", "))
			}
		}
	}
}

// checkFamilies checks each family's variants, scope mechanics, stand-ins and matrix row.
func checkFamilies(crit *Criteria, bad problemAt) {
	for _, name := range sortedKeys(crit.Families) {
		f := crit.Families[name]
		p := "families." + name
		if !contains(f.Variants, f.DefaultVariant) {
			bad(p+".default_variant", "default variant %q is not one of the family's variants", f.DefaultVariant)
		}
		switch f.Scope {
		case "keys":
		case "attached_to":
			if len(f.DefaultScopeKeys) > 0 {
				bad(p+".default_scope_keys", "a family scoped by attached_to declares no keys")
			}
		default:
			bad(p+".scope", "scope must be keys or attached_to")
		}
		for k, v := range f.StandIns {
			if !contains(f.DefaultScopeKeys, k) {
				bad(p+".stand_ins", "stand-in for %q, which is not a default key", k)
			}
			if v == "" {
				bad(p+".stand_ins", "empty stand-in key")
			}
		}
		if _, ok := crit.Matrix[name]; !ok {
			bad("matrix", "no matrix row for family %q", name)
		}
	}
}

// checkForms checks each form's content field and refusal.
func checkForms(crit *Criteria, bad problemAt) {
	for _, name := range sortedKeys(crit.Forms) {
		f := crit.Forms[name]
		if f.ContentField == "" {
			bad("forms."+name+".content_field", "content_field is required")
		}
		if !contains(crit.Refusals, f.Refusal) {
			bad("forms."+name+".refusal", "refusal %q is not a refusal code", f.Refusal)
		}
	}
}

// checkMatrix checks that the matrix names known families and forms and gives every factor a
// published status.
func checkMatrix(crit *Criteria, bad problemAt) {
	for fam, forms := range crit.Matrix {
		if _, ok := crit.Families[fam]; !ok {
			bad("matrix."+fam, "matrix row for unknown family %q", fam)
		}
		for form, row := range forms {
			if _, ok := crit.Forms[form]; !ok {
				bad("matrix."+fam+"."+form, "matrix row for unknown form %q", form)
			}
			for _, f := range Factors {
				cell, ok := row[f]
				if !ok {
					bad("matrix."+fam+"."+form, "factor %s is missing", f)
					continue
				}
				if !contains(matrixStatuses, cell.Status) {
					bad("matrix."+fam+"."+form+"."+f, "status %q is not one of %s", cell.Status, strings.Join(matrixStatuses, ", "))
				}
			}
		}
	}
}

// checkRuleIDs checks that the liveness and conflict ids are unique, and the conflicts few enough
// for the evaluator's bit set.
func checkRuleIDs(crit *Criteria, bad problemAt) {
	ids := map[string]bool{}
	for i, l := range crit.Record.Liveness {
		if l.ID == "" || ids[l.ID] {
			bad(fmt.Sprintf("record.liveness[%d].id", i), "liveness ids must be non-empty and unique")
		}
		ids[l.ID] = true
	}
	ids = map[string]bool{}
	if len(crit.Conflicts) > 32 {
		bad("conflicts", "at most 32 conflict sub-checks")
	}
	for i, r := range crit.Conflicts {
		if r.ID == "" || ids[r.ID] {
			bad(fmt.Sprintf("conflicts[%d].id", i), "conflict ids must be non-empty and unique")
		}
		ids[r.ID] = true
	}
}

// checkClasses checks that every cluster class, and only those, has a statement.
func checkClasses(crit *Criteria, bad problemAt) {
	for _, cl := range Classes {
		if crit.Clusters.Classes[cl].Statement == "" {
			bad("clusters.classes", "class %q needs a statement", cl)
		}
	}
	for cl := range crit.Clusters.Classes {
		if !contains(Classes, cl) {
			bad("clusters.classes."+cl, "unknown class %q", cl)
		}
	}
	if crit.Clusters.Classes["undeclared"].Statement != crit.Texts.UndeclaredLabel {
		bad("clusters.classes.undeclared.statement", "the undeclared statement must be the published undeclared_label exactly")
	}
}

// checkPrecedence checks the cluster decision precedence: its length, ids, classes and reasons.
func checkPrecedence(crit *Criteria, bad problemAt) {
	ids := map[string]bool{}
	if len(crit.Clusters.Precedence) == 0 || len(crit.Clusters.Precedence) > 60 {
		bad("clusters.precedence", "the precedence needs between 1 and 60 rules")
	}
	for i, r := range crit.Clusters.Precedence {
		p := fmt.Sprintf("clusters.precedence[%d]", i)
		if r.ID == "" || ids[r.ID] {
			bad(p+".id", "precedence ids must be non-empty and unique")
		}
		ids[r.ID] = true
		if !contains(Classes, r.Class) {
			bad(p+".class", "class %q is not one of %s", r.Class, strings.Join(Classes, ", "))
		}
		if (r.Class == "ambiguous") != (r.Reason != "") {
			bad(p, "an ambiguous rule needs a reason, and only an ambiguous rule has one")
		}
	}
}

// checkGates checks that every factor, and only a factor, has a gates entry, each gate with its
// reason.
func checkGates(crit *Criteria, bad problemAt) {
	for f := range crit.Gates {
		if factorIndex(f) < 0 {
			bad("gates."+f, "unknown factor %q", f)
		}
	}
	for _, f := range Factors {
		if _, ok := crit.Gates[f]; !ok {
			bad("gates", "factor %s has no gates entry (write [] for none)", f)
		}
		for i, g := range crit.Gates[f] {
			if g.Reason == "" {
				bad(fmt.Sprintf("gates.%s[%d].reason", f, i), "a gate needs a reason")
			}
		}
	}
}

// checkRecordRules checks that the per-record predicates and marks are there.
func checkRecordRules(crit *Criteria, bad problemAt) {
	if crit.Record.Predicates.Kind == 0 {
		bad("record", "record.predicates is required")
	}
	if crit.Record.Marks.Kind == 0 {
		bad("record", "record.marks is required")
	}
}

// nodeAt finds the position of a dotted path like "clusters.precedence[3].when" in a YAML tree.
func nodeAt(root *yaml.Node, path string) (int, int) {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line, col := n.Line, n.Column
	for _, part := range strings.Split(path, ".") {
		name, idx := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			name = part[:i]
			idx, _ = strconv.Atoi(part[i+1 : len(part)-1])
		}
		next := (*yaml.Node)(nil)
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == name {
					line, col = n.Content[i].Line, n.Content[i].Column
					next = n.Content[i+1]
				}
			}
		}
		if next == nil {
			return line, col
		}
		n = next
		if idx >= 0 {
			if n.Kind != yaml.SequenceNode || idx >= len(n.Content) {
				return line, col
			}
			n = n.Content[idx]
			line, col = n.Line, n.Column
		}
	}
	return line, col
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
