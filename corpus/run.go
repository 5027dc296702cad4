package corpus

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// Diff is one field where the engine and the expected output disagree.
type Diff struct {
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Got      string `json:"got"`
}

// Result is the outcome of one case.
type Result struct {
	Case  string `json:"case"`
	Diffs []Diff `json:"diffs,omitempty"`
	// Err is set when the case could not be run at all (it counts as failed).
	Err string `json:"error,omitempty"`
}

// Passed reports whether the case passed.
func (r Result) Passed() bool { return r.Err == "" && len(r.Diffs) == 0 }

// Summary is a whole run.
type Summary struct {
	Results        []Result `json:"results"`
	Passed, Failed int
}

// checkTime is the fixed time of corpus runs; no compared field depends on it.
var checkTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Run re-runs every case whose name matches filter (nil: all) through the engine, on every core
// (cases are independent and the engine is safe for concurrent use); results keep corpus order.
func Run(ps *rules.ProgramSet, c *Corpus, filter *regexp.Regexp, obs rules.Observer) Summary {
	return runAll(c, filter, func(cs *Case) Result { return RunCase(ps, cs, obs) })
}

// runAll runs one engine's case runner over every case whose name matches filter (nil: all), on
// every core; results keep corpus order. Both kinds of criteria re-pass their corpora through it.
func runAll(c *Corpus, filter *regexp.Regexp, runCase func(*Case) Result) Summary {
	var picked []*Case
	for i := range c.Cases {
		if filter == nil || filter.MatchString(c.Cases[i].Name) {
			picked = append(picked, &c.Cases[i])
		}
	}
	results := make([]Result, len(picked))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = runCase(picked[i])
			}
		}()
	}
	for i := range picked {
		next <- i
	}
	close(next)
	wg.Wait()
	s := Summary{Results: results}
	for _, r := range results {
		if r.Passed() {
			s.Passed++
		} else {
			s.Failed++
		}
	}
	return s
}

// RunCase runs one case and compares every field the case expects.
func RunCase(ps *rules.ProgramSet, cs *Case, obs rules.Observer) Result {
	return runCase(cs, func(body []byte) (map[string]any, error) { return Outcome(ps, body, obs) })
}

// runCase runs one case through an engine's outcome function and compares every field the case
// expects; both kinds of criteria re-pass their cases through it.
func runCase(cs *Case, outcome func([]byte) (map[string]any, error)) Result {
	res := Result{Case: cs.Name}
	body, err := cs.RequestBody()
	if err != nil {
		res.Err = err.Error()
		return res
	}
	var want map[string]any
	if err := json.Unmarshal(cs.Expected, &want); err != nil {
		res.Err = "expected: " + err.Error()
		return res
	}
	got, err := outcome(body)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	res.Diffs = Compare(want, got)
	return res
}

// Compare lists the differences between an expected outcome and the engine's. It compares, for
// each part the expectation has (refusal, precheck, audit), every field of that part the
// expectation names, and reports a part present on one side only.
func Compare(want, got map[string]any) []Diff {
	var diffs []Diff
	for _, part := range []string{"refusal", "precheck", "audit"} {
		w, wok := want[part]
		g, gok := got[part]
		switch {
		case !wok && !gok:
			continue
		case !wok || !gok:
			diffs = append(diffs, Diff{Path: part, Expected: render(w, wok), Got: render(g, gok)})
			continue
		}
		wm, _ := w.(map[string]any)
		gm, _ := g.(map[string]any)
		for k := range gm {
			if _, ok := wm[k]; !ok {
				delete(gm, k)
			}
		}
		diffs = append(diffs, diff(part, wm, gm)...)
	}
	return diffs
}

// Outcome runs the engine on one body and returns what a case expects, as generic JSON:
// {"refusal": {...}} or {"precheck": {...}, "audit": {...}} with verdict_prefix in the audit.
func Outcome(ps *rules.ProgramSet, body []byte, obs rules.Observer) (map[string]any, error) {
	return outcome(ps, body, evaluator.Options{Observer: obs}, evaluator.PrecheckWith, evaluator.AuditWith,
		func(r *evaluator.Refusal) string { return r.Rule },
		func(r *evaluator.Report) string { return strings.TrimSuffix(r.VerdictLine, " — "+r.CheckEnd) })
}

// outcome is Outcome for either engine: precheck and audit run it on set and body with opts at
// checkTime, rule names the rule a refusal cites and prefix is a report's verdict line without
// its check end.
func outcome[Set, Opts, Pre, Ref, Rep any](set Set, body []byte, opts Opts,
	precheck func(Set, []byte, time.Time, Opts) (*Pre, *Ref, error),
	audit func(Set, []byte, time.Time, Opts) (*Rep, *Ref, error),
	rule func(*Ref) string, prefix func(*Rep) string) (map[string]any, error) {
	pre, ref, err := precheck(set, body, checkTime, opts)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if ref != nil {
		return map[string]any{"refusal": generic(ref)}, nil
	}
	rep, ref, err := audit(set, body, checkTime, opts)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if ref != nil {
		return nil, fmt.Errorf("engine: audit refused (%s) what the pre-check accepted", rule(ref))
	}
	a := generic(rep)
	a["verdict_prefix"] = prefix(rep)
	return map[string]any{"precheck": generic(pre), "audit": a}, nil
}

func generic(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func render(v any, present bool) string {
	if !present {
		return "<absent>"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// diff lists every differing leaf between two generic JSON values, with its path.
func diff(root string, want, got any) []Diff {
	if reflect.DeepEqual(want, got) {
		return nil // the common case; the path reporter only runs on a mismatch
	}
	r := &pathReporter{root: root}
	cmp.Equal(want, got, cmp.Reporter(r))
	return r.diffs
}

// pathReporter is a cmp.Reporter that records each unequal leaf with a readable path.
type pathReporter struct {
	root  string
	path  cmp.Path
	diffs []Diff
}

func (r *pathReporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *pathReporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *pathReporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	var b strings.Builder
	b.WriteString(r.root)
	for _, st := range r.path[1:] {
		switch s := st.(type) {
		case cmp.MapIndex:
			fmt.Fprintf(&b, ".%v", s.Key())
		case cmp.SliceIndex:
			fmt.Fprintf(&b, "[%d]", s.Key())
		}
	}
	vx, vy := r.path.Last().Values()
	r.diffs = append(r.diffs, Diff{Path: b.String(), Expected: renderValue(vx), Got: renderValue(vy)})
}

func renderValue(v reflect.Value) string {
	if !v.IsValid() {
		return "<absent>"
	}
	return render(v.Interface(), true)
}
