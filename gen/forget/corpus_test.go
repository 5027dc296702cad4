package forget

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	corpusOnce  sync.Once
	corpusCases []Case
	corpusErr   error
)

func corpus(t *testing.T) []Case {
	t.Helper()
	corpusOnce.Do(func() { corpusCases, corpusErr = Corpus() })
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return corpusCases
}

func outcomeOf(t *testing.T, c Case) Outcome {
	t.Helper()
	var o Outcome
	if err := json.Unmarshal(c.Expected, &o); err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return o
}

// TestCorpusDeterministic: the generator writes the same bytes twice, and the random
// logs depend on their seed.
func TestCorpusDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	ia, err := WriteCorpus(a, "")
	if err != nil {
		t.Fatal(err)
	}
	ib, err := WriteCorpus(b, "")
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(ia, ib) {
		t.Fatalf("two runs write different case lists")
	}
	for _, n := range ia {
		x, err1 := os.ReadFile(filepath.Join(a, "cases", n+".json"))
		y, err2 := os.ReadFile(filepath.Join(b, "cases", n+".json"))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Fatalf("%s differs between two runs", n)
		}
	}
	r1, err := randomCases(DefaultSeed, 5)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := randomCases(DefaultSeed+1, 5)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range r1 {
		if bytes.Equal(r1[i].Body, r2[i].Body) {
			same++
		}
	}
	if same == len(r1) {
		t.Fatalf("another seed gives the same logs")
	}
}

// TestCorpusShape: at least 150 cases, names say where they come from, every
// refusal code and every NOT ASSESSABLE reason of every factor is exercised, and the
// random logs reach reinserts, aliases, silent escalations and replay mismatches.
func TestCorpusShape(t *testing.T) {
	cases := corpus(t)
	if len(cases) < 150 {
		t.Fatalf("%d cases, want at least 150", len(cases))
	}
	rules := map[string]bool{}
	reasons := map[string]bool{}
	random := map[string]int{}
	for _, c := range cases {
		if !strings.HasPrefix(c.Name, "oracle-edge-FE-R-") && !strings.HasPrefix(c.Name, "oracle-random-") &&
			!(strings.HasPrefix(c.Name, "oracle-regression-FE-R-") && c.Provenance == ProvenanceRegression) {
			t.Errorf("case name %s does not say where it comes from", c.Name)
		}
		if len(c.Rules) == 0 {
			t.Errorf("%s: no rules", c.Name)
		}
		o := outcomeOf(t, c)
		if o.Refusal != nil {
			rules[o.Refusal.Rule] = true
			continue
		}
		for _, f := range FactorNames {
			if r, _ := o.Audit.Factors[f]["reason"].(string); r != "" {
				reasons[f+": "+r] = true
			}
		}
		// The member gates of reinserts_outside_envelope (FE-R-35, FE-R-37).
		for _, m := range []string{"outside", "silent"} {
			switch v := o.Audit.Factors["reinserts_outside_envelope"][m].(type) {
			case map[string]any:
				reasons["reinserts_outside_envelope."+m+": "+v["reason"].(string)] = true
			case float64:
				reasons["reinserts_outside_envelope."+m+": counted"] = true
			}
		}
		if strings.HasPrefix(c.Name, "oracle-random-") {
			for _, probe := range []struct{ factor, member string }{
				{"reinserts_after_forget", "reinserts"}, {"reinserts_outside_envelope", "outside"},
				{"reinserts_outside_envelope", "silent"}, {"reinserts_outside_envelope", "unattributed"},
				{"alias_reinserts", "aliases"}, {"reopens", "unchecked"}, {"reopens", "retired_writes"},
				{"reassignments", "unchecked"}, {"replay", "missing"}, {"replay", "extra"},
				{"replay", "version"}, {"replay", "duplicate"},
			} {
				if n, _ := o.Audit.Factors[probe.factor][probe.member].(float64); n > 0 {
					random[probe.factor+"."+probe.member]++
				}
			}
		}
	}
	for _, r := range RefusalRules {
		if !rules[r] {
			t.Errorf("no case answers refusal %s", r)
		}
	}
	gates := map[string][]string{
		"forget_envelopes":                   {reasonDoesNotApply, reasonNoForgets},
		"reinserts_after_forget":             {reasonDoesNotApply, reasonTerminal, reasonNewKeys, reasonNoForgets},
		"reinserts_outside_envelope":         {reasonDoesNotApply, reasonNewKeys, reasonNoForgets, reasonNoEnvelope},
		"reinserts_outside_envelope.outside": {reasonNoneJudged, "counted"},
		"reinserts_outside_envelope.silent":  {reasonNoneJudged, reasonNoPrincipals, "counted"},
		"alias_reinserts":                    {reasonDoesNotApply, reasonTerminal, reasonNewKeys, reasonNoForgets},
		"reopens":                            {reasonDoesNotApply, reasonTransitional, reasonNoForgets},
		"reassignments":                      {reasonDoesNotApply, reasonNoReassigns},
		"replay":                             {reasonDoesNotApply, reasonNoSnapshot},
	}
	for f, rs := range gates {
		for _, r := range rs {
			if !reasons[f+": "+r] {
				t.Errorf("no case makes %s NOT ASSESSABLE with %q", f, r)
			}
		}
	}
	for _, probe := range []string{"reinserts_after_forget.reinserts", "reinserts_outside_envelope.outside",
		"reinserts_outside_envelope.silent", "reinserts_outside_envelope.unattributed", "alias_reinserts.aliases",
		"reopens.unchecked", "reopens.retired_writes", "reassignments.unchecked", "replay.missing",
		"replay.extra", "replay.version", "replay.duplicate"} {
		if random[probe] == 0 {
			t.Errorf("no random log has %s > 0", probe)
		}
	}
}

