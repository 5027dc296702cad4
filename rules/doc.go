// Package rules compiles a criteria file into the CEL programs every decision of an audit is made
// by: it strictly decodes and validates the file (reporting each problem at its line and column),
// compiles and cost-checks its expressions, and evaluates them over the typed facts the
// evaluators hand it. It holds no audit mechanics; those are package evaluator's and
// evaluator/mutlog's.
package rules
