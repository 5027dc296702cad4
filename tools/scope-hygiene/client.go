package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/client"
	"github.com/scopehygiene/scope-hygiene/client/session"
	"github.com/scopehygiene/scope-hygiene/pack"
)

// Exit codes of `scope-hygiene client` (also in clientUsage and the README): the session's.
const (
	exitOK            = session.ExitOK
	exitGateCrossed   = session.ExitGateCrossed
	exitUsage         = session.ExitUsage
	exitRefused       = session.ExitRefused
	exitSpendCap      = session.ExitSpendCap
	exitPayment       = session.ExitPayment
	exitVerify        = session.ExitVerify
	exitNotAssessable = session.ExitNotAssessable
	exitUnreachable   = session.ExitUnreachable
)

const clientUsage = `usage: scope-hygiene client <precheck|audit> [flags] FILE...

  precheck FILE                      the free pre-check (proves -wallet with sign-in-with-x when asked)
  audit FILE -wallet KEY.json        a paid audit: reads the 402, pays with x402 exact on Solana,
                                     follows a pending settlement, saves and verifies the report
  audit --from letta-af agent.af     packs a native dump first (hash-only unless -full-text)
  audit log.json                     a mutation log ("format": "mutation-log") goes to the rule set
                                     the service serves for that format (GET /criteria/index; no
                                     -wallet needed when it is unpriced); -criteria ID picks one by id
  audit -fail-on undeclared>0 ...    runs the free pre-check first and pays nothing when it states
                                     the factor NOT ASSESSABLE (exit 7)

Progress goes to stderr, one line per step; the result summary to stdout (-json: one JSON object).
The signed result is saved byte for byte (-o) with the /criteria document beside it, so
"scope-hygiene verify -key <criteria file> <result>" re-checks it offline.

exit codes:
  0  verified result (and -fail-on not crossed)
  1  -fail-on: the named figure crossed the threshold
  2  usage (e.g. a priced audit without -wallet), or an unreadable input file or wallet
  3  the service refused the export or the call (the rule id is printed)
  4  the 402 asks more than -max-spend: nothing was signed
  5  the payment was refused or not settled (the transaction id is printed when one was sent)
  6  the signed result does not verify against the key /criteria publishes
  7  -fail-on names a factor the pre-check or the report states NOT ASSESSABLE: there is no figure
     to compare (when the pre-check says so, nothing is paid)
  8  the service or the chain could not be reached, or answered unexpectedly

flags:
`

// clientOpts are the session's options and how the outcome is printed.
type clientOpts struct {
	session.Options
	jsonOut bool // one JSON object on stdout instead of words
}

// clientSummary is the -json output.
type clientSummary = session.Summary

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

func clientCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o clientOpts
	op := "precheck|audit"
	if len(args) > 0 && (args[0] == "precheck" || args[0] == "audit") {
		op = args[0]
	}
	fs := clientFlags(op, &o)
	// -h prints the usage and every flag on stdout and succeeds; a usage error prints them on
	// stderr and exits 2.
	usageTo := func(w io.Writer) { fs.SetOutput(w); fs.Usage(); fs.SetOutput(stderr) }
	if len(args) == 0 || (op == "precheck|audit" && !isHelp(args[0])) {
		if len(args) > 0 {
			fmt.Fprintf(stderr, "scope-hygiene client: unknown command %q\n", args[0])
		}
		usageTo(stderr)
		return exitUsage
	}
	if isHelp(args[0]) {
		usageTo(stdout)
		return exitOK
	}
	files, err := parseInterleaved(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		usageTo(stdout)
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	o.Op = op
	var out *session.Outcome
	if len(files) == 0 || (o.From == "" && len(files) != 1) {
		usageTo(stderr)
		out = session.Refuse(op, errors.New("give one export file, or -from SOURCE and its dump files"))
	} else {
		progress := func(line string) { fmt.Fprintln(stderr, "scope-hygiene client: "+line) }
		out = session.Run(ctx, o.Options, files, progress)
	}
	return printOutcome(out, o.jsonOut, stdout, stderr)
}

// parseInterleaved parses flags before and after the file names ("audit export.json -wallet
// k.json") and returns the file names.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return files, nil
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// printOutcome prints the outcome (one JSON object, or the words and the failure) and returns its
// exit code.
func printOutcome(out *session.Outcome, jsonOut bool, stdout, stderr io.Writer) int {
	if jsonOut {
		out.WriteJSON(stdout)
		return out.Code()
	}
	out.WriteText(stdout)
	if out.Err != nil {
		fmt.Fprintln(stderr, "scope-hygiene client: FAIL: "+out.Err.Error())
	}
	return out.Code()
}

// clientFlags declares the client's flags on a new set whose Usage prints clientUsage and them.
func clientFlags(op string, o *clientOpts) *flag.FlagSet {
	fs := flag.NewFlagSet("client "+op, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { fmt.Fprint(fs.Output(), clientUsage); fs.PrintDefaults() }
	defURL := os.Getenv("SCOPE_HYGIENE_URL")
	if defURL == "" {
		defURL = "http://127.0.0.1:8080"
	}
	fs.StringVar(&o.URL, "url", defURL, "base URL of the service (env SCOPE_HYGIENE_URL)")
	fs.StringVar(&o.Wallet, "wallet", "", "solana-keygen JSON keypair: proves the caller and pays (required by a priced audit)")
	fs.StringVar(&o.RPC, "rpc", "", "Solana JSON-RPC URL used to build the payment (default: the public endpoint of the network the 402 names)")
	fs.StringVar(&o.Out, "o", "", "where to save the signed result (default scope-hygiene-<op>.json)")
	fs.StringVar(&o.From, "from", "", "pack a native dump first: "+sourceList())
	fs.BoolVar(&o.FullText, "full-text", false, "with -from: send content text (default: hash-only, no content leaves this machine)")
	fs.StringVar(&o.FailOn, "fail-on", "", "audit: exit 1 when one figure crosses your threshold, e.g. undeclared>0 (one factor at a time; figures: "+strings.Join(client.GateNames(), ", ")+", or factor.member); the free pre-check runs first, and a factor it states NOT ASSESSABLE is never paid for (exit 7)")
	fs.StringVar(&o.MaxSpend, "max-spend", "0.05", "the most one audit may cost, in USDC; a 402 asking more is refused before signing")
	fs.DurationVar(&o.PendingFor, "pending-for", 2*time.Minute, "how long to follow a pending settlement before giving up (the transaction id is printed)")
	fs.StringVar(&o.Payment, "payment", "", "audit: re-send a payment kept from an earlier run (<o>.payment) to collect the report it paid for, without paying again")
	fs.BoolVar(&o.jsonOut, "json", false, "print one JSON object on stdout (for machines): the outcome, the verdict line and every factor as signed")
	fs.StringVar(&o.Criteria, "criteria", "", "the rule set, by criteria id from GET /criteria/index (default: the primary criteria; for a mutation log, the rule set served for its format)")
	return fs
}

func sourceList() string {
	s := make([]string, len(pack.Sources))
	for i, src := range pack.Sources {
		s[i] = string(src)
	}
	return strings.Join(s, ", ")
}
