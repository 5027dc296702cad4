// Package scopehygiene holds the project's embedded data: the criteria file and the corpus, so that
// every binary carries the exact bytes it was tested with.
package scopehygiene

import "embed"

// CriteriaYAML is the serving criteria file, byte for byte (its digest is the criteria digest).
//
//go:embed criteria.yaml
var CriteriaYAML []byte

// Corpus is the pinned corpus: corpus/index.json and corpus/cases/*.json.
//
//go:embed corpus
var Corpus embed.FS

// CriteriaDir holds the further criteria files served beside criteria.yaml, one rule set each
// (criteria/*.yaml); each one's `kind` selects its evaluator mechanics and its corpus.dir names its
// pinned corpus inside Corpus.
//
//go:embed criteria/*.yaml
var CriteriaDir embed.FS
