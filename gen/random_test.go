package gen

import (
	"math/rand"
	"testing"
)

// TestRandomExportValid: every random export is a valid, in-cap submission, and
// over many seeds every decision rule and every family/form shows up.
func TestRandomExportValid(t *testing.T) {
	decided := map[string]int{}
	kinds := map[string]int{}
	for seed := int64(1); seed <= 1500; seed++ {
		body := RandomExport(rand.New(rand.NewSource(seed)))
		if len(body) > BodyBytesCap {
			t.Fatalf("seed %d: body over the cap", seed)
		}
		e := mustExpect(t, body)
		if e.Refusal != nil {
			t.Fatalf("seed %d: random export refused (%s)", seed, e.Refusal.Rule)
		}
		kinds[e.Audit.Family+"/"+e.Audit.Form]++
		if cl := e.Audit.Factors.CrossScopeClusters.Clusters; cl != nil {
			for _, c := range *cl {
				decided[c.DecidedBy]++
			}
		}
		if e.Audit.Factors.CrossScopeClusters.TemplateLineage != nil && *e.Audit.Factors.CrossScopeClusters.TemplateLineage > 0 {
			decided["L-4"]++
		}
	}
	for _, r := range append(append([]string{}, precedenceOrder...), "L-4") {
		if decided[r] == 0 {
			t.Errorf("no random export decided by %s", r)
		}
	}
	if len(kinds) != 8 {
		t.Errorf("family/form combinations seen: %v", kinds)
	}
	t.Logf("decisions over 1500 exports: %v", decided)
}