// TestBodyCapEdges: the two body-cap edge cases sit exactly on either side of the cap.
func TestBodyCapEdges(t *testing.T) {
	for _, c := range corpus(t) {
		want := map[string]int{"oracle-edge-FE-R-2-body-over-cap": BodyBytesCap + 1, "oracle-edge-FE-R-2-body-exactly-at-cap-accepted": BodyBytesCap}[c.Name]
		if want == 0 {
			continue
		}
		b, err := c.SubmittedBytes()
		if err != nil || len(b) != want {
			t.Errorf("%s: %d bytes, want %d", c.Name, len(b), want)
		}
	}
}

func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "schema", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.NewCompiler().Compile(path)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func validateJSON(t *testing.T, s *jsonschema.Schema, v any) error {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// TestCorpusValidatesAgainstSchemas: every expected outcome, completed into the
// body the service would send (kind, ids, digest, time), validates against its
// published schema; every accepted body validates against the export schema.
func TestCorpusValidatesAgainstSchemas(t *testing.T) {
	report := compileSchema(t, "forget-envelope-report.schema.json")
	precheck := compileSchema(t, "forget-envelope-precheck.schema.json")
	refusal := compileSchema(t, "forget-envelope-refusal.schema.json")
	export := compileSchema(t, "forget-envelope-export.schema.json")
	crit, err := os.ReadFile("../../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(crit)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	const at = "2026-12-01T09:00:00Z"
	for _, c := range corpus(t) {
		o := outcomeOf(t, c)
		if o.Refusal != nil {
			r := map[string]any{"kind": "refusal", "rule": o.Refusal.Rule}
			if o.Refusal.Index != nil {
				r["index"] = *o.Refusal.Index
			}
			if o.Refusal.Cap != nil {
				r["cap"], r["observed"] = *o.Refusal.Cap, *o.Refusal.Observed
			}
			if err := validateJSON(t, refusal, r); err != nil {
				t.Errorf("%s: refusal: %v", c.Name, err)
			}
			continue
		}
		p := map[string]any{"kind": "precheck_result", "service": "scope-hygiene", "criteria_id": CriteriaID,
			"criteria_revision": CriteriaRevision, "criteria_digest": digest, "op": "precheck",
			"forget_mode": o.Precheck.ForgetMode, "events": o.Precheck.Events, "factors": o.Precheck.Factors, "checked_at": at}
		if err := validateJSON(t, precheck, p); err != nil {
			t.Errorf("%s: precheck: %v", c.Name, err)
		}
		a := o.Audit
		r := map[string]any{"kind": "audit_report", "service": "scope-hygiene", "criteria_id": CriteriaID,
			"criteria_revision": CriteriaRevision, "criteria_digest": digest, "op": "audit",
			"forget_mode": a.ForgetMode, "events": a.Events, "forgets": a.Forgets,
			"verdict_line": a.VerdictPrefix + " — " + at, "check_end": at,
			"scope_statement": a.ScopeStatement, "honesty_line": a.HonestyLine,
			"factors": a.Factors, "coverage": a.Coverage}
		if err := validateJSON(t, report, r); err != nil {
			t.Errorf("%s: report: %v", c.Name, err)
		}
		b, err := c.SubmittedBytes()
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: accepted body is not JSON for the schema library: %v", c.Name, err)
		}
		if err := export.Validate(inst); err != nil {
			t.Errorf("%s: accepted body fails the export schema: %v", c.Name, err)
		}
	}
}

// TestCheckModeFindsDifferences: Diff agrees with the oracle's own cases and names
// the member that a tampered case gets wrong; WriteCorpus keeps files it did not
// write and refuses hand cases that disagree.
func TestCheckModeFindsDifferences(t *testing.T) {
	cases := corpus(t)
	for _, c := range cases {
		d, err := Diff(c)
		if err != nil || len(d) != 0 {
			t.Fatalf("%s: the oracle disagrees with its own case: %v %v", c.Name, err, d)
		}
	}
	var worked Case
	for _, c := range cases {
		if c.Name == "oracle-edge-FE-R-41-worked-example" {
			worked = c
		}
	}
	tampered := worked
	tampered.Expected = json.RawMessage(strings.Replace(string(worked.Expected), `"silent":1`, `"silent":0`, 1))
	if string(tampered.Expected) == string(worked.Expected) {
		t.Fatal("tampering did not change the case")
	}
	d, err := Diff(tampered)
	if err != nil || len(d) != 1 || !strings.HasPrefix(d[0], "expected.audit.factors.reinserts_outside_envelope.silent:") {
		t.Fatalf("Diff of a tampered case: %v %v", err, d)
	}

	dir, hand := t.TempDir(), t.TempDir()
	foreign := filepath.Join(dir, "cases", "FE-R-99-someone-elses.json")
	if err := os.MkdirAll(filepath.Dir(foreign), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(foreign, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "cases", "oracle-random-9999.json")
	if err := os.WriteFile(stale, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	handCase := worked
	handCase.Name, handCase.Provenance = "FE-R-41-worked-example-by-hand", ProvenanceEdge
	b, _ := encodeFile(handCase)
	if err := os.WriteFile(filepath.Join(hand, handCase.Name+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := WriteCorpus(dir, hand)
	if err != nil {
		t.Fatal(err)
	}
	if names[0] != handCase.Name || len(names) != len(cases)+1 {
		t.Errorf("the hand case is not written first: %v", names[:2])
	}
	if _, err := os.Stat(filepath.Join(dir, "cases", handCase.Name+".json")); err != nil {
		t.Errorf("the verified hand case was not copied into cases/")
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a file the generator did not write was removed")
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("a stale oracle file was kept")
	}
	tampered.Name = handCase.Name
	b, _ = encodeFile(tampered)
	if err := os.WriteFile(filepath.Join(hand, handCase.Name+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteCorpus(t.TempDir(), hand); err == nil || !strings.Contains(err.Error(), "silent") {
		t.Errorf("a disagreeing hand case was accepted: %v", err)
	}
}

// TestCommittedCorpusFresh: the oracle's files committed under
// corpus/forget-envelope/cases are exactly what the generator writes now, and none
// is left over (run `go run ./gen/forget/cmd/gencorpus` after a change).
func TestCommittedCorpusFresh(t *testing.T) {
	dir := filepath.Join("..", "..", "corpus", "forget-envelope", "cases")
	want := map[string]bool{}
	for _, c := range corpus(t) {
		want[c.Name+".json"] = true
		b, err := encodeFile(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, c.Name+".json"))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s is missing or stale in %s", c.Name, dir)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), oraclePrefix) && !want[e.Name()] {
			t.Errorf("%s is no longer generated", e.Name())
		}
	}
}
