package evaluator_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// M is a JSON object under construction.
type M = map[string]any

// now is the fixed check-end time of every test evaluation.
var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const nowText = "2026-11-30T12:00:00Z"

var (
	psOnce    sync.Once
	defaultPS *rules.ProgramSet
	psErr     error
)

// shipped returns the program set compiled from the embedded criteria.yaml.
func shipped(t testing.TB) *rules.ProgramSet {
	t.Helper()
	psOnce.Do(func() { defaultPS, psErr = rules.Default() })
	if psErr != nil {
		t.Fatalf("rules.Default: %v", psErr)
	}
	return defaultPS
}

// R builds a full-text record: id, content_text, then member/value pairs.
func R(id, content string, kv ...any) M {
	m := M{"id": id, "content_text": content}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// X builds a full-text export of a family from records.
func X(family string, recs ...M) M {
	list := make([]any, len(recs))
	for i, r := range recs {
		list[i] = r
	}
	return M{"family": family, "form": "full_text", "records": list}
}

// with sets top-level members (variant, manifest...) and returns the export.
func with(x M, kv ...any) M {
	for i := 0; i+1 < len(kv); i += 2 {
		x[kv[i].(string)] = kv[i+1]
	}
	return x
}

// hashOnly turns a full-text export into its hash-only form: content_text becomes content_hash.
func hashOnly(x M) M {
	x["form"] = "hash_only"
	for _, r := range x["records"].([]any) {
		if m, ok := r.(M); ok {
			if c, ok := m["content_text"]; ok {
				delete(m, "content_text")
				m["content_hash"] = c
			}
		}
	}
	return x
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	if b, ok := v.([]byte); ok {
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// audit runs Audit and Precheck on an export that must be accepted, validates both outputs
// against the JSON Schemas and checks that the pre-check resolves every factor as the audit does.
func audit(t testing.TB, x any) *evaluator.Report {
	t.Helper()
	return auditWith(t, shipped(t), x)
}

func auditWith(t testing.TB, ps *rules.ProgramSet, x any) *evaluator.Report {
	t.Helper()
	body := marshal(t, x)
	rep, ref, err := evaluator.Audit(ps, body, now)
	if err != nil {
		t.Fatalf("Audit error: %v", err)
	}
	if ref != nil {
		t.Fatalf("Audit refused: %+v (record_index %v)", ref.Rule, deref(ref.RecordIndex))
	}
	pre, ref, err := evaluator.Precheck(ps, body, now)
	if err != nil || ref != nil {
		t.Fatalf("Precheck: refusal %v, error %v", ref, err)
	}
	validateOutput(t, "report", rep)
	validateOutput(t, "precheck", pre)
	if pre.Records != rep.Records || pre.Live != rep.Live {
		t.Errorf("precheck records/live %d/%d, audit %d/%d", pre.Records, pre.Live, rep.Records, rep.Live)
	}
	for f, st := range auditStatuses(rep) {
		if pre.Factors[f] != st {
			t.Errorf("factor %s: precheck %+v, audit %+v", f, pre.Factors[f], st)
		}
	}
	return rep
}

// auditStatuses reads each factor's status and reason from a report.
func auditStatuses(rep *evaluator.Report) map[string]evaluator.Status {
	f := rep.Factors
	return map[string]evaluator.Status{
		"scope_presence":       {Status: f.ScopePresence.Status, Reason: f.ScopePresence.Reason},
		"unscoped_rate":        {Status: f.UnscopedRate.Status, Reason: f.UnscopedRate.Reason},
		"cross_scope_clusters": {Status: f.CrossScopeClusters.Status, Reason: f.CrossScopeClusters.Reason},
		"scope_conflicts":      {Status: f.ScopeConflicts.Status, Reason: f.ScopeConflicts.Reason},
		"duplicates":           {Status: f.Duplicates.Status, Reason: f.Duplicates.Reason},
	}
}

// refuse runs Audit and Precheck on a body that must be refused and returns the refusal, after
// checking both agree and the refusal validates against its schema.
func refuse(t testing.TB, x any) *evaluator.Refusal {
	t.Helper()
	ps := shipped(t)
	body := marshal(t, x)
	rep, ref, err := evaluator.Audit(ps, body, now)
	if err != nil || rep != nil || ref == nil {
		t.Fatalf("Audit: want a refusal, got report %v, error %v", rep != nil, err)
	}
	pre, ref2, err := evaluator.Precheck(ps, body, now)
	if err != nil || pre != nil || ref2 == nil {
		t.Fatalf("Precheck: want a refusal, got result %v, error %v", pre != nil, err)
	}
	a, b := marshal(t, ref), marshal(t, ref2)
	if !bytes.Equal(a, b) {
		t.Errorf("Audit refusal %s, Precheck refusal %s", a, b)
	}
	validateOutput(t, "refusal", ref)
	return ref
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func iv(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// --- JSON Schemas -------------------------------------------------------------------------------

var (
	schemaOnce sync.Once
	schemas    map[string]*jsonschema.Schema
	schemaErr  error
)

func loadSchemas(t testing.TB) map[string]*jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		schemas = map[string]*jsonschema.Schema{}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		for _, name := range []string{"report", "precheck", "refusal"} {
			path := filepath.Join("..", "schema", name+".schema.json")
			b, err := os.ReadFile(path)
			if err != nil {
				schemaErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				schemaErr = err
				return
			}
			url := "https://scope-hygiene.invalid/schema/" + name + ".schema.json"
			if err := c.AddResource(url, doc); err != nil {
				schemaErr = err
				return
			}
		}
		for _, name := range []string{"report", "precheck", "refusal"} {
			s, err := c.Compile("https://scope-hygiene.invalid/schema/" + name + ".schema.json")
			if err != nil {
				schemaErr = err
				return
			}
			schemas[name] = s
		}
	})
	if schemaErr != nil {
		t.Fatalf("schemas: %v", schemaErr)
	}
	return schemas
}

// schemaCheck validates a JSON document against one of the schemas.
func schemaCheck(t testing.TB, name string, doc []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return loadSchemas(t)[name].Validate(inst)
}

// validateOutput marshals an output and requires it to validate against its schema.
func validateOutput(t testing.TB, name string, v any) {
	t.Helper()
	b := marshal(t, v)
	if err := schemaCheck(t, name, b); err != nil {
		t.Errorf("%s does not validate against %s.schema.json: %v\n%s", name, name, err, b)
	}
}

// --- small readers ------------------------------------------------------------------------------

// clusterIDs lists each cross-scope cluster's member ids joined by ",".
func clusterIDs(rep *evaluator.Report) []string {
	var out []string
	if rep.Factors.CrossScopeClusters.Clusters == nil {
		return nil
	}
	for _, c := range *rep.Factors.CrossScopeClusters.Clusters {
		ids := make([]string, len(c.Members))
		for i, m := range c.Members {
			ids[i] = m.ID
		}
		out = append(out, strings.Join(ids, ","))
	}
	return out
}

// onlyCluster returns the report's single cross-scope cluster.
func onlyCluster(t testing.TB, rep *evaluator.Report) evaluator.ClusterReport {
	t.Helper()
	f := rep.Factors.CrossScopeClusters
	if f.Clusters == nil || len(*f.Clusters) != 1 {
		t.Fatalf("want exactly one cross-scope cluster, got %s", marshal(t, f))
	}
	return (*f.Clusters)[0]
}

func noClusters(t testing.TB, rep *evaluator.Report) {
	t.Helper()
	f := rep.Factors.CrossScopeClusters
	if f.Clusters == nil || len(*f.Clusters) != 0 || iv(f.Candidate) != 0 {
		t.Fatalf("want no cross-scope cluster, got %s", marshal(t, f))
	}
}
