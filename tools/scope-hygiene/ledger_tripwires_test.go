package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/metrics/tripwire"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/storetest"
)

// ledgerBackends make a fresh store of each backend for one test (PostgreSQL is skipped without
// SCOPE_HYGIENE_PG_DSN).
var ledgerBackends = map[string]func(t *testing.T) string{
	"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "ledger.db") },
	"postgres": func(t *testing.T) string { return storetest.PostgresDSN(t) },
}

// eachLedgerStore runs fn on a fresh, open store of each backend.
func eachLedgerStore(t *testing.T, fn func(t *testing.T, ctx context.Context, dsn string, st store.Store)) {
	for name, spec := range ledgerBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dsn := spec(t)
			st, err := openStore(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			fn(t, ctx, dsn, st)
		})
	}
}

func paidRow(ts time.Time, tx string, house bool) store.LedgerEntry {
	return store.LedgerEntry{PayerWallet: "payer", Timestamp: ts, Day: store.Day(ts), PriceUSDCUnits: 50000, CAD: store.CADBlock{Pending: true},
		PaymentTx: tx, SolanaFeeLamports: ptr(int64(5000)), CriteriaVersion: "1.0.2", VerdictLine: "v", Op: store.OpAudit, House: house}
}

// fortyDayLedger writes a house audit and a test-network settle 50 days ago (neither counts),
// then ten outside paid settles a day from 40 days ago to today, three of each of the third and
// fourth days refunded (a spike in the first week: 10% of the paid calls of the window from Day-0
// to the third day, 15% to the fourth).
func fortyDayLedger(t *testing.T, st store.Store, now time.Time) (day0 time.Time) {
	ctx := context.Background()
	old := now.AddDate(0, 0, -50)
	for _, e := range []store.LedgerEntry{{Timestamp: old, Day: store.Day(old), CriteriaVersion: "1.0.2", VerdictLine: "v", Op: store.OpAudit, House: true},
		paidRow(old, "devnet-tx", true)} {
		if _, err := st.AppendLedger(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	day0 = now.AddDate(0, 0, -40).Truncate(time.Millisecond)
	for d := 0; d <= 40; d++ {
		for i := 0; i < 10; i++ {
			id, err := st.AppendLedger(ctx, paidRow(day0.AddDate(0, 0, d).Add(time.Duration(i)*time.Second), fmt.Sprintf("tx-%d-%d", d, i), false))
			if err != nil {
				t.Fatal(err)
			}
			if (d == 2 || d == 3) && i < 3 {
				if err := st.MarkRefund(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return day0
}

// TestLedgerTripwiresDay0FortyDaysAgo is the scenario: the first outside paid settle was
// 40 days ago with a refund spike in its first week. `ledger -tripwires` names Day-0 and reports
// the spike's window as tripped although the trailing window is clean, and /metrics says the
// same, logging the trip once. Both stores agree.
func TestLedgerTripwiresDay0FortyDaysAgo(t *testing.T) {
	eachLedgerStore(t, func(t *testing.T, ctx context.Context, dsn string, st store.Store) {
		now := time.Now().UTC()
		day0 := fortyDayLedger(t, st, now)
		first := store.Day(day0)
		spikeEnd := store.Day(day0.AddDate(0, 0, 2))

		var out, errOut bytes.Buffer
		if rc := ledger(ctx, []string{"-tripwires", "-store", dsn}, &out, &errOut); rc != 0 {
			t.Fatalf("ledger -tripwires: exit %d: %s", rc, errOut.String())
		}
		for _, want := range []string{
			"Day-0: " + day0.Format(time.RFC3339Nano) + " (transaction tx-0-0, ledger row 3), the first outside paid settle",
			"Refunds over 5% of paid calls in any 30-day window: TRIPPED (stop and review), first in the window " + first + " to " + spikeEnd + ".",
			"Free use over 10x paid use: not tripped.",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("ledger -tripwires lacks %q:\n%s", want, out.String())
			}
		}
		if !regexpLine(out.String(), ` *trailing +`+store.Day(now.AddDate(0, 0, -29))+` +`+store.Day(now)+` +300 +0 +0\.0%`) {
			t.Errorf("ledger -tripwires: the trailing window is not the clean last 30 days:\n%s", out.String())
		}

		out.Reset()
		if rc := ledger(ctx, []string{"-tripwires", "-json", "-store", dsn}, &out, &errOut); rc != 0 {
			t.Fatalf("ledger -tripwires -json: exit %d: %s", rc, errOut.String())
		}
		var r struct {
			Day0    store.Day0 `json:"day0"`
			Refunds struct {
				Tripped      bool                        `json:"tripped"`
				FirstTripped struct{ Start, End string } `json:"first_tripped"`
				Worst        struct {
					RefundShare float64 `json:"refund_share"`
				}
			} `json:"refunds_over_share_of_paid"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil || !r.Day0.At.Equal(day0) || !r.Refunds.Tripped ||
			r.Refunds.FirstTripped.Start != first || r.Refunds.FirstTripped.End != spikeEnd || r.Refunds.Worst.RefundShare != 0.15 {
			t.Errorf("ledger -tripwires -json = %+v (%v):\n%s", r, err, out.String())
		}

		text, logged := scrapeKillLine(t, st)
		for _, want := range []string{
			fmt.Sprintf("scope_hygiene_day0_timestamp_seconds %s", promFloat(float64(day0.UnixMilli())/1000)),
			"scope_hygiene_tripwire_before_day0 0",
			`scope_hygiene_tripwire_tripped_since_day0{tripwire="refunds_over_5pct_of_paid"} 1`,
			`scope_hygiene_tripwire_tripped_since_day0{tripwire="free_over_10x_paid"} 0`,
			fmt.Sprintf(`scope_hygiene_tripwire_first_tripped_window_start_seconds{tripwire="refunds_over_5pct_of_paid"} %s`, promFloat(float64(dayStart(t, first)))),
			"scope_hygiene_tripwire_worst_refund_share 0.15",
		} {
			if !strings.Contains(text, want+"\n") {
				t.Errorf("/metrics lacks %q:\n%s", want, text)
			}
		}
		if n := strings.Count(logged, "kill-line tripwire tripped"); n != 1 || !strings.Contains(logged, `"window_start":"`+first+`"`) {
			t.Errorf("the trip was logged %d times, want once with its window:\n%s", n, logged)
		}
	})
}

// TestLedgerTripwiresBeforeDay0: a ledger with house audits and test-network settles only has no
// Day-0; it says so in words, and no figure (no ratio over nothing) appears anywhere.
func TestLedgerTripwiresBeforeDay0(t *testing.T) {
	eachLedgerStore(t, func(t *testing.T, ctx context.Context, dsn string, st store.Store) {
		now := time.Now().UTC()
		for _, e := range []store.LedgerEntry{{Timestamp: now, Day: store.Day(now), CriteriaVersion: "1.0.2", VerdictLine: "v", Op: store.OpAudit, House: true},
			paidRow(now, "devnet-tx", true)} {
			if _, err := st.AppendLedger(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.TakeFree(ctx, "k", now, store.FreeLimits{PerDay: 5}); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if rc := ledger(ctx, []string{"-tripwires", "-store", dsn}, &out, &errOut); rc != 0 {
			t.Fatalf("ledger -tripwires: exit %d: %s", rc, errOut.String())
		}
		want := "Day-0: not yet. The ledger holds no paid call from outside (house audits and test-network settles never count),\n" +
			"so no tripwire has a figure: every one is before Day-0.\n" +
			"Refunds over 5% of paid calls in any 30-day window: before Day-0.\n" +
			"Free use over 10x paid use: before Day-0.\n"
		if !strings.HasPrefix(out.String(), want) {
			t.Errorf("ledger -tripwires before Day-0:\n%s\nwant:\n%s", out.String(), want)
		}
		out.Reset()
		if rc := ledgerTripwires(ctx, []string{"-json", "-store", dsn}, &out, &errOut); rc != 0 ||
			!strings.Contains(out.String(), `"day0":null,"before_day0":true`) || strings.Contains(out.String(), "share") {
			t.Errorf("ledger tripwires -json before Day-0: exit %d:\n%s", rc, out.String())
		}
		text, logged := scrapeKillLine(t, st)
		if !strings.Contains(text, "scope_hygiene_tripwire_before_day0 1\n") || strings.Contains(text, "day0_timestamp") ||
			strings.Contains(text, "tripped_since_day0") || strings.Contains(text, "worst_refund_share") || logged != "" {
			t.Errorf("/metrics before Day-0:\n%s\nlog: %s", text, logged)
		}
	})
}

// scrapeKillLine scrapes the kill-line gauges of st twice under the served criteria's numbers and
// returns the second scrape's scope_hygiene lines and everything logged.
func scrapeKillLine(t *testing.T, st store.Store) (text, logged string) {
	t.Helper()
	limits := servedKillLine(t)
	var logs bytes.Buffer
	m := metrics.New()
	m.RegisterKillLine(st, limits, 5*time.Second, time.Now, slog.New(slog.NewJSONHandler(&logs, nil)))
	for range 2 {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		text = rec.Body.String()
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "scope_hygiene_") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n") + "\n", logs.String()
}

// servedKillLine is the kill line of the embedded criteria, as the service serves it.
func servedKillLine(t *testing.T) tripwire.Limits {
	t.Helper()
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	limits, err := killLineLimits(ps)
	if err != nil {
		t.Fatal(err)
	}
	return limits
}

// promFloat is v as the Prometheus text format writes it.
func promFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// regexpLine reports whether a line of text matches pattern.
func regexpLine(text, pattern string) bool {
	return regexp.MustCompile(`(?m)^` + pattern + `$`).MatchString(text)
}

func dayStart(t *testing.T, day string) int64 {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		t.Fatal(err)
	}
	return d.Unix()
}

// TestKillLineBothStoresAgree: the same ledger in SQLite and in PostgreSQL gives the same report.
func TestKillLineBothStoresAgree(t *testing.T) {
	now := time.Now().UTC()
	limits := servedKillLine(t)
	var reports []string
	for _, name := range []string{"sqlite", "postgres"} {
		ctx := context.Background()
		st, err := openStore(ctx, ledgerBackends[name](t))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		fortyDayLedger(t, st, now)
		if _, err := st.TakeFree(ctx, "k", now, store.FreeLimits{PerDay: 5}); err != nil {
			t.Fatal(err)
		}
		r, err := metrics.ReadKillLine(ctx, st, now, limits)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		reports = append(reports, string(b))
	}
	if reports[0] != reports[1] {
		t.Fatalf("the stores disagree:\nsqlite   %s\npostgres %s", reports[0], reports[1])
	}
}
