// Package store is the service's only persistence: the payments ledger (exactly the criteria's
// closed field list) and the free-tier counters. It never holds any part of an export.
//
// Two backends implement Store: server/store/sqlite (the embedded default) and
// server/store/postgres (shared by replicas). Both apply their own embedded, numbered migrations;
// a later feature adds a table by dropping a new NNNN_name.sql file next to the existing ones.
// What the two share is written here once: the interfaces, the migrations' loading, the write
// keys' SQL and the keyed writes' orchestration over a backend's transaction (WriteDB, WriteTx),
// run one transaction per write (Serial: PostgreSQL) or many writes per commit and sync (Group:
// SQLite's group commit, group.go).
package store

import (
	"context"
	"errors"
	"time"
)

// Op values written to the ledger.
const (
	OpAudit = "audit"
)

// ErrNotFound is returned when a ledger row does not exist.
var ErrNotFound = errors.New("store: not found")

// Store is the persistence interface shared by every backend.
type Store interface {
	// TakeFree atomically decides one free-tier call for the caller key and, when it is
	// allowed, consumes it (one statement in one transaction, shared by every replica that uses
	// the same database). A refused call consumes nothing.
	TakeFree(ctx context.Context, key string, now time.Time, limits FreeLimits) (FreeDecision, error)
	// AppendLedger writes one ledger row and returns its surrogate id.
	AppendLedger(ctx context.Context, e LedgerEntry) (int64, error)
	// ListLedger returns ledger rows with ID greater than afterID, oldest first, at most limit.
	ListLedger(ctx context.Context, afterID int64, limit int) ([]LedgerEntry, error)
	// MarkRefund sets the refund flag of one ledger row.
	MarkRefund(ctx context.Context, id int64) error
	// Tripwires returns the kill-line figures over the window [now-window, now].
	Tripwires(ctx context.Context, now time.Time, window time.Duration) (Tripwires, error)
	// Day0 returns Day-0, the first outside paid settle; ok is false before it.
	Day0(ctx context.Context) (d Day0, ok bool, err error)
	// TripwireDays returns the kill-line counts of each UTC day from fromDay to toDay
	// (YYYY-MM-DD, both included) that has any, oldest first.
	TripwireDays(ctx context.Context, fromDay, toDay string) ([]DayCounts, error)
	// LedgerColumns lists the ledger table's columns as the database reports them (for the
	// closed-field-list test and the ledger subcommand's self-check).
	LedgerColumns(ctx context.Context) ([]string, error)
	// Tables lists the backend's tables (used by the retention tests to scan every table).
	Tables(ctx context.Context) ([]string, error)
	// DumpTable returns every row of one table rendered as text, for the retention tests.
	DumpTable(ctx context.Context, table string) ([]string, error)
	// Close releases the backend.
	Close() error
}

// FreeLimits are the published free-tier limits.
type FreeLimits struct {
	PerDay      int
	MinInterval time.Duration
	// Uncounted keeps the call out of the free-use tripwire (free_calls_daily): the allowance of a
	// criteria served beside the primary one, whose use is not the primary's free use.
	Uncounted bool
}

// FreeOutcome is the result of one free-tier check.
type FreeOutcome int

const (
	// FreeAllowed means the call was counted and may proceed.
	FreeAllowed FreeOutcome = iota
	// FreeExhausted means the daily allowance is used up (HTTP 402, R-30).
	FreeExhausted
	// FreeTooSoon means the call came before the minimum interval elapsed (HTTP 429, R-30).
	FreeTooSoon
)

// FreeDecision is what TakeFree decided.
type FreeDecision struct {
	Outcome FreeOutcome
	// Used is the number of calls counted for the caller today, this one included when allowed.
	Used int
	// RetryAfter is how long until the next call can be allowed (FreeTooSoon only).
	RetryAfter time.Duration
	// Replayed means the call's write key stood for a use already committed: this call
	// consumed nothing (Keyed.TakeFreeOnce).
	Replayed bool
}

