package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
)

func cmdTest(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("test", stderr)
	crit := fs.String("criteria", defaultCrit, "criteria file")
	dir := fs.String("corpus", defaultCorps, "corpus directory")
	runRE := fs.String("run", "", "run only cases whose name matches this regular expression")
	asJSON := fs.Bool("json", false, "print results as JSON")
	withCoverage := fs.Bool("coverage", false, "report rule and branch coverage; fail if a rule is never true or never false")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if ms, ok, err := mutLogCriteria(*crit); ok || err != nil {
		if err != nil {
			return err
		}
		return testMutLog(ms, corpusDir(*dir, flagSet(fs, "corpus"), ms), *runRE, *asJSON, *withCoverage, stdout)
	}
	ps, err := loadCriteria(*crit)
	if err != nil {
		return err
	}
	c, err := corpus.Load(os.DirFS(*dir))
	if err != nil {
		return fail(exitCorpus, "%w", err)
	}
	var filter *regexp.Regexp
	if *runRE != "" {
		if filter, err = regexp.Compile(*runRE); err != nil {
			return fail(exitUsage, "--run: %w", err)
		}
	}
	pin, pinErr := c.VerifyPin(ps.Criteria().Corpus.SHA256)
	var cov *corpus.Coverage
	var obs rules.Observer
	if *withCoverage {
		cov = corpus.NewCoverage(ps)
		obs = cov
	}
	progress := isTerminal(stderr)
	s := corpus.Summary{}
	for i := range c.Cases {
		cs := &c.Cases[i]
		if filter != nil && !filter.MatchString(cs.Name) {
			continue
		}
		if progress {
			fmt.Fprintf(stderr, "\r\033[K[%d/%d] %s", i+1, len(c.Cases), cs.Name)
		}
		r := corpus.RunCase(ps, cs, obs)
		if r.Passed() {
			s.Passed++
		} else {
			s.Failed++
		}
		s.Results = append(s.Results, r)
	}
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	return reportRun(stdout, ps.ID(), ps.Revision(), c.Index.ID, s, cov, pin, pinErr, *asJSON, filter != nil)
}

func printCoverage(w io.Writer, cov *corpus.Coverage, gaps []corpus.RuleCoverage, branchGaps int) {
	rep := cov.Report()
	branches := 0
	fmt.Fprintln(w, "coverage (rule: true/false evaluations, branches seen both ways):")
	for _, rc := range rep {
		both := 0
		for _, b := range rc.Branches {
			if b.SeenTrue && b.SeenFalse {
				both++
			}
		}
		branches += len(rc.Branches)
		flag := " "
		if !rc.Constant && (rc.True == 0 || rc.False == 0) {
			flag = "!"
		}
		fmt.Fprintf(w, " %s %-44s %7d/%-7d branches %d/%d\n", flag, rc.Path, rc.True, rc.False, both, len(rc.Branches))
		for _, b := range rc.Branches {
			if !b.SeenTrue || !b.SeenFalse {
				fmt.Fprintf(w, "      criteria.yaml:%d:%d never %s: %s\n", b.Line, b.Column, never(b), b.Text)
			}
		}
	}
	fmt.Fprintf(w, "rules seen both ways: %d/%d · branches seen both ways: %d/%d\n",
		len(rep)-len(gaps), len(rep), branches-branchGaps, branches)
}

func never(b corpus.BranchCoverage) string {
	switch {
	case !b.SeenTrue && !b.SeenFalse:
		return "evaluated"
	case !b.SeenTrue:
		return "true"
	}
	return "false"
}

func cmdGen(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", stderr)
	out := fs.String("o", defaultCorps, "corpus directory to write")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if err := gen.WriteCorpus(*out); err != nil {
		return fail(exitInput, "write corpus: %w", err)
	}
	c, err := corpus.Load(os.DirFS(*out))
	if err != nil {
		return fail(exitCorpus, "%w", err)
	}
	fmt.Fprintf(stdout, "wrote %d cases to %s, pin %s\n", len(c.Cases), *out, c.Index.SHA256)
	return nil
}

var pinLine = regexp.MustCompile(`(?m)^(  sha256: )"[^"\n]*"`)

