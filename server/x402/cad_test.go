package x402

import (
	"strings"
	"testing"
)

func TestRatesCSV(t *testing.T) {
	r, err := ParseRates(strings.NewReader("date,rate\n# Bank of Canada\n2026-11-27,1.3982\n2026-11-30, 1.4010\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	got := r.For("2026-11-30")
	if got.Pending || got.Rate != "1.4010" || got.RateDate != "2026-11-30" || got.Basis != DefaultCADBasis {
		t.Fatalf("%+v", got)
	}
	if p := r.For("2026-11-28"); !p.Pending || p.Rate != "" || p.Basis != "" {
		t.Fatalf("missing day must be pending: %+v", p)
	}
	for _, bad := range []string{"2026-13-01,1.3\n", "2026-11-30,-1\n", "2026-11-30,abc\n", "2026-11-30,1.3\n2026-11-30,1.4\n", "2026-11-30\n"} {
		if _, err := ParseRates(strings.NewReader(bad), ""); err == nil {
			t.Errorf("accepted %q", bad)
		} else if strings.Contains(err.Error(), "abc") {
			t.Errorf("error quotes input: %v", err)
		}
	}
}

func TestCADAmount(t *testing.T) {
	for _, c := range []struct {
		units      int64
		rate, want string
	}{
		{50000, "1.4010", "0.07"}, {50000, "1.3", "0.07"}, {50000, "1.29", "0.06"}, {1_000_000, "1.3982", "1.40"},
	} {
		got, err := CADAmount(c.units, c.rate)
		if err != nil || got != c.want {
			t.Errorf("CADAmount(%d,%s) = %s %v, want %s", c.units, c.rate, got, err, c.want)
		}
	}
}
