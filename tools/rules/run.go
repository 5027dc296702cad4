package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/rules"
)

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("rules "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse accepts flags before and after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &exitError{code: exitOK, err: errors.New("")}
			}
			return nil, &exitError{code: exitUsage, err: errors.New("")}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func loadCriteria(path string) (*rules.ProgramSet, error) {
	ps, err := rules.LoadFile(path)
	if err != nil {
		if errors.Is(err, rules.ErrCompile) {
			return nil, &exitError{code: exitCompile, err: err}
		}
		return nil, &exitError{code: exitInput, err: err}
	}
	return ps, nil
}

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	asJSON := fs.Bool("json", false, "print problems as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	path := defaultCrit
	if len(pos) > 0 {
		path = pos[0]
	}
	var ps rules.Served
	if path == "-" {
		// Criteria on standard input (an editor's buffer): problems name the file "stdin".
		src, rerr := io.ReadAll(stdin)
		if rerr != nil {
			return fail(exitInput, "read criteria: %w", rerr)
		}
		path = "stdin"
		ps, err = rules.LoadAny(path, src)
	} else {
		ps, err = rules.LoadAnyFile(path)
	}
	var pl rules.ProblemList
	switch {
	case errors.As(err, &pl):
		if *asJSON {
			stdout.Write(append(pl.JSON(), '\n'))
		} else {
			fmt.Fprintln(stdout, pl.Error())
			fmt.Fprintf(stdout, "%d problem(s)\n", len(pl))
		}
		return &exitError{code: exitCheck, err: errors.New("")}
	case err != nil:
		return &exitError{code: exitInput, err: err}
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"criteria_id": ps.ID(), "criteria_revision": ps.Revision(),
			"digest": ps.Digest(), "programs": len(programsOf(ps)), "problems": []any{}})
	}
	fmt.Fprintf(stdout, "%s: %s revision %s compiles: %d programs, %s\n", path, ps.ID(), ps.Revision(), len(programsOf(ps)), ps.Digest())
	return nil
}

// exportArgs are the parsed command line of a command on one export file (audit, precheck,
// explain) and, when the criteria file is of kind mutation-log, its compiled set and input.
type exportArgs struct {
	asJSON bool
	crit   string
	pos    []string
	ms     *rules.MutLogSet // nil unless the criteria file is of kind mutation-log
	body   []byte
	cs     *corpus.Case
}

// parseExportCmd parses the flags of command name (--json, described by jsonUsage, and
// --criteria) and, for a mutation-log criteria file, compiles it and reads the input.
func parseExportCmd(name, jsonUsage string, args []string, stderr io.Writer) (exportArgs, error) {
	fs := newFlags(name, stderr)
	asJSON := fs.Bool("json", false, jsonUsage)
	crit := fs.String("criteria", defaultCrit, "criteria file")
	pos, err := parse(fs, args)
	if err != nil {
		return exportArgs{}, err
	}
	a := exportArgs{asJSON: *asJSON, crit: *crit, pos: pos}
	ms, ok, err := mutLogCriteria(*crit)
	if err != nil {
		return exportArgs{}, err
	}
	if ok {
		if a.body, a.cs, err = readInput(name, pos); err != nil {
			return exportArgs{}, err
		}
		a.ms = ms
	}
	return a, nil
}

// cmdRun runs audit or precheck on one export file.
func cmdRun(op string, args []string, stdout, stderr io.Writer) error {
	if op == "audit" && wholeRequested(args) {
		return cmdWhole(args, stdout, stderr)
	}
	a, err := parseExportCmd(op, "print the result as JSON", args, stderr)
	if err != nil {
		return err
	}
	if a.ms != nil {
		return runMutLog(op, a.ms, a.body, a.cs, a.asJSON, stdout)
	}
	ps, body, cs, err := loadExport(op, a.crit, a.pos)
	if err != nil {
		return err
	}
	res, ref, err := evaluate(op, ps, body)
	switch {
	case err != nil:
		return fail(exitCompile, "%w", err)
	case ref != nil:
		if a.asJSON {
			_ = writeJSON(stdout, ref)
		} else {
			fmt.Fprintln(stdout, renderRefusal(ref))
		}
		if cs != nil && op == "audit" && !a.asJSON {
			// A case that expects this refusal passes.
			return checkCase(ps, cs, stdout)
		}
		return &exitError{code: exitInput, err: errors.New("")}
	}
	if a.asJSON {
		return writeJSON(stdout, res)
	}
	if rep, ok := res.(*evaluator.Report); ok {
		fmt.Fprint(stdout, renderReport(rep))
	} else {
		fmt.Fprint(stdout, renderPrecheck(res.(*evaluator.PrecheckResult)))
	}
	if cs != nil && op == "audit" {
		return checkCase(ps, cs, stdout)
	}
	return nil
}

