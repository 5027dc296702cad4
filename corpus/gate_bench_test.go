package corpus_test

import (
	"testing"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// BenchmarkGate is the serve-time check: load the embedded corpus, re-run every case, verify the pin.
func BenchmarkGate(b *testing.B) {
	ps, err := rules.Default()
	if err != nil {
		b.Fatal(err)
	}
	fsys := embeddedCorpus(&testing.T{})
	for i := 0; i < b.N; i++ {
		if _, err := corpus.Gate(ps, fsys, nil); err != nil {
			b.Fatal(err)
		}
	}
}
