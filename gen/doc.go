// Package gen is the independent oracle of memory-scope-hygiene/v1.
//
// It is a second, independent reading of the published criteria text
// (gen/criteria-v1.json, a verbatim copy), the project readings R-1..R-31 and the
// output contract (docs/contract.md, R-32..R-48). It never imports the engine
// (rules/, evaluator/) nor any CEL package. It computes the expected outcome of one
// request body (Expect), generates random valid exports for differential testing
// (RandomExport), and builds, writes, reads and pins the corpus (Corpus,
// WriteCorpus, ReadCorpus, Pin, VerifyPin).
//
// Errors carry static strings only; no part of an export is ever interpolated.
package gen
