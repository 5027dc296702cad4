package evaluator_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	scopehygiene "github.com/scopehygiene/scope-hygiene"
	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

func editedCriteria(t *testing.T, old, new string) *rules.ProgramSet {
	t.Helper()
	src := string(scopehygiene.CriteriaYAML)
	if !strings.Contains(src, old) {
		t.Fatalf("criteria.yaml no longer contains %q", old)
	}
	ps, err := rules.Load("criteria.yaml", []byte(strings.Replace(src, old, new, 1)))
	if err != nil {
		t.Fatalf("edited criteria must compile: %v", err)
	}
	return ps
}

// TestRuleFailureIsAnErrorNeverNotMatched: a rule that fails at run time stops the audit with a
// RuleError naming the rule and its place in the criteria file; no verdict is built on it.
func TestRuleFailureIsAnErrorNeverNotMatched(t *testing.T) {
	body := []byte(`{"family":"mem0","form":"full_text","records":[{"id":"a","content_text":"SECRET-CANARY","user_id":"u","replaced_by":"b"}]}`)
	for _, tc := range []struct {
		name, old, new, rule string
	}{
		// Integer division by zero is a CEL run-time error.
		{"liveness/replaced_by-division-by-zero", "when: record.replaced_by.set", "when: record.replaced_by.set && 1 / (record.replaced_by.items - 1) == 0", "replaced_by"},
		{"predicates/m1-division-by-zero", `m1: >-
      (record.shared.kind == "bool" && record.shared.bool)`, `m1: >-
      (1 / (record.key_count - 1) == 0) || (record.shared.kind == "bool" && record.shared.bool)`, "m1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := editedCriteria(t, tc.old, tc.new)
			rep, ref, err := evaluator.Audit(ps, body, time.Now())
			if rep != nil || ref != nil || !errors.Is(err, rules.ErrRuleFailed) {
				t.Fatalf("Audit() = %v, %v, %v; want only a rule failure", rep, ref, err)
			}
			var re *rules.RuleError
			if !errors.As(err, &re) || re.Rule != tc.rule || re.Line == 0 || re.Column == 0 {
				t.Fatalf("RuleError = %+v, want rule %s with a position", re, tc.rule)
			}
			if strings.Contains(err.Error(), "SECRET-CANARY") {
				t.Fatalf("the rule error quotes the export: %v", err)
			}
		})
	}
}

// TestRuntimeCostLimit: a program whose static bound exceeds the runtime limit is tracked, and an
// evaluation over the limit is a rule failure.
func TestRuntimeCostLimit(t *testing.T) {
	ps := editedCriteria(t, "rule_cost_runtime: 10000000", "rule_cost_runtime: 50")
	var tracked []string
	for _, p := range ps.Programs() {
		if p.Tracked {
			tracked = append(tracked, p.ID)
		}
	}
	if len(tracked) == 0 {
		t.Fatal("no program is tracked although the runtime limit is below every static bound")
	}
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = `"g"` // equal to group_id: exists must visit every entry
	}
	body := []byte(`{"family":"zep_graphiti","form":"full_text","records":[{"id":"a","content_text":"t","group_id":"g","episode_group_ids":[` + strings.Join(ids, ",") + `]}]}`)
	_, _, err := evaluator.Audit(ps, body, time.Now())
	if !errors.Is(err, rules.ErrRuleFailed) {
		t.Fatalf("Audit() error = %v, want the cost limit to fail a rule", err)
	}
	// The shipped limit admits the same export.
	shipped, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	if _, ref, err := evaluator.Audit(shipped, body, time.Now()); err != nil || ref != nil {
		t.Fatalf("shipped criteria: %v %v", ref, err)
	}
}