func cmdPin(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pin", stderr)
	crit := fs.String("criteria", defaultCrit, "criteria file")
	dir := fs.String("corpus", defaultCorps, "corpus directory")
	write := fs.Bool("write", false, "write the recomputed pin into the criteria file's corpus block")
	reindex := fs.Bool("reindex", false, "mutation-log corpora: rewrite index.json to list every cases/*.json by name, then pin it")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if ms, ok, err := mutLogCriteria(*crit); ok || err != nil {
		if err != nil {
			return err
		}
		d := corpusDir(*dir, flagSet(fs, "corpus"), ms)
		if *reindex {
			if err := reindexMutLog(ms, d); err != nil {
				return err
			}
		}
		return pinMutLog(ms, *crit, d, *write, stdout)
	}
	c, err := corpus.Load(os.DirFS(*dir))
	if err != nil {
		return fail(exitCorpus, "%w", err)
	}
	if _, err := c.VerifyPin(""); err != nil {
		return &exitError{code: exitCorpus, err: err}
	}
	pin := c.Index.SHA256
	if *write {
		src, err := os.ReadFile(*crit)
		if err != nil {
			return fail(exitInput, "read criteria: %w", err)
		}
		if !pinLine.Match(src) {
			return fail(exitInput, "%s has no corpus sha256 line to update", *crit)
		}
		src = pinLine.ReplaceAll(src, []byte(`${1}"`+pin+`"`))
		if err := os.WriteFile(*crit, src, 0o644); err != nil {
			return fail(exitInput, "write criteria: %w", err)
		}
	}
	ps, err := loadCriteria(*crit)
	if err != nil {
		return err
	}
	if want := ps.Criteria().Corpus.SHA256; want != pin {
		return fail(exitCorpus, "%s names corpus pin %s, the corpus is %s (run: rules pin --write)", filepath.Base(*crit), want, pin)
	}
	fmt.Fprintf(stdout, "%s %s\n", c.Index.ID, pin)
	return nil
}

func cmdDiff(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("diff", stderr)
	dir := fs.String("corpus", defaultCorps, "corpus directory (for criteria of kind mutation-log: the newer file's own corpus unless given)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fail(exitUsage, "diff takes OLD.yaml NEW.yaml")
	}
	older, err := loadServed(pos[0])
	if err != nil {
		return err
	}
	newer, err := loadServed(pos[1])
	if err != nil {
		return err
	}
	if older.Kind() != newer.Kind() {
		return fail(exitUsage, "diff compares two revisions of one kind: %s is %s, %s is %s", pos[0], older.Kind(), pos[1], newer.Kind())
	}
	corpusPath := *dir
	if ms, ok := newer.(*rules.MutLogSet); ok {
		corpusPath = corpusDir(*dir, flagSet(fs, "corpus"), ms)
	}
	c, err := corpus.Load(os.DirFS(corpusPath))
	if err != nil {
		return fail(exitCorpus, "%w", err)
	}
	var names []string
	fields := 0
	for i := range c.Cases {
		cs := &c.Cases[i]
		body, err := cs.RequestBody()
		if err != nil {
			return fail(exitCorpus, "%w", err)
		}
		a, errA := outcomeOf(older, body)
		b, errB := outcomeOf(newer, body)
		changes := outcomeChanges(comparable(a, errA), comparable(b, errB))
		if len(changes) == 0 {
			continue
		}
		names = append(names, cs.Name)
		fields += len(changes)
		for _, ch := range changes {
			fmt.Fprintf(stdout, "%s  %s: %s -> %s\n", cs.Name, ch.field, ch.old, ch.new)
		}
	}
	fmt.Fprintf(stdout, "\n%s %s -> %s: %d of %d cases change outcome (%d fields)\n", newer.ID(), older.Revision(), newer.Revision(), len(names), len(c.Cases), fields)
	for _, n := range names {
		fmt.Fprintf(stdout, "  %s\n", n)
	}
	return nil
}

// loadServed compiles a criteria file of any kind.
func loadServed(path string) (rules.Served, error) {
	s, err := rules.LoadAnyFile(path)
	if err != nil {
		if errors.Is(err, rules.ErrCompile) {
			return nil, &exitError{code: exitCompile, err: err}
		}
		return nil, &exitError{code: exitInput, err: err}
	}
	return s, nil
}

// outcomeOf runs one export through the engine of the criteria's kind.
func outcomeOf(s rules.Served, body []byte) (map[string]any, error) {
	if ms, ok := s.(*rules.MutLogSet); ok {
		return corpus.OutcomeMutLog(ms, body, nil)
	}
	return corpus.Outcome(s.(*rules.ProgramSet), body, nil)
}

// change is one field of one case whose value differs between two criteria files.
type change struct{ field, old, new string }

