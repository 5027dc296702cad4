// Command scope-hygiene serves the memory-scope-hygiene/v1 criteria (and every criteria/*.yaml
// beside it, such as memory-forget-envelope/v1) over HTTP and checks their signed results offline.
//
//	scope-hygiene serve    run the HTTP service (embedded defaults: SQLite and a dev key under ./var/)
//	scope-hygiene verify   check a saved signed result against the published key
//	scope-hygiene ledger   print the ledger rows (JSON lines) or the tripwire figures
//	scope-hygiene client   a caller: pre-check, or pay for an audit and verify the signed report
//	scope-hygiene dev-chain  a local Solana (LiteSVM) and the service paid on it, for one machine
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/scopehygiene/scope-hygiene/internal/buildinfo"
)

const usage = `usage: scope-hygiene <command> [flags]

commands:
  serve    run the HTTP service (flags and SCOPE_HYGIENE_* env vars: scope-hygiene serve -h)
  verify   verify a saved signed result offline: scope-hygiene verify -key <criteria.json|key.pem> <result.json>
  ledger   print the ledger as JSON lines, or the kill line's tripwires since Day-0: scope-hygiene ledger [-tripwires [-json]]
           ledger reconcile-cad -rates <csv> | ledger refund (-id N | -tx SIG) | ledger tripwires [-json] [-window-days 30]
  client   a caller: scope-hygiene client precheck FILE | client audit FILE -wallet KEY.json (client -h);
           a mutation log goes to the rule set served for its format (GET /criteria/index)
  dev-chain  a local Solana (LiteSVM) with a funded payer, and serve paid on it (scripts/dev-chain.sh)
  -version   the module version, VCS revision and embedded criteria (id, revision, digest)

"scope-hygiene <command> -h" lists the command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	commands := map[string]func(args []string, stdout, stderr io.Writer) int{
		"serve":     func(a []string, o, e io.Writer) int { return serve(ctx, a, o, e) },
		"verify":    verify,
		"ledger":    func(a []string, o, e io.Writer) int { return ledger(ctx, a, o, e) },
		"client":    func(a []string, o, e io.Writer) int { return clientCmd(ctx, a, o, e) },
		"dev-chain": func(a []string, o, e io.Writer) int { return devChain(ctx, a, o, e) },
	}
	if cmd, ok := commands[args[0]]; ok {
		// "<command> [subcommand] -h" prints the usage and every flag on stdout and succeeds,
		// though a command's flag set reports -h as a usage error on its error writer.
		if help := isHelp(args[len(args)-1]); help && (len(args) == 2 || len(args) == 3 && args[0] == "ledger") {
			if rc := cmd(args[1:], stdout, stdout); rc == 0 || rc == exitUsage {
				return 0
			}
			return 1
		}
		return cmd(args[1:], stdout, stderr)
	}
	switch args[0] {
	case "-version", "--version", "version":
		return buildinfo.Print("scope-hygiene", stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "unknown command %q\n%s", args[0], usage)
	return 2
}
