package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/tools/rules/internal/pin"
	"github.com/scopehygiene/scope-hygiene/tools/rules/internal/repass"
	"github.com/scopehygiene/scope-hygiene/tools/rules/internal/revdiff"
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
		return repassCorpus(ms, corpusDir(*dir, flagSet(fs, "corpus"), ms), *runRE, *withCoverage, *asJSON, nil, stdout)
	}
	ps, err := loadCriteria(*crit)
	if err != nil {
		return err
	}
	var progress io.Writer
	if isTerminal(stderr) {
		progress = stderr
	}
	return repassCorpus(ps, *dir, *runRE, *withCoverage, *asJSON, progress, stdout)
}

// repassCorpus loads the corpus in dir, re-passes through s the cases runRE picks (all when it is
// empty) and prints the run. progress, when set, shows the case running.
func repassCorpus(s rules.Served, dir, runRE string, withCoverage, asJSON bool, progress, stdout io.Writer) error {
	c, err := corpus.Load(os.DirFS(dir))
	if err != nil {
		return fail(exitCorpus, "%w", err)
	}
	opt := repass.Options{Coverage: withCoverage}
	if runRE != "" {
		if opt.Filter, err = regexp.Compile(runRE); err != nil {
			return fail(exitUsage, "--run: %w", err)
		}
	}
	if progress != nil {
		opt.Progress = func(i, n int, name string) { fmt.Fprintf(progress, "\r\033[K[%d/%d] %s", i, n, name) }
	}
	r, err := repass.Corpus(s, c, opt)
	if err != nil {
		return err
	}
	if progress != nil {
		fmt.Fprint(progress, "\r\033[K")
	}
	return reportRun(stdout, r, asJSON)
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
			idx := corpus.Index{ID: ms.Criteria().Corpus.ID, CriteriaID: ms.ID(), CriteriaRevision: ms.Revision()}
			if err := pin.Reindex(d, idx); err != nil {
				return pinFailure(err)
			}
		}
		return pinMutLog(ms, *crit, d, *write, stdout)
	}
	c, sum, err := pin.Of(*dir)
	if err != nil {
		return pinFailure(err)
	}
	if *write {
		if err := pin.Write(*crit, sum); err != nil {
			return pinFailure(err)
		}
	}
	ps, err := loadCriteria(*crit)
	if err != nil {
		return err
	}
	if want := ps.Criteria().Corpus.SHA256; want != sum {
		return fail(exitCorpus, "%s names corpus pin %s, the corpus is %s (run: rules pin --write)", filepath.Base(*crit), want, sum)
	}
	fmt.Fprintf(stdout, "%s %s\n", c.Index.ID, sum)
	return nil
}

// pinFailure is the exit of a failed pin step: a failure of the corpus itself is exit 4, a file
// that could not be read or written exit 5.
func pinFailure(err error) error {
	var ce *pin.CorpusError
	if errors.As(err, &ce) {
		return &exitError{code: exitCorpus, err: err}
	}
	return &exitError{code: exitInput, err: err}
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
	changed, err := revdiff.Corpus(older, newer, c)
	fields := 0
	for _, cc := range changed {
		fields += len(cc.Changes)
		for _, ch := range cc.Changes {
			fmt.Fprintf(stdout, "%s  %s: %s -> %s\n", cc.Case, ch.Field, ch.Old, ch.New)
		}
	}
	if err != nil {
		return fail(exitCorpus, "%w", err)
	}
	fmt.Fprintf(stdout, "\n%s %s -> %s: %d of %d cases change outcome (%d fields)\n", newer.ID(), older.Revision(), newer.Revision(), len(changed), len(c.Cases), fields)
	for _, cc := range changed {
		fmt.Fprintf(stdout, "  %s\n", cc.Case)
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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// reportRun prints a corpus re-pass for people (failures field by field, coverage, the pin, the
// count) or as JSON, and turns its verdict into the command's exit. Both kinds of criteria report
// through it.
func reportRun(stdout io.Writer, r *repass.Run, asJSON bool) error {
	if asJSON {
		out := map[string]any{"criteria": r.ID, "revision": r.Revision, "pin": r.Pin, "pin_ok": r.PinErr == nil,
			"passed": r.Summary.Passed, "failed": r.Summary.Failed, "results": r.Summary.Results}
		if r.Coverage != nil {
			out["coverage"] = r.Coverage.Report()
		}
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		printRun(stdout, r)
	}
	if err := r.Verdict(); err != nil {
		return &exitError{code: exitCorpus, err: err}
	}
	return nil
}

// printRun prints a corpus re-pass for people: each failed case field by field, the coverage,
// the pin and the count.
func printRun(w io.Writer, r *repass.Run) {
	for _, res := range r.Summary.Results {
		if res.Passed() {
			continue
		}
		fmt.Fprintf(w, "FAIL %s\n", res.Case)
		if res.Err != "" {
			fmt.Fprintf(w, "    error: %s\n", res.Err)
		}
		for _, d := range res.Diffs {
			fmt.Fprintf(w, "    %s\n        expected: %s\n        got:      %s\n", d.Path, d.Expected, d.Got)
		}
	}
	if r.Coverage != nil {
		gaps, branchGaps := r.Gaps()
		printCoverage(w, r.Coverage, gaps, branchGaps)
	}
	if r.PinErr != nil {
		fmt.Fprintf(w, "PIN %v\n", r.PinErr)
	} else {
		fmt.Fprintf(w, "corpus %s pinned %s\n", r.CorpusID, r.Pin)
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", r.Summary.Passed, r.Summary.Failed)
}