// evaluate runs op (audit or precheck) on one export: its result (a *evaluator.Report or a
// *evaluator.PrecheckResult, nil if there is none), or the refusal.
func evaluate(op string, ps *rules.ProgramSet, body []byte) (any, *evaluator.Refusal, error) {
	now := time.Now()
	if op == "audit" {
		rep, ref, err := evaluator.Audit(ps, body, now)
		if rep == nil {
			return nil, ref, err
		}
		return rep, ref, err
	}
	pre, ref, err := evaluator.Precheck(ps, body, now)
	if pre == nil {
		return nil, ref, err
	}
	return pre, ref, err
}

func cmdExplain(args []string, stdout, stderr io.Writer) error {
	a, err := parseExportCmd("explain", "print the explanation as JSON", args, stderr)
	if err != nil {
		return err
	}
	if a.ms != nil {
		return explainMutLog(a.ms, a.body, a.asJSON, stdout)
	}
	ps, body, _, err := loadExport("explain", a.crit, a.pos)
	if err != nil {
		return err
	}
	ex, ref, err := evaluator.Explain(ps, body, time.Now())
	switch {
	case err != nil:
		return fail(exitCompile, "%w", err)
	case ref != nil:
		fmt.Fprintln(stdout, renderRefusal(ref))
		return &exitError{code: exitInput, err: errors.New("")}
	}
	if a.asJSON {
		return writeJSON(stdout, ex)
	}
	fmt.Fprint(stdout, renderExplanation(ex))
	return nil
}

// stdin is where "-" reads from (a variable so tests can supply it).
var stdin io.Reader = os.Stdin

// loadExport compiles the criteria and reads the one input a command takes: an export file, "-"
// for standard input, or a corpus case file, whose export is used (and returned as cs).
func loadExport(cmd, criteria string, pos []string) (*rules.ProgramSet, []byte, *corpus.Case, error) {
	if len(pos) != 1 {
		return nil, nil, nil, fail(exitUsage, "%s takes one input: an export file, - for standard input, or a corpus case file", cmd)
	}
	ps, err := loadCriteria(criteria)
	if err != nil {
		return nil, nil, nil, err
	}
	var body []byte
	if pos[0] == "-" {
		body, err = io.ReadAll(stdin)
	} else {
		body, err = os.ReadFile(pos[0])
	}
	if err != nil {
		return nil, nil, nil, fail(exitInput, "read export: %w", err)
	}
	cs := corpusCase(body)
	if cs == nil {
		return ps, body, nil, nil
	}
	export, err := cs.RequestBody()
	if err != nil {
		return nil, nil, nil, fail(exitInput, "corpus case: %w", err)
	}
	return ps, export, cs, nil
}

// corpusCase reads body as a corpus case file: an object with name, provenance and expected
// members and a body or body_base64. Anything else is an export.
func corpusCase(body []byte) *corpus.Case {
	var probe map[string]json.RawMessage
	if json.Unmarshal(body, &probe) != nil {
		return nil
	}
	for _, k := range []string{"name", "provenance", "expected"} {
		if _, ok := probe[k]; !ok {
			return nil
		}
	}
	_, b := probe["body"]
	_, b64 := probe["body_base64"]
	if !b && !b64 {
		return nil
	}
	var cs corpus.Case
	if json.Unmarshal(body, &cs) != nil {
		return nil
	}
	return &cs
}

// checkCase compares the engine's outcome for a corpus case with the case's expected output and
// says so in words; a difference is exit 4.
func checkCase(ps *rules.ProgramSet, cs *corpus.Case, stdout io.Writer) error {
	res := corpus.RunCase(ps, cs, nil)
	switch {
	case res.Err != "":
		fmt.Fprintf(stdout, "\ncorpus case %s: ERROR %s\n", cs.Name, res.Err)
	case len(res.Diffs) == 0:
		fmt.Fprintf(stdout, "\ncorpus case %s: the engine gives the expected output\n", cs.Name)
		return nil
	default:
		fmt.Fprintf(stdout, "\ncorpus case %s: %d field(s) differ from the expected output\n", cs.Name, len(res.Diffs))
		for _, d := range res.Diffs {
			fmt.Fprintf(stdout, "  %s  expected %s  got %s\n", d.Path, d.Expected, d.Got)
		}
	}
	return &exitError{code: exitCorpus, err: errors.New("")}
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func renderRefusal(r *evaluator.Refusal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "REFUSED (free, no payment): %s", r.Rule)
	if r.RecordIndex != nil {
		fmt.Fprintf(&b, " at record index %d", *r.RecordIndex)
	}
	if r.Cap != nil {
		fmt.Fprintf(&b, " (cap %d, observed %d)", *r.Cap, *r.Observed)
	}
	return b.String()
}
