package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/api"
)

// slowPayments is fakePayments whose verification takes time on the test clock.
type slowPayments struct {
	fakePayments
	clock *clock
	took  time.Duration
}

func (s *slowPayments) Require(c echo.Context, q api.Quote) (*api.Payment, error) {
	s.clock.Advance(s.took)
	return s.fakePayments.Require(c, q)
}

// TestCheckEndIsWhenTheCheckEnded: the verdict's check-end time is read when the check has ended,
// not when the request arrived (issue 11 item 6): a payment verification that takes 90 s on the
// clock moves check_end and the verdict line by 90 s.
func TestCheckEndIsWhenTheCheckEnded(t *testing.T) {
	var pay *slowPayments
	h := newHarness(t, sqliteStore(t), func(c *api.Config) { pay = &slowPayments{took: 90 * time.Second}; c.Payments = pay })
	pay.clock = h.clock
	arrived := h.clock.Now()
	r := h.do("POST", "/audit", export(nil), map[string]string{"X-Test-Paid": "1"})
	if r.Status != 200 {
		t.Fatalf("paid audit: %d %s", r.Status, r.Body)
	}
	var rep struct {
		CheckEnd    string `json:"check_end"`
		VerdictLine string `json:"verdict_line"`
	}
	if err := json.Unmarshal(r.Body, &rep); err != nil {
		t.Fatal(err)
	}
	want := arrived.Add(90 * time.Second).UTC().Format(time.RFC3339)
	if rep.CheckEnd != want || !strings.HasSuffix(rep.VerdictLine, " — "+want) {
		t.Fatalf("check_end %q, verdict %q; want %s (arrival was %s)", rep.CheckEnd, rep.VerdictLine, want, arrived.Format(time.RFC3339))
	}
}
