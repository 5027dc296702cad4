// Package rules compiles a criteria file into CEL programs: it reads and validates the
// document (criteria.yaml and the rule sets under criteria/), type-checks every expression
// against the typed facts, and serves the compiled program set the evaluator runs. It never
// imports the evaluator.
package rules
