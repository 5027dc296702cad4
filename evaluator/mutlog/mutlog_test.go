package mutlog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/rules"
)

var (
	once    sync.Once
	msVal   *rules.MutLogSet
	schemas map[string]*jsonschema.Schema
	setErr  error
)

func setup(t testing.TB) (*rules.MutLogSet, map[string]*jsonschema.Schema) {
	t.Helper()
	once.Do(func() {
		src, err := os.ReadFile("../../criteria/forget-envelope.yaml")
		if err != nil {
			setErr = err
			return
		}
		if msVal, setErr = rules.LoadMutationLog("forget-envelope.yaml", src); setErr != nil {
			return
		}
		c := jsonschema.NewCompiler()
		schemas = map[string]*jsonschema.Schema{}
		for _, n := range []string{"report", "precheck", "refusal", "export"} {
			url := "https://scope-hygiene.invalid/schema/forget-envelope-" + n + ".schema.json"
			b, err := os.ReadFile(filepath.Join("..", "..", "schema", "forget-envelope-"+n+".schema.json"))
			if err != nil {
				setErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				setErr = err
				return
			}
			if err := c.AddResource(url, doc); err != nil {
				setErr = err
				return
			}
			if schemas[n], setErr = c.Compile(url); setErr != nil {
				return
			}
		}
	})
	if setErr != nil {
		t.Fatal(setErr)
	}
	return msVal, schemas
}

func validate(t testing.TB, s *jsonschema.Schema, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err == nil {
		err = s.Validate(inst)
	}
	if err != nil {
		t.Fatalf("%v\n%.600s", err, b)
	}
}

// every runs the pre-check and the audit on one body and checks each answer against its
// published schema; it returns the audit's JSON (or the refusal's).
func every(t testing.TB, body []byte) []byte {
	t.Helper()
	ms, sc := setup(t)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	pre, ref, err := mutlog.Precheck(ms, body, now)
	if err != nil {
		if errors.Is(err, rules.ErrRuleFailed) {
			t.Fatalf("a rule failed at run time: %v", err)
		}
		t.Fatal(err)
	}
	rep, ref2, err := mutlog.Audit(ms, body, now)
	if err != nil {
		t.Fatal(err)
	}
	if (ref == nil) != (ref2 == nil) {
		t.Fatalf("pre-check and audit disagree on refusing: %v %v", ref, ref2)
	}
	if ref != nil {
		if !reflect.DeepEqual(ref, ref2) {
			t.Fatalf("two refusals: %+v %+v", ref, ref2)
		}
		validate(t, sc["refusal"], ref)
		b, _ := json.Marshal(ref)
		return b
	}
	validate(t, sc["precheck"], pre)
	validate(t, sc["report"], rep)
	b, _ := json.Marshal(rep)
	return b
}

// TestHandCasesValidate: every hand case's answers validate against the published schemas, and
// every accepted export validates against the input schema.
func TestHandCasesValidate(t *testing.T) {
	_, sc := setup(t)
	names, _ := filepath.Glob("../../corpus/forget-envelope/hand/*.json")
	if len(names) < 30 {
		t.Fatalf("%d hand cases", len(names))
	}
	for _, n := range names {
		var cs struct {
			Body     json.RawMessage `json:"body"`
			Expected map[string]any  `json:"expected"`
		}
		b, _ := os.ReadFile(n)
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatal(err)
		}
		if cs.Body == nil {
			continue // body_base64: exact bytes, run by the corpus harness
		}
		every(t, cs.Body)
		if _, refused := cs.Expected["refusal"]; !refused {
			var v any
			_ = json.Unmarshal(cs.Body, &v)
			validate(t, sc["export"], v)
		}
	}
}

const (
	canaryKey   = "CANARYkeyA1"
	canaryScope = "CANARYscopeB2"
	canaryPrinc = "CANARYprincipalC3"
	canaryValue = "CANARYvalueD4"
)

