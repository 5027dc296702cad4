package rules_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// TestKillLineTripwires: the served criteria carry the kill line's numbers exactly as
// texts.kill_line words them (30-day windows, 5% of paid calls, 10x paid use), and a block with
// a number that is not positive does not load.
func TestKillLineTripwires(t *testing.T) {
	src := criteriaSource(t)
	ps, err := rules.Load("criteria.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, ok := ps.KillLine()
	if !ok || k != (rules.KillLineTripwires{WindowDays: 30, RefundsOverPercentOfPaid: 5, FreeOverTimesPaid: 10}) {
		t.Fatalf("KillLine() = %+v, %v; want 30 days, 5%%, 10x", k, ok)
	}
	words := ps.Criteria().Texts.KillLine
	for _, w := range []string{"refunds >5% of paid calls in any 30-day window", "free use >10x paid use", "Day-0 = first outside paid settle"} {
		if !strings.Contains(words, w) {
			t.Errorf("texts.kill_line no longer says %q: the numbers above follow its words", w)
		}
	}
	bad := apply(t, src, edit{"  refunds_over_percent_of_paid: 5", "  refunds_over_percent_of_paid: 0"})
	if _, err := rules.Load("criteria.yaml", []byte(bad)); !errors.Is(err, rules.ErrCompile) ||
		!strings.Contains(err.Error(), "kill_line_tripwires.refunds_over_percent_of_paid must be a positive whole number") {
		t.Fatalf("a zero refund threshold loaded: %v", err)
	}
}
