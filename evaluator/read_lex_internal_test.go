package evaluator

import (
	"bytes"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// TreeOnly is opts with the read-once path turned off: the export is decoded into a tree and
// walked, as every export was before read_lex.go.
func TreeOnly(opts Options) Options {
	opts.treeOnly = true
	return opts
}

// LexReads reports whether the read-once path reads body (rather than leave it to the tree path).
func LexReads(ps *rules.ProgramSet, body []byte) bool {
	b := getBuffers()
	defer b.release()
	x, _ := lexExport(ps, bytes.Clone(body), b, false)
	return x != nil
}
