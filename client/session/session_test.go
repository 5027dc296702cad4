package session

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scopehygiene/scope-hygiene/client"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

// stubService answers /criteria, /precheck and an unpaid /audit with documents signed by its own
// key: enough of the service for a session's steps, without the payment path (client's
// flow_test and the command's dev-chain test cover that).
type stubService struct {
	srv    *httptest.Server
	audits atomic.Int32
}

const stubRules = "(1) scope_conflicts: ... (2) cross_scope_clusters: ..."

func newStubService(t *testing.T, priceUnits int, tamper bool) *stubService {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer := sign.NewSigner(priv)
	crit, _ := json.Marshal(map[string]any{"criteria_id": "stub/v1", sign.CriteriaKeyMember: sign.Publish(signer.Public()),
		"price": map[string]any{"usdc_units_per_call": priceUnits, "label": "0.05 USDC"}, "texts": map[string]any{"factor_rules": stubRules}})
	signed := func(w http.ResponseWriter, v any) {
		b, err := signer.Sign(v)
		if err != nil {
			t.Error(err)
		}
		if tamper {
			b = bytes.Replace(b, []byte(`"r1"`), []byte(`"r2"`), 1)
		}
		w.Write(b)
	}
	s := &stubService{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/criteria":
			w.Write(crit)
		case "/precheck":
			signed(w, map[string]any{"kind": "precheck_result", "criteria_revision": "r1", "factors": map[string]any{
				"cross_scope_clusters": map[string]any{"status": "ASSESSABLE"},
				"scope_conflicts":      map[string]any{"status": "NOT ASSESSABLE", "reason": "no conflict keys"}}})
		case "/audit":
			s.audits.Add(1)
			signed(w, map[string]any{"kind": "audit_report", "criteria_revision": "r1", "verdict_line": "SCOPE HYGIENE",
				"factors": map[string]any{
					"cross_scope_clusters": map[string]any{"status": "ASSESSABLE", "candidate": 3, "undeclared": 2, "marked_shared": 1, "ambiguous": 0},
					"scope_conflicts":      map[string]any{"status": "NOT ASSESSABLE", "reason": "no conflict keys"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func exportFile(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "export.json")
	if err := os.WriteFile(p, []byte(`{"family":"mem0","records":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, p
}

// TestRunPrecheck: a pre-check is saved beside the criteria document, verified, and its words
// list the factors in the order the criteria's text numbers them.
func TestRunPrecheck(t *testing.T) {
	svc := newStubService(t, 0, false)
	dir, export := exportFile(t)
	var lines []string
	out := Run(context.Background(), Options{Op: "precheck", URL: svc.srv.URL, MaxSpend: "0.05", Out: filepath.Join(dir, "pre.json")},
		[]string{export}, func(l string) { lines = append(lines, l) })
	if out.Err != nil || out.Code() != ExitOK || !out.Summary.OK || out.Summary.Verified == nil || out.Summary.Verified.Kind != "precheck_result" {
		t.Fatalf("outcome %+v (%v)", out.Summary, out.Err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pre.criteria.json")); err != nil {
		t.Errorf("the criteria document was not saved beside the result: %v", err)
	}
	var text bytes.Buffer
	out.WriteText(&text)
	got := text.String()
	if i, j := strings.Index(got, "scope_conflicts"), strings.Index(got, "cross_scope_clusters"); i < 0 || j < i ||
		!strings.Contains(got, "NOT ASSESSABLE: no conflict keys") {
		t.Errorf("words:\n%s", got)
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "verify: OK, signed by ed25519:") {
		t.Errorf("progress: %q", lines)
	}
}

// TestRunFailOn: on an unpriced audit the gate reads the report (crossed: exit 1); on a priced one
// the free pre-check stating the factor NOT ASSESSABLE ends the session before any audit (exit 7).
func TestRunFailOn(t *testing.T) {
	free := newStubService(t, 0, false)
	dir, export := exportFile(t)
	out := Run(context.Background(), Options{Op: "audit", URL: free.srv.URL, MaxSpend: "0.05", FailOn: "undeclared>1",
		Out: filepath.Join(dir, "rep.json")}, []string{export}, nil)
	if out.Code() != ExitGateCrossed || out.Summary.FailOn == nil || out.Summary.FailOn.Value != "2" || out.Summary.Verdict != "SCOPE HYGIENE" {
		t.Fatalf("unpriced -fail-on: %+v (%v)", out.Summary, out.Err)
	}
	var text bytes.Buffer
	out.WriteText(&text)
	if !strings.Contains(text.String(), "3 candidate clusters: 2 undeclared, 1 marked shared, 0 ambiguous") ||
		!strings.Contains(text.String(), "undeclared>1: figure 2, crossed") {
		t.Errorf("words:\n%s", text.String())
	}

	priced := newStubService(t, 50000, false)
	out = Run(context.Background(), Options{Op: "audit", URL: priced.srv.URL, MaxSpend: "0.05", FailOn: "conflicts>0",
		Payment: writeFile(t, dir, "kept.payment", "x"), Out: filepath.Join(dir, "gate.json")}, []string{export}, nil)
	if out.Code() != ExitPayment { // a kept payment skips the guard and is re-sent: this one is not a header
		t.Fatalf("a kept payment that is not a header: %+v (%v)", out.Summary, out.Err)
	}
	var wallet bytes.Buffer
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	json.NewEncoder(&wallet).Encode(keyInts(key))
	out = Run(context.Background(), Options{Op: "audit", URL: priced.srv.URL, MaxSpend: "0.05", FailOn: "conflicts>0",
		Wallet: writeFile(t, dir, "wallet.json", wallet.String()), Out: filepath.Join(dir, "gate.json")}, []string{export}, nil)
	if out.Code() != ExitNotAssessable || !out.Summary.PaidNothing || out.Summary.Op != "precheck" || priced.audits.Load() != 0 {
		t.Fatalf("priced -fail-on on a NOT ASSESSABLE factor: %+v, %d audits (%v)", out.Summary, priced.audits.Load(), out.Err)
	}
}

// TestRunRefusals: the exit codes of a session that cannot go on.
func TestRunRefusals(t *testing.T) {
	dir, export := exportFile(t)
	priced := newStubService(t, 50000, false)
	tampered := newStubService(t, 0, true)
	for _, c := range []struct {
		name string
		o    Options
		code int
		msg  string
	}{
		{"priced audit without a wallet", Options{Op: "audit", URL: priced.srv.URL, MaxSpend: "0.05"}, ExitUsage, "give -wallet KEY.json"},
		{"fail-on on a pre-check", Options{Op: "precheck", URL: priced.srv.URL, MaxSpend: "0.05", FailOn: "undeclared>0"}, ExitUsage, "-fail-on applies to audit"},
		{"a combined gate", Options{Op: "audit", URL: priced.srv.URL, MaxSpend: "0.05", FailOn: "undeclared>0 || conflicts>0"}, ExitUsage, "one factor at a time"},
		{"a bad spend cap", Options{Op: "audit", URL: priced.srv.URL, MaxSpend: "0.0000001"}, ExitUsage, "more than 6 decimals"},
		{"a service without a criteria index", Options{Op: "precheck", URL: priced.srv.URL, MaxSpend: "0.05", Criteria: "none/v1"}, ExitUnreachable, "/criteria/index"},
		{"a result that does not verify", Options{Op: "precheck", URL: tampered.srv.URL, MaxSpend: "0.05"}, ExitVerify, "does not verify"},
		{"no service", Options{Op: "precheck", URL: "http://127.0.0.1:1", MaxSpend: "0.05"}, ExitUnreachable, "could not be reached"},
	} {
		c.o.Out = filepath.Join(dir, "out.json")
		out := Run(context.Background(), c.o, []string{export}, nil)
		if out.Code() != c.code || out.Err == nil || !strings.Contains(out.Err.Error(), c.msg) || out.Summary.Error == nil || out.Summary.OK {
			t.Errorf("%s: exit %d, %v", c.name, out.Code(), out.Err)
		}
		var text bytes.Buffer
		out.WriteText(&text)
		if text.Len() != 0 {
			t.Errorf("%s: a failed session wrote words: %s", c.name, text.String())
		}
	}
}

func TestExitFor(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{usage(errors.New("x")), ExitUsage},
		{&client.Error{Kind: client.KindRefused}, ExitRefused},
		{&client.Error{Kind: client.KindProof}, ExitRefused},
		{&client.Error{Kind: client.KindSpendCap}, ExitSpendCap},
		{&client.Error{Kind: client.KindPayment}, ExitPayment},
		{&client.Error{Kind: client.KindVerify}, ExitVerify},
		{&client.Error{Kind: client.KindTransport}, ExitUnreachable},
		{context.Canceled, ExitUnreachable},
	} {
		if got := exitFor(c.err); got != c.code {
			t.Errorf("%v: exit %d, want %d", c.err, got, c.code)
		}
	}
}

func TestUSDCUnits(t *testing.T) {
	for in, want := range map[string]uint64{"0.05": 50000, "1": 1_000_000, "0": 0, "0.000001": 1} {
		if got, err := usdcUnits(in); err != nil || got != want {
			t.Errorf("%s: %d %v", in, got, err)
		}
	}
	for _, in := range []string{"-1", "abc", "0.0000001"} {
		if _, err := usdcUnits(in); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

func TestMemberWords(t *testing.T) {
	m := map[string]json.RawMessage{"status": json.RawMessage(`"ASSESSABLE"`), "reinserts": json.RawMessage(`1`),
		"rate": json.RawMessage(`{"numerator":1,"denominator":4,"value":"0.25"}`), "seqs": json.RawMessage(`[3,5]`)}
	if got, want := factorFigureWords("reopens", m), ", rate 0.25 (1 of 4), reinserts 1, seqs 3 5"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := factorFigureWords("scope_conflicts", map[string]json.RawMessage{}); got != "" {
		t.Errorf("a pre-check's factor: %q", got)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func keyInts(k ed25519.PrivateKey) []int {
	ints := make([]int, len(k))
	for i, b := range k {
		ints[i] = int(b)
	}
	return ints
}
