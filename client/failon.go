package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// A Gate is one caller-chosen threshold on one factor of a report, for CI: "undeclared>0",
// "unscoped_rate>=0.05". It names exactly one factor figure; combinations are refused.
type Gate struct {
	// Name is the figure as the caller wrote it.
	Name string
	// Factor is the report factor it reads (factors.<Factor>).
	Factor string
	// Path is the member path inside the factor.
	Path []string
	// Op is one of > >= < <= ==.
	Op string
	// Threshold is the caller's threshold.
	Threshold *big.Rat
}

// gateFigures are the short names of v1's figures a gate may read. Any other name must be the
// full "factor.member" path of a number or a rate in the report, of either rule set (e.g.
// reinserts_outside_envelope.outside); the pre-check and the report say whether that factor exists.
var gateFigures = map[string]string{
	"undeclared":          "cross_scope_clusters.undeclared",
	"ambiguous":           "cross_scope_clusters.ambiguous",
	"candidate_clusters":  "cross_scope_clusters.candidate",
	"unscoped":            "unscoped_rate.unscoped",
	"unscoped_rate":       "unscoped_rate.rate",
	"scope_presence_rate": "scope_presence.rate",
	"conflicts":           "scope_conflicts.conflicts",
	"duplicates":          "duplicates.excess",
	"duplicate_rate":      "duplicates.rate",
}

// identifier accepts a factor or member name: lower-case letters, digits and underscores.
func identifier(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// GateNames lists the short figure names, for usage text.
func GateNames() []string {
	return []string{"undeclared", "ambiguous", "candidate_clusters", "unscoped", "unscoped_rate",
		"scope_presence_rate", "conflicts", "duplicates", "duplicate_rate"}
}

// ParseGate parses "figure OP number", one figure only.
func ParseGate(s string) (*Gate, error) {
	s = strings.TrimSpace(s)
	for _, bad := range []string{"&&", "||", ",", ";", " and ", " or "} {
		if strings.Contains(s, bad) {
			return nil, errors.New("fail-on: one factor at a time (no combinations)")
		}
	}
	var op string
	i := strings.IndexAny(s, "<>=")
	if i <= 0 {
		return nil, errors.New("fail-on: want FIGURE OP NUMBER, e.g. undeclared>0")
	}
	for _, o := range []string{">=", "<=", "==", ">", "<"} {
		if strings.HasPrefix(s[i:], o) {
			op = o
			break
		}
	}
	if op == "" {
		return nil, errors.New("fail-on: the operator must be one of > >= < <= ==")
	}
	name, num := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(op):])
	if strings.ContainsAny(num, "<>=") {
		return nil, errors.New("fail-on: one comparison at a time")
	}
	th, ok := decimal(num)
	if !ok {
		return nil, errors.New("fail-on: the threshold must be a plain decimal number, e.g. 0 or 0.05")
	}
	path := name
	if p, ok := gateFigures[name]; ok {
		path = p
	}
	parts := strings.Split(path, ".")
	known := len(parts) >= 2
	for _, p := range parts {
		known = known && identifier(p)
	}
	if !known {
		return nil, fmt.Errorf("fail-on: unknown figure %q (use %s, or factor.member)", name, strings.Join(GateNames(), ", "))
	}
	return &Gate{Name: name, Factor: parts[0], Path: parts[1:], Op: op, Threshold: th}, nil
}

// ErrNotAssessable is returned when the gate's factor is NOT ASSESSABLE in the report: there is
// no number to compare, and none is invented.
var ErrNotAssessable = errors.New("fail-on: the factor is NOT ASSESSABLE in this report")

// Outcome is a gate evaluated on one report.
type Outcome struct {
	// Value is the figure as an exact decimal string (a rate as its quotient).
	Value string
	// Crossed is true when the figure meets the gate's condition (the caller's failure).
	Crossed bool
}

// ErrNoSuchFactor is returned when the rule set of a result has no factor of the gate's name.
var ErrNoSuchFactor = errors.New("fail-on: this rule set has no such factor")

// Assessable reads the gate's factor in a pre-check result (which states every factor's status
// and computes none): false when it is NOT ASSESSABLE, so the audit would have no figure to
// compare and need not be paid for.
func (g *Gate) Assessable(precheck []byte) (bool, error) {
	var doc struct {
		Factors map[string]struct {
			Status string `json:"status"`
		} `json:"factors"`
	}
	if err := json.Unmarshal(precheck, &doc); err != nil || doc.Factors == nil {
		return false, errors.New("fail-on: the document is not a pre-check result")
	}
	f, ok := doc.Factors[g.Factor]
	if !ok {
		return false, ErrNoSuchFactor
	}
	return f.Status == "ASSESSABLE", nil
}

// Check evaluates the gate on a signed audit report.
func (g *Gate) Check(report []byte) (*Outcome, error) {
	var doc struct {
		Factors map[string]map[string]json.RawMessage `json:"factors"`
	}
	if err := json.Unmarshal(report, &doc); err != nil || doc.Factors == nil {
		return nil, errors.New("fail-on: the document is not an audit report")
	}
	f, ok := doc.Factors[g.Factor]
	if !ok {
		return nil, ErrNoSuchFactor
	}
	var status string
	_ = json.Unmarshal(f["status"], &status)
	if status != "ASSESSABLE" {
		return nil, ErrNotAssessable
	}
	raw, ok := f[g.Path[0]]
	for _, p := range g.Path[1:] {
		if !ok {
			break
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			ok = false
			break
		}
		raw, ok = m[p]
	}
	if !ok {
		return nil, errors.New("fail-on: the factor has no such member")
	}
	v, err := figure(raw)
	if err != nil {
		return nil, err
	}
	c := v.Cmp(g.Threshold)
	crossed := map[string]bool{">": c > 0, ">=": c >= 0, "<": c < 0, "<=": c <= 0, "==": c == 0}[g.Op]
	return &Outcome{Value: v.RatString(), Crossed: crossed}, nil
}

// decimal parses a plain decimal (digits, one optional point and sign; no exponent, at most 40
// characters), so no input can make the parser build a huge number.
func decimal(s string) (*big.Rat, bool) {
	if s == "" || len(s) > 40 {
		return nil, false
	}
	digits, point := 0, false
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.' && !point:
			point = true
		case r == '-' && i == 0:
		default:
			return nil, false
		}
	}
	if digits == 0 {
		return nil, false
	}
	return new(big.Rat).SetString(s)
}

// figure reads an integer, or a rate object {numerator, denominator}, exactly.
func figure(raw json.RawMessage) (*big.Rat, error) {
	var n json.Number
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if d.Decode(&n) == nil {
		if r, ok := decimal(n.String()); ok {
			return r, nil
		}
		return nil, errors.New("fail-on: the member is not a plain decimal number")
	}
	var rate struct {
		Numerator   *int64 `json:"numerator"`
		Denominator *int64 `json:"denominator"`
	}
	if json.Unmarshal(raw, &rate) == nil && rate.Numerator != nil && rate.Denominator != nil {
		if *rate.Denominator == 0 {
			return nil, ErrNotAssessable
		}
		return big.NewRat(*rate.Numerator, *rate.Denominator), nil
	}
	return nil, errors.New("fail-on: the member is not a number or a rate")
}
