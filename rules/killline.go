package rules

import "go.yaml.in/yaml/v3"

// KillLineTripwires are the kill line's two ledger tripwires as numbers (criteria.yaml
// kill_line_tripwires; texts.kill_line states them in words): refunds above a percentage of paid
// calls in any window of WindowDays days, and free use above a multiple of paid use. Day-0, from
// which both are counted, is the first outside paid settle; it is recorded by the store.
type KillLineTripwires struct {
	// WindowDays is the length of every refund window, in days.
	WindowDays int `yaml:"window_days" json:"window_days"`
	// RefundsOverPercentOfPaid trips the refund wire when refunds exceed this percentage of the
	// window's paid calls.
	RefundsOverPercentOfPaid int64 `yaml:"refunds_over_percent_of_paid" json:"refunds_over_percent_of_paid"`
	// FreeOverTimesPaid trips the free-use wire when free calls exceed this multiple of paid calls.
	FreeOverTimesPaid int64 `yaml:"free_over_times_paid" json:"free_over_times_paid"`
}

// KillLine returns the criteria's kill-line tripwires; ok is false when the criteria carry none
// (a rule set served beside the primary one).
func (ps *ProgramSet) KillLine() (k KillLineTripwires, ok bool) {
	if ps.c.KillLineTripwires == nil {
		return KillLineTripwires{}, false
	}
	return *ps.c.KillLineTripwires, true
}

// validateKillLine refuses a kill_line_tripwires block with a number that is not positive (a
// zero window or threshold would trip on nothing, or never).
func (c *compiler) validateKillLine() {
	k := c.c.KillLineTripwires
	if k == nil {
		return
	}
	var root yaml.Node
	_ = yaml.Unmarshal(c.src, &root)
	for _, f := range []struct {
		name string
		v    int64
	}{{"window_days", int64(k.WindowDays)}, {"refunds_over_percent_of_paid", k.RefundsOverPercentOfPaid}, {"free_over_times_paid", k.FreeOverTimesPaid}} {
		if f.v <= 0 {
			path := "kill_line_tripwires." + f.name
			l, col := nodeAt(&root, path)
			c.probs.add(l, col, path, "%s must be a positive whole number", path)
		}
	}
}
