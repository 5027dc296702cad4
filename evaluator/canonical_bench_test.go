package evaluator_test

import (
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/gen"
)

// BenchmarkReportCanonical writes the canonical form of each max-size export's report, the work
// the server does while the ledger row commits (besides the signature).
func BenchmarkReportCanonical(b *testing.B) {
	ps := shipped(b)
	for _, f := range gen.MaxSizeFamilies {
		rep, ref, err := evaluator.Audit(ps, gen.MaxSizeExport(f), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		if err != nil || ref != nil {
			b.Fatal(err, ref)
		}
		b.Run(f, func(b *testing.B) {
			buf := rep.AppendCanonical(nil)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				buf, _ = rep.AppendCanonicalPlaced(buf[:0], "signature")
			}
		})
	}
}
