package evaluator

// WholeTreeOnly turns the whole-store check's fast read of a batch off (on) or back on, so that a
// test can hold the check's answer with it to the answer without it.
func WholeTreeOnly(on bool) { wholeTreeOnly = on }

// WholeDirectBytes sets the slice of the splitter's window one direct read reads at most (n > 0;
// whole_direct.go) and returns what restores it, so that a test can make records cross its end.
func WholeDirectBytes(n int) (restore func()) {
	old := directBytes
	directBytes = n
	return func() { directBytes = old }
}
