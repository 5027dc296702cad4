package evaluator

// WholeTreeOnly turns the whole-store check's fast read of a batch off (on) or back on, so that a
// test can hold the check's answer with it to the answer without it.
func WholeTreeOnly(on bool) { wholeTreeOnly = on }
