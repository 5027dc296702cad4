package mutlog

import (
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/gen/forget"
)

// TestIdleKeysHoldNoIdentity: the identities' arena is kept from one audit to the next, so an
// idle scratch must hold no byte of the last log's identities (nor a table entry), and a scratch
// taken from the pool must still give the next log its own identities.
func TestIdleKeysHoldNoIdentity(t *testing.T) {
	ms := loadSet(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, mode := range forget.MaxSizeModes {
		body := forget.MaxSizeLog(mode)
		audit := func() string {
			rep, ref, err := Audit(ms, body, now)
			if ref != nil || rep == nil {
				t.Fatalf("%s: refused (%v) or failed", mode, ref)
			}
			return OutcomeJSON(t, rep, ref, err)
		}
		want := audit()
		// Twice more: the second and third audits cut their identities from reused chunks.
		for i := 0; i < 2; i++ {
			if got := audit(); got != want {
				t.Fatalf("%s: the audit on reused chunks differs:\n%s\n%s", mode, got, want)
			}
		}
		chunks := 0
		for idle := len(freeKeys); idle > 0; idle-- {
			k := <-freeKeys
			if len(k.slots) != 0 || len(k.raws) != 0 || k.next != 0 || k.arena != nil {
				t.Fatalf("%s: an idle scratch keeps %d slots, %d raws, %d chunks in use", mode, len(k.slots), len(k.raws), k.next)
			}
			for _, c := range k.chunks {
				chunks++
				for _, b := range c[:cap(c)] {
					if b != 0 {
						t.Fatalf("%s: an idle chunk holds %q", mode, c[:cap(c)])
					}
				}
			}
			freeKeys <- k
		}
		if chunks == 0 {
			t.Fatalf("%s: no idle chunk to look at: the audit gave no scratch back", mode)
		}
	}
}
