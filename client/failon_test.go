package client

import (
	"os"
	"path/filepath"
	"testing"
)

func report(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "server", "api", "testdata", "audit_house.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The golden house report: undeclared 1, unscoped 0 of 3, duplicates excess 0 of 3, scope
// conflicts NOT ASSESSABLE.
func TestGateCheck(t *testing.T) {
	doc := report(t)
	for _, c := range []struct {
		gate    string
		crossed bool
		value   string
		err     error
	}{
		{"undeclared>0", true, "1", nil},
		{"undeclared>1", false, "1", nil},
		{"undeclared>=1", true, "1", nil},
		{"cross_scope_clusters.undeclared==1", true, "1", nil},
		{"unscoped>0", false, "0", nil},
		{"unscoped_rate>0.05", false, "0", nil},
		{"scope_presence_rate<1", false, "1", nil},
		{"scope_presence_rate<=1", true, "1", nil},
		{"duplicates>0", false, "0", nil},
		{"conflicts>0", false, "", ErrNotAssessable},
	} {
		t.Run(c.gate, func(t *testing.T) {
			g, err := ParseGate(c.gate)
			if err != nil {
				t.Fatal(err)
			}
			o, err := g.Check(doc)
			if c.err != nil {
				if err != c.err || o != nil {
					t.Fatalf("want %v, got %v %v", c.err, o, err)
				}
				return
			}
			if err != nil || o.Crossed != c.crossed || o.Value != c.value {
				t.Fatalf("got %+v %v, want crossed=%v value=%s", o, err, c.crossed, c.value)
			}
		})
	}
}

func TestParseGateRefusesCombinations(t *testing.T) {
	for _, s := range []string{"undeclared>0&&conflicts>0", "undeclared>0,duplicates>0", "undeclared>0 or unscoped>1",
		"0<undeclared<3", "undeclared", "undeclared>x", "verdict>0", "scope_presence>1", "undeclared=>1"} {
		if g, err := ParseGate(s); err == nil {
			t.Errorf("%q parsed as %+v", s, g)
		}
	}
}

func TestGateRefusesExponents(t *testing.T) {
	if _, err := ParseGate("undeclared>1e999999999"); err == nil {
		t.Fatal("an exponent threshold was accepted")
	}
	g, _ := ParseGate("undeclared>0")
	if _, err := g.Check([]byte(`{"factors":{"cross_scope_clusters":{"status":"ASSESSABLE","undeclared":1e999999999}}}`)); err == nil {
		t.Fatal("an exponent figure was accepted")
	}
}

// A gate's factor is read in the free pre-check first: NOT ASSESSABLE there means the paid audit
// would have no figure to compare.
func TestGateAssessableFromPrecheck(t *testing.T) {
	pre, err := os.ReadFile(filepath.Join("..", "server", "api", "testdata", "precheck.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		gate string
		ok   bool
		err  error
	}{
		{"undeclared>0", true, nil},
		{"conflicts>0", false, nil},
		{"reinserts_outside_envelope.outside>0", false, ErrNoSuchFactor},
	} {
		g, err := ParseGate(c.gate)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := g.Assessable(pre)
		if ok != c.ok || err != c.err {
			t.Errorf("%s: assessable %v %v, want %v %v", c.gate, ok, err, c.ok, c.err)
		}
	}
	if _, err := (&Gate{Factor: "duplicates"}).Assessable(report(t)[:10]); err == nil {
		t.Error("a document that is not a pre-check was read")
	}
}

// The second rule set's figures are named factor.member.
func TestGateOnForgetEnvelopeReport(t *testing.T) {
	rep := []byte(`{"kind":"audit_report","factors":{"reinserts_outside_envelope":{"status":"ASSESSABLE","outside":1,"checked":1},
		"forget_envelopes":{"status":"ASSESSABLE","rate":{"numerator":1,"denominator":2,"value":"50.0%"}},
		"reopens":{"status":"NOT ASSESSABLE","reason":"transitional-forget store: a forget retires no key"}}}`)
	for _, c := range []struct {
		gate, value string
		crossed     bool
		err         error
	}{
		{"reinserts_outside_envelope.outside>0", "1", true, nil},
		{"forget_envelopes.rate<1", "1/2", true, nil},
		{"reopens.unchecked>0", "", false, ErrNotAssessable},
		{"replay.mismatches>0", "", false, ErrNoSuchFactor},
	} {
		g, err := ParseGate(c.gate)
		if err != nil {
			t.Fatal(err)
		}
		o, err := g.Check(rep)
		if err != c.err || (err == nil && (o.Value != c.value || o.Crossed != c.crossed)) {
			t.Errorf("%s: %+v %v", c.gate, o, err)
		}
	}
}