// outcomeChanges lists, in field order, every leaf of two outcomes (generic JSON) that differs. A
// part (refusal, pre-check, audit) present on one side only is one line, not one per field.
func outcomeChanges(a, b any) []change {
	ma, _ := a.(map[string]any)
	mb, _ := b.(map[string]any)
	var out []change
	for _, part := range []string{"error", "refusal", "precheck", "audit"} {
		pa, oka := ma[part]
		pb, okb := mb[part]
		if oka == okb {
			continue
		}
		out = append(out, change{field: partWords[part], old: partText(part, pa, oka), new: partText(part, pb, okb)})
		delete(ma, part)
		delete(mb, part)
	}
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", ma, fa)
	flatten("", mb, fb)
	// verdict_prefix is the verdict line without its check-end time; the line says it once.
	delete(fa, "audit.verdict_prefix")
	delete(fb, "audit.verdict_prefix")
	keys := make([]string, 0, len(fa)+len(fb))
	for k := range fa {
		keys = append(keys, k)
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		va, oka := fa[k]
		vb, okb := fb[k]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "(absent)"
		}
		if !okb {
			vb = "(absent)"
		}
		out = append(out, change{field: fieldWords(k), old: va, new: vb})
	}
	return out
}

// partWords name the parts of an outcome.
var partWords = map[string]string{"error": "engine error", "refusal": "refusal", "precheck": "pre-check result", "audit": "audit report"}

// partText says a whole outcome part in words: a refusal by its rule, any other part as present.
func partText(part string, v any, present bool) string {
	if !present {
		return "(absent)"
	}
	if part == "refusal" {
		m, _ := v.(map[string]any)
		s := "refused " + leafText(m["rule"])
		if i, ok := m["record_index"]; ok {
			s += " at record index " + leafText(i)
		}
		if i, ok := m["index"]; ok {
			s += " at index " + leafText(i)
		}
		return s
	}
	return "(present)"
}

// flatten writes every leaf of a generic JSON value under its path (a.b[2].c); an empty object or
// list is a leaf of its own.
func flatten(path string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[path] = "nothing"
		}
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		if len(x) == 0 {
			out[path] = "none"
		}
		if scalars(x) {
			// A list of seqs, ids or keys reads as one value: "3, 5".
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = leafText(e)
			}
			if len(x) > 0 {
				out[path] = strings.Join(parts, ", ")
			}
			return
		}
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	default:
		out[path] = leafText(x)
	}
}

// scalars reports whether a list holds no object and no list.
func scalars(x []any) bool {
	for _, e := range x {
		switch e.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// leafText prints a JSON scalar as words: strings as they are, numbers in decimal.
func leafText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" {
			return `""`
		}
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// comparable drops what differs between any two criteria files (their digests) from an outcome.
func comparable(o map[string]any, err error) any {
	if err != nil {
		return map[string]any{"error": errors.Unwrap(err) != nil}
	}
	b, _ := json.Marshal(o)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, part := range []string{"precheck", "audit"} {
		if p, ok := m[part].(map[string]any); ok {
			delete(p, "criteria_digest")
			delete(p, "criteria_revision")
		}
	}
	return m
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// reportRun prints a corpus re-pass for people (failures field by field, coverage, the pin, the
// count) or as JSON, and turns it into the command's exit: every case passed, the pin matches, and
// on an unfiltered run every rule was seen both ways. Both kinds of criteria report through it.
func reportRun(stdout io.Writer, id, revision, corpusID string, s corpus.Summary, cov *corpus.Coverage, pin string, pinErr error, asJSON, filtered bool) error {
	var gaps []corpus.RuleCoverage
	branchGaps := 0
	if cov != nil {
		gaps, branchGaps = cov.Gaps()
	}
	if asJSON {
		out := map[string]any{"criteria": id, "revision": revision, "pin": pin, "pin_ok": pinErr == nil,
			"passed": s.Passed, "failed": s.Failed, "results": s.Results}
		if cov != nil {
			out["coverage"] = cov.Report()
		}
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		for _, r := range s.Results {
			if r.Passed() {
				continue
			}
			fmt.Fprintf(stdout, "FAIL %s\n", r.Case)
			if r.Err != "" {
				fmt.Fprintf(stdout, "    error: %s\n", r.Err)
			}
			for _, d := range r.Diffs {
				fmt.Fprintf(stdout, "    %s\n        expected: %s\n        got:      %s\n", d.Path, d.Expected, d.Got)
			}
		}
		if cov != nil {
			printCoverage(stdout, cov, gaps, branchGaps)
		}
		if pinErr != nil {
			fmt.Fprintf(stdout, "PIN %v\n", pinErr)
		} else {
			fmt.Fprintf(stdout, "corpus %s pinned %s\n", corpusID, pin)
		}
		fmt.Fprintf(stdout, "%d passed, %d failed\n", s.Passed, s.Failed)
	}
	switch {
	case s.Passed+s.Failed == 0:
		return fail(exitCorpus, "no case ran")
	case s.Failed > 0:
		return fail(exitCorpus, "%d case(s) failed", s.Failed)
	case pinErr != nil:
		return &exitError{code: exitCorpus, err: pinErr}
	case len(gaps) > 0 && !filtered:
		return fail(exitCorpus, "%d rule(s) never seen both ways", len(gaps))
	}
	return nil
}