// LedgerEntry is one ledger row: exactly the criteria's custody.ledger_closed_fields.
type LedgerEntry struct {
	// ID is the surrogate primary key (assigned by the store).
	ID int64
	// PayerWallet is the payer's wallet ("" when none, e.g. a house audit).
	PayerWallet string
	// Timestamp is the time of the call (UTC, whole milliseconds are kept).
	Timestamp time.Time
	// Day is the UTC day of Timestamp, YYYY-MM-DD.
	Day string
	// PriceUSDCUnits is the price charged in USDC base units (0 for a house audit).
	PriceUSDCUnits int64
	// CAD is the Canadian-dollar fair-market-value block of the price.
	CAD CADBlock
	// PaymentTx is the payment transaction id ("" when none).
	PaymentTx string
	// SolanaFeeLamports is the Solana fee of the payment (nil when none).
	SolanaFeeLamports *int64
	// CriteriaVersion is the criteria revision the result was computed under.
	CriteriaVersion string
	// VerdictLine is the report's verdict line.
	VerdictLine string
	// Op is the operation (OpAudit).
	Op string
	// UndeclaredClusters is the undeclared-cluster count, nil when that factor is NOT ASSESSABLE.
	UndeclaredClusters *int
	// House marks an operator's house audit (never a paid call).
	House bool
}

// CADBlock is the CAD fair-market-value block of a ledger row.
type CADBlock struct {
	// Rate is the USD→CAD rate as a decimal string ("" when pending).
	Rate string
	// RateDate is the rate's date, YYYY-MM-DD ("" when pending).
	RateDate string
	// Basis names the rate's source ("" when pending).
	Basis string
	// Pending is true while the rate is not yet fixed.
	Pending bool
	// Refund is true when the call was refunded.
	Refund bool
}

// Tripwires are the kill-line figures the service can compute from its own store.
type Tripwires struct {
	// PaidCalls counts ledger rows of op audit, not house, in the window.
	PaidCalls int64
	// Refunds counts those paid calls that were refunded.
	Refunds int64
	// FreeCalls counts free pre-check calls allowed in the window.
	FreeCalls int64
	// HouseCalls counts house audits in the window (never counted as paid).
	HouseCalls int64
}

// RefundShare is Refunds / PaidCalls (0 when there are no paid calls).
func (t Tripwires) RefundShare() float64 {
	if t.PaidCalls == 0 {
		return 0
	}
	return float64(t.Refunds) / float64(t.PaidCalls)
}

// Day0 is the criteria kill line's Day-0: the first outside paid settle, a ledger row of op
// audit that is not a house row (house audits, and payments on any network but mainnet, are
// booked as house rows) and carries its payment transaction. Each backend records it in the same
// transaction as that ledger row (migration 0130_day0) and never moves it afterwards.
type Day0 struct {
	// At is the ledger row's timestamp.
	At time.Time `json:"at"`
	// PaymentTx is the settle's payment transaction id.
	PaymentTx string `json:"payment_tx"`
	// LedgerID is the ledger row's id.
	LedgerID int64 `json:"ledger_id"`
}

// DayCounts are one UTC day's kill-line counts, as Tripwires counts them.
type DayCounts struct {
	// Day is the UTC day, YYYY-MM-DD.
	Day string
	// PaidCalls counts ledger rows of op audit, not house, of the day.
	PaidCalls int64
	// Refunds counts those paid calls that were refunded.
	Refunds int64
	// FreeCalls counts free pre-check calls allowed on the day.
	FreeCalls int64
	// HouseCalls counts house audits of the day.
	HouseCalls int64
}

