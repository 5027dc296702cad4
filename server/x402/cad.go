package x402

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"
	"sync"
	"time"
)

// DefaultCADBasis states where the CAD fair-market value comes from.
const DefaultCADBasis = "operator-supplied daily USD/CAD rate; USDC valued at par with USD"

// CAD is the CAD fair-market-value block of one ledger row.
type CAD struct {
	Rate     string // USD→CAD rate as written in the CSV ("" when pending)
	RateDate string // YYYY-MM-DD ("" when pending)
	Basis    string // "" when pending
	Pending  bool
}

// Rates is an operator-supplied table of daily USD/CAD rates, read from a CSV file with the
// columns date (YYYY-MM-DD) and rate (CAD per USD, a positive decimal). A header row is allowed;
// blank lines and lines starting with # are ignored.
type Rates struct {
	mu    sync.RWMutex
	path  string
	basis string
	byDay map[string]string
}

// ParseRates reads a rates CSV.
func ParseRates(r io.Reader, basis string) (*Rates, error) {
	if basis == "" {
		basis = DefaultCADBasis
	}
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	out := &Rates{basis: basis, byDay: map[string]string{}}
	line := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("x402: rates csv line %d: malformed", line)
		}
		if len(rec) < 2 {
			return nil, fmt.Errorf("x402: rates csv line %d: want date,rate", line)
		}
		day, rate := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		if line == 1 && strings.EqualFold(day, "date") {
			continue
		}
		if _, err := time.Parse(time.DateOnly, day); err != nil {
			return nil, fmt.Errorf("x402: rates csv line %d: date is not YYYY-MM-DD", line)
		}
		v, ok := new(big.Rat).SetString(rate)
		if !ok || v.Sign() <= 0 {
			return nil, fmt.Errorf("x402: rates csv line %d: rate is not a positive decimal", line)
		}
		if _, dup := out.byDay[day]; dup {
			return nil, fmt.Errorf("x402: rates csv line %d: duplicate date", line)
		}
		out.byDay[day] = rate
	}
	return out, nil
}

// LoadRates reads the CSV at path; an empty path yields an empty table (every day pending).
func LoadRates(path, basis string) (*Rates, error) {
	if path == "" {
		r, _ := ParseRates(strings.NewReader(""), basis)
		return r, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("x402: open rates csv: %w", err)
	}
	defer f.Close()
	r, err := ParseRates(f, basis)
	if err != nil {
		return nil, err
	}
	r.path = path
	return r, nil
}

// Reload re-reads the CSV file the table came from (the operator appends a day at a time).
func (r *Rates) Reload() error {
	if r.path == "" {
		return nil
	}
	n, err := LoadRates(r.path, r.basis)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.byDay = n.byDay
	r.mu.Unlock()
	return nil
}

// For returns the CAD block for a UTC day (YYYY-MM-DD): the rate of that day, or pending.
func (r *Rates) For(day string) CAD {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rate, ok := r.byDay[day]
	if !ok {
		return CAD{Pending: true}
	}
	return CAD{Rate: rate, RateDate: day, Basis: r.basis}
}

// CADAmount returns units (USDC base units, 6 decimals) valued in CAD at rate, rounded half up
// to the cent, as a decimal string.
func CADAmount(units int64, rate string) (string, error) {
	v, ok := new(big.Rat).SetString(rate)
	if !ok {
		return "", errors.New("x402: rate is not a decimal")
	}
	cents := new(big.Rat).Mul(new(big.Rat).SetInt64(units), v)
	cents.Quo(cents, big.NewRat(10000, 1)) // units/1e6 dollars × 100 cents
	return new(big.Rat).Quo(roundHalfUp(cents), big.NewRat(100, 1)).FloatString(2), nil
}

func roundHalfUp(r *big.Rat) *big.Rat {
	n := new(big.Int).Mul(r.Num(), big.NewInt(2))
	n.Add(n, r.Denom())
	d := new(big.Int).Mul(r.Denom(), big.NewInt(2))
	return new(big.Rat).SetInt(n.Div(n, d))
}