// TestNoContentInAnyAnswer plants canaries in every string of a log (key names, scope values,
// principal ids, envelope entries, grant values, unknown members) and finds none in any answer,
// accepted or refused.
func TestNoContentInAnyAnswer(t *testing.T) {
	key := map[string]any{"scope": map[string]any{"tenant": canaryScope}, "name": canaryKey}
	base := func() map[string]any {
		return map[string]any{"format": "mutation-log", "forget_mode": "transitional", "scope_dimensions": []any{"tenant"},
			"principals": []any{map[string]any{"id": canaryPrinc, "grants": []any{map[string]any{"tenant": canaryScope}}, "note": canaryValue}},
			"events": []any{
				map[string]any{"seq": 1, "op": "write", "key": key, "principal": canaryPrinc, "version": 1, "value": canaryValue},
				map[string]any{"seq": 2, "op": "forget", "key": key, "principal": canaryPrinc, "envelope": []any{canaryPrinc + "x"}},
				map[string]any{"seq": 3, "op": "write", "key": key, "principal": canaryPrinc, "version": 2, "value": canaryValue},
			},
			"snapshot": []any{map[string]any{"key": key, "version": 9}}}
	}
	bodies := [][]byte{}
	ok, _ := json.Marshal(base())
	bodies = append(bodies, ok)
	for _, breakIt := range []func(m map[string]any){
		func(m map[string]any) { m["format"] = canaryValue },
		func(m map[string]any) { m["forget_mode"] = canaryValue },
		func(m map[string]any) { m["scope_dimensions"] = []any{canaryValue, canaryValue} },
		func(m map[string]any) {
			m["principals"] = []any{map[string]any{"id": canaryPrinc}, map[string]any{"id": canaryPrinc}}
		},
		func(m map[string]any) { m["events"].([]any)[1].(map[string]any)["op"] = canaryValue },
		func(m map[string]any) { m["events"].([]any)[1].(map[string]any)["principal"] = canaryValue },
		func(m map[string]any) { m["events"].([]any)[1].(map[string]any)["envelope"] = canaryValue },
		func(m map[string]any) { m["snapshot"] = canaryValue },
		func(m map[string]any) {
			m["events"].([]any)[0].(map[string]any)["key"] = map[string]any{"scope": map[string]any{canaryScope: "x"}, "name": canaryKey}
		},
	} {
		m := base()
		breakIt(m)
		b, _ := json.Marshal(m)
		bodies = append(bodies, b)
	}
	bodies = append(bodies, []byte(`{"format":"`+canaryValue), []byte(canaryValue))
	refused := 0
	for _, b := range bodies {
		out := every(t, b)
		if bytes.Contains(out, []byte(`"kind":"refusal"`)) {
			refused++
		}
		for _, c := range []string{canaryKey, canaryScope, canaryPrinc, canaryValue} {
			if strings.Contains(string(out), c) {
				t.Errorf("canary %s in %s", c, out)
			}
		}
	}
	if refused != len(bodies)-1 {
		t.Fatalf("%d of %d broken bodies refused", refused, len(bodies)-1)
	}
}

// FuzzAudit: any bytes give a schema-valid refusal or schema-valid answers, never a panic or a
// rule failure, and never quote the input.
func FuzzAudit(f *testing.F) {
	names, _ := filepath.Glob("../../corpus/forget-envelope/hand/*.json")
	for _, n := range names {
		var cs struct {
			Body json.RawMessage `json:"body"`
		}
		b, _ := os.ReadFile(n)
		if json.Unmarshal(b, &cs) == nil && cs.Body != nil && len(cs.Body) < 20000 {
			f.Add([]byte(cs.Body))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out := every(t, body)
		if len(body) >= 12 && !bytes.Contains(body, []byte("mutation-log")) && bytes.Contains(out, body) {
			t.Fatalf("the answer quotes the input")
		}
	})
}

// TestReportSchemaRejectsANumberBesideNotAssessable: a NOT ASSESSABLE factor carries its reason
// and no number; a composite member is refused.
func TestReportSchemaRejectsANumberBesideNotAssessable(t *testing.T) {
	ms, sc := setup(t)
	body, _ := os.ReadFile("../../corpus/forget-envelope/hand/FE-R-30-no-principals.json")
	var cs struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(body, &cs); err != nil {
		t.Fatal(err)
	}
	rep, _, err := mutlog.Audit(ms, cs.Body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	for name, edit := range map[string][2]string{
		"number beside NOT ASSESSABLE": {`"status":"NOT ASSESSABLE","reason":"no principals: the export declares no principal table"`, `"status":"NOT ASSESSABLE","reason":"no principals: the export declares no principal table","outside":0`},
		"a score":                      {`"kind":"audit_report"`, `"kind":"audit_report","score":3`},
		"a rate beside NOT ASSESSABLE": {`"status":"NOT ASSESSABLE"`, `"status":"NOT ASSESSABLE","rate":{"numerator":0,"denominator":1,"value":"0.0%"}`},
	} {
		mut := strings.Replace(string(b), edit[0], edit[1], 1)
		if mut == string(b) {
			t.Fatalf("%s: the edit does not apply to %s", name, b)
		}
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(mut))
		if sc["report"].Validate(inst) == nil {
			t.Errorf("%s: the report schema accepts it", name)
		}
	}
}
