package evaluator_test

import (
	"crypto/ed25519"
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

// BenchmarkReportSign is the whole signing work of a max-size report beside its parts: the
// canonical form, and the Ed25519 signature over it (two SHA-512 passes over the message).
func BenchmarkReportSign(b *testing.B) {
	ps := shipped(b)
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	for _, f := range gen.MaxSizeFamilies {
		rep, ref, err := evaluator.Audit(ps, gen.MaxSizeExport(f), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		if err != nil || ref != nil {
			b.Fatal(err, ref)
		}
		buf := rep.AppendCanonical(nil)
		b.Run(f+"/canonical", func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				buf, _ = rep.AppendCanonicalPlaced(buf[:0], "signature")
			}
		})
		b.Run(f+"/ed25519", func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				ed25519.Sign(priv, buf)
			}
		})
		// The two interleaved, so that both see the same machine: the canonical form's time as a
		// share of the signature's (the floor of signing: two SHA-512 passes over the same bytes).
		b.Run(f+"/ratio", func(b *testing.B) {
			var canon, sig time.Duration
			for b.Loop() {
				t := time.Now()
				buf, _ = rep.AppendCanonicalPlaced(buf[:0], "signature")
				t2 := time.Now()
				ed25519.Sign(priv, buf)
				canon, sig = canon+t2.Sub(t), sig+time.Since(t2)
			}
			b.ReportMetric(float64(canon)/float64(sig), "canonical/ed25519")
		})
	}
}