// DayRows is the part of a result set ScanDays reads (database/sql's and pgx's rows both have it).
type DayRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanDays reads rows of (day, paid calls, refunds, house calls, free calls).
func ScanDays(rows DayRows) ([]DayCounts, error) {
	var out []DayCounts
	for rows.Next() {
		var d DayCounts
		if err := rows.Scan(&d.Day, &d.PaidCalls, &d.Refunds, &d.HouseCalls, &d.FreeCalls); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// MergeDays joins per-day ledger counts and per-day free calls (each sorted by day) into one
// list sorted by day.
func MergeDays(ledger, free []DayCounts) []DayCounts {
	out := make([]DayCounts, 0, len(ledger)+len(free))
	i, j := 0, 0
	for i < len(ledger) || j < len(free) {
		switch {
		case j == len(free) || (i < len(ledger) && ledger[i].Day < free[j].Day):
			out = append(out, ledger[i])
			i++
		case i == len(ledger) || free[j].Day < ledger[i].Day:
			out = append(out, free[j])
			j++
		default:
			d := ledger[i]
			d.FreeCalls = free[j].FreeCalls
			out = append(out, d)
			i, j = i+1, j+1
		}
	}
	return out
}

// Day returns the UTC day string of t.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// LedgerField maps one entry of the criteria's closed field list to its ledger columns.
type LedgerField struct {
	// Label is the criteria's text for the field, verbatim.
	Label string
	// Columns are the ledger columns that hold it.
	Columns []string
}

// LedgerSurrogateKey is the one ledger column that is not a criteria field.
const LedgerSurrogateKey = "id"

// LedgerFields is the closed field list of custody.ledger_closed_fields, column by column. A test
// checks the labels against the criteria and the columns against both backends' schemas.
var LedgerFields = []LedgerField{
	{"payer wallet", []string{"payer_wallet"}},
	{"timestamp/day", []string{"ts", "day"}},
	{"price (USDC units) with the CAD fair-market-value block (rate, rate date, basis, cad_pending, refund)",
		[]string{"price_usdc_units", "cad_rate", "cad_rate_date", "cad_basis", "cad_pending", "refund"}},
	{"payment tx id + Solana fee (lamports)", []string{"payment_tx", "solana_fee_lamports"}},
	{"criteria version", []string{"criteria_version"}},
	{"verdict line", []string{"verdict_line"}},
	{"op", []string{"op"}},
	{"undeclared-cluster count (null when the factor is NOT ASSESSABLE)", []string{"undeclared_clusters"}},
	{"house flag", []string{"house"}},
}

// LedgerColumnNames is the flattened column list of LedgerFields plus the surrogate key.
func LedgerColumnNames() []string {
	cols := []string{LedgerSurrogateKey}
	for _, f := range LedgerFields {
		cols = append(cols, f.Columns...)
	}
	return cols
}

// Decide turns the stored state of a caller that a conditional update refused into the
// refusal's kind. day/used/lastMS are the stored row; the call is at now.
func Decide(now time.Time, day string, used int, lastMS int64, limits FreeLimits) FreeDecision {
	if day == Day(now) && used >= limits.PerDay {
		return FreeDecision{Outcome: FreeExhausted, Used: used}
	}
	wait := time.Duration(lastMS+limits.MinInterval.Milliseconds()-now.UnixMilli()) * time.Millisecond
	if wait <= 0 {
		// Refused by a concurrent change between statement and read: report the minimum wait.
		wait = time.Millisecond
	}
	u := used
	if day != Day(now) {
		u = 0
	}
	return FreeDecision{Outcome: FreeTooSoon, Used: u, RetryAfter: wait}
}

// Sweeper deletes operational rows that have outlived their purpose, in bounded batches: spent
// sign-in-with-x nonces past their challenge's expiry and margin, free-tier rows of a past day
// whose minimum interval has passed (a new day starts every count at zero anyway), and finished
// x402 settlement rows past settlement.DefaultRetention (never one still owed an answer), and
// write keys past their lifetime (KeyLifetime). Each
// call deletes at most batch rows of each table; call it again while a count equals batch.
// Both backends implement it. The ledger is never swept.
type Sweeper interface {
	Sweep(ctx context.Context, now time.Time, minInterval time.Duration, batch int) (SweepResult, error)
}

// SweepResult counts the rows one Sweep deleted.
type SweepResult struct {
	Nonces      int64
	FreeTier    int64
	Settlements int64
	WriteKeys   int64
}

// More reports whether a table filled its batch, so rows may remain.
func (r SweepResult) More(batch int) bool {
	b := int64(batch)
	return r.Nonces >= b || r.FreeTier >= b || r.Settlements >= b || r.WriteKeys >= b
}
