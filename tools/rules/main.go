// Command rules is the criteria author's tool: compile criteria, run an export locally, re-pass the
// corpus with coverage, regenerate and pin the corpus from the oracle, explain a verdict, and diff
// two criteria revisions.
//
// Exit codes:
//
//	0  success
//	1  `check` found problems in the criteria
//	2  usage error
//	3  the criteria do not compile (any command but `check`)
//	4  the corpus failed: a case failed or errored, the run was empty, the pin did not match, or
//	   (with --coverage) a rule was never seen true or never seen false
//	5  an input could not be read, or an export was refused (audit, precheck, explain)
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/scopehygiene/scope-hygiene/internal/buildinfo"
)

const (
	exitOK       = 0
	exitCheck    = 1
	exitUsage    = 2
	exitCompile  = 3
	exitCorpus   = 4
	exitInput    = 5
	defaultCrit  = "criteria.yaml"
	defaultCorps = "corpus"
)

// exitError carries an exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

var commands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"check":    cmdCheck,
	"audit":    func(a []string, o, e io.Writer) error { return cmdRun("audit", a, o, e) },
	"precheck": func(a []string, o, e io.Writer) error { return cmdRun("precheck", a, o, e) },
	"explain":  cmdExplain,
	"test":     cmdTest,
	"gen":      cmdGen,
	"pin":      cmdPin,
	"diff":     cmdDiff,
}

const usage = `usage: rules <command> [flags] [args]

commands:
  check [FILE|-]               compile criteria (default criteria.yaml, - for standard input); exit 1 on any problem
  audit INPUT [--json]         audit an export locally; a corpus case is also compared with its expected output
  audit --whole INPUT... [--json]
                               a local whole-store check beyond the published caps (never a signed
                               audit): one export of any size, or its parts (files in order, a
                               directory of *.json parts, - for standard input), analysed as one
  precheck INPUT [--json]      pre-check an export locally
  explain INPUT [--json]       why the report reads as it does, in words: each predicate or decision by
                               name and text, each cluster fact by meaning, each precedence step by id and
                               name, each gate by reason and expression
                               INPUT is an export file, - for standard input, or a corpus case file
  test [--run RE] [--json] [--coverage]
                               re-run the corpus through the engine
  gen [-o DIR]                 regenerate the corpus from the independent oracle (gen/)
  pin [--write]                recompute the corpus pin and check it against index.json and the criteria
  diff OLD.yaml NEW.yaml       which corpus cases change outcome between two revisions of one kind: one
                               line per case and field in words (case  where: old -> new), then a summary
  -version                     module version, VCS revision and the embedded criteria's id, revision, digest

Most commands take --criteria FILE (default criteria.yaml) and --corpus DIR (default corpus).
Run "rules <command> -h" for its flags. Exit codes: 0 ok, 1 check problems, 2 usage,
3 criteria do not compile, 4 corpus failed, 5 unreadable input or refused export. A non-zero
exit also prints "rules: exit N: <meaning>" on stderr (go run reports every failure as 1; build
the binary to script on exit codes).
`

// exitMeaning says what each exit code means; a non-zero exit prints it on stderr, because
// `go run` reports every non-zero exit as 1.
var exitMeaning = map[int]string{
	exitCheck:   "check found problems in the criteria",
	exitUsage:   "usage error",
	exitCompile: "the criteria do not compile",
	exitCorpus:  "the corpus failed",
	exitInput:   "unreadable input or a refused export",
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs one command and returns its exit code, saying it on stderr when it is not 0.
func run(args []string, stdout, stderr io.Writer) int {
	code := dispatch(args, stdout, stderr)
	if code != exitOK {
		fmt.Fprintf(stderr, "rules: exit %d: %s\n", code, exitMeaning[code])
	}
	return code
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "-version" || args[0] == "--version" {
		if buildinfo.Print("rules", stdout, stderr) != 0 {
			return exitCompile
		}
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "rules: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	err := cmd(args[1:], stdout, stderr)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err.Error() != "" {
			fmt.Fprintln(stderr, "rules:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "rules:", err)
	return exitUsage
}
