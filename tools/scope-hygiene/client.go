package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gagliardetto/solana-go/rpc"

	"github.com/scopehygiene/scope-hygiene/client"
	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// Exit codes of `scope-hygiene client` (also in clientUsage and the README).
const (
	exitOK            = 0
	exitGateCrossed   = 1
	exitUsage         = 2
	exitRefused       = 3
	exitSpendCap      = 4
	exitPayment       = 5
	exitVerify        = 6
	exitNotAssessable = 7
	exitUnreachable   = 8
)

const clientUsage = `usage: scope-hygiene client <precheck|audit> [flags] FILE...

  precheck FILE                      the free pre-check (proves -wallet with sign-in-with-x when asked)
  audit FILE -wallet KEY.json        a paid audit: reads the 402, pays with x402 exact on Solana,
                                     follows a pending settlement, saves and verifies the report
  audit --from letta-af agent.af     packs a native dump first (hash-only unless -full-text)

Progress goes to stderr, one line per step; the result summary to stdout (-json: one JSON object).
The signed result is saved byte for byte (-o) with the /criteria document beside it, so
"scope-hygiene verify -key <criteria file> <result>" re-checks it offline.

exit codes:
  0  verified result (and -fail-on not crossed)
  1  -fail-on: the named figure crossed the threshold
  2  usage, or an unreadable input file or wallet
  3  the service refused the export or the call (the rule id is printed)
  4  the 402 asks more than -max-spend: nothing was signed
  5  the payment was refused or not settled (the transaction id is printed when one was sent)
  6  the signed result does not verify against the key /criteria publishes
  7  -fail-on names a factor the report states NOT ASSESSABLE: there is no figure to compare
  8  the service or the chain could not be reached, or answered unexpectedly

flags:
`

type clientOpts struct {
	url, wallet, rpcURL, out, from, failOn, maxSpend, payment string
	fullText, jsonOut                                         bool
	pendingFor                                                time.Duration
}

func clientCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, clientUsage)
		return exitOK
	}
	if len(args) == 0 || (args[0] != "precheck" && args[0] != "audit") {
		fmt.Fprint(stderr, clientUsage)
		return exitUsage
	}
	op := args[0]
	var o clientOpts
	fs := flag.NewFlagSet("client "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), clientUsage); fs.PrintDefaults() }
	defURL := os.Getenv("SCOPE_HYGIENE_URL")
	if defURL == "" {
		defURL = "http://127.0.0.1:8080"
	}
	fs.StringVar(&o.url, "url", defURL, "base URL of the service (env SCOPE_HYGIENE_URL)")
	fs.StringVar(&o.wallet, "wallet", "", "solana-keygen JSON keypair: proves the caller and pays")
	fs.StringVar(&o.rpcURL, "rpc", "", "Solana JSON-RPC URL used to build the payment (default: the public endpoint of the network the 402 names)")
	fs.StringVar(&o.out, "o", "", "where to save the signed result (default scope-hygiene-<op>.json)")
	fs.StringVar(&o.from, "from", "", "pack a native dump first: "+sourceList())
	fs.BoolVar(&o.fullText, "full-text", false, "with -from: send content text (default: hash-only, no content leaves this machine)")
	fs.StringVar(&o.failOn, "fail-on", "", "audit: exit 1 when one figure crosses your threshold, e.g. undeclared>0 (one factor at a time; figures: "+strings.Join(client.GateNames(), ", ")+", or factor.member)")
	fs.StringVar(&o.maxSpend, "max-spend", "0.05", "the most one audit may cost, in USDC; a 402 asking more is refused before signing")
	fs.DurationVar(&o.pendingFor, "pending-for", 2*time.Minute, "how long to follow a pending settlement before giving up (the transaction id is printed)")
	fs.StringVar(&o.payment, "payment", "", "audit: re-send a payment kept from an earlier run (<o>.payment) to collect the report it paid for, without paying again")
	fs.BoolVar(&o.jsonOut, "json", false, "print one JSON object on stdout (for machines)")
	// Accept flags after the file names too ("audit export.json -wallet k.json").
	var files []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	r := &clientRun{op: op, o: o, stdout: stdout, stderr: stderr}
	return r.run(ctx, files)
}

func sourceList() string {
	s := make([]string, len(pack.Sources))
	for i, src := range pack.Sources {
		s[i] = string(src)
	}
	return strings.Join(s, ", ")
}

// clientRun is one invocation: its options, its outputs and the JSON summary it builds.
type clientRun struct {
	op     string
	o      clientOpts
	stdout io.Writer
	stderr io.Writer
	sum    clientSummary
}

// clientSummary is the -json output.
type clientSummary struct {
	OK        bool          `json:"ok"`
	Exit      int           `json:"exit"`
	Op        string        `json:"op"`
	Saved     string        `json:"saved,omitempty"`
	Criteria  string        `json:"criteria_saved,omitempty"`
	Verified  *verifiedJSON `json:"verified,omitempty"`
	Payment   *paymentJSON  `json:"payment,omitempty"`
	FailOn    *failOnJSON   `json:"fail_on,omitempty"`
	Error     *errorJSON    `json:"error,omitempty"`
	Verdict   string        `json:"verdict_line,omitempty"`
	HashOnly  *bool         `json:"hash_only,omitempty"`
	SentBytes int           `json:"sent_bytes,omitempty"`
}

type verifiedJSON struct {
	KeyID            string `json:"key_id"`
	Kind             string `json:"kind"`
	CriteriaRevision string `json:"criteria_revision"`
}

type paymentJSON struct {
	Units       uint64 `json:"units"`
	Asset       string `json:"asset"`
	Network     string `json:"network"`
	Transaction string `json:"transaction"`
	Payer       string `json:"payer"`
}

type failOnJSON struct {
	Gate    string `json:"gate"`
	Value   string `json:"value,omitempty"`
	Crossed bool   `json:"crossed"`
	Status  string `json:"status"`
}

type errorJSON struct {
	Message     string `json:"message"`
	Status      int    `json:"status,omitempty"`
	Rule        string `json:"rule,omitempty"`
	Transaction string `json:"transaction,omitempty"`
}

func (r *clientRun) progress(line string) { fmt.Fprintln(r.stderr, "scope-hygiene client: "+line) }

// finish prints the summary (JSON or the last words) and returns the exit code.
func (r *clientRun) finish(code int, err error) int {
	r.sum.Exit, r.sum.OK, r.sum.Op = code, code == exitOK, r.op
	if err != nil {
		e := &errorJSON{Message: err.Error()}
		var ce *client.Error
		if errors.As(err, &ce) {
			e.Status, e.Rule, e.Transaction = ce.Status, ce.Rule, ce.Transaction
		}
		r.sum.Error = e
		if !r.o.jsonOut {
			fmt.Fprintln(r.stderr, "scope-hygiene client: FAIL: "+err.Error())
		}
	}
	if r.o.jsonOut {
		enc := json.NewEncoder(r.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(r.sum)
	}
	return code
}

func exitFor(err error) int {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return exitUnreachable
	}
	switch ce.Kind {
	case client.KindRefused, client.KindProof:
		return exitRefused
	case client.KindSpendCap:
		return exitSpendCap
	case client.KindPayment:
		return exitPayment
	case client.KindVerify:
		return exitVerify
	}
	return exitUnreachable
}

// usdcUnits converts a decimal USDC amount to 6-decimal units.
func usdcUnits(s string) (uint64, error) {
	v, ok := new(big.Rat).SetString(s)
	if !ok || v.Sign() < 0 {
		return 0, errors.New("-max-spend must be a non-negative USDC amount, e.g. 0.05")
	}
	v.Mul(v, big.NewRat(1_000_000, 1))
	if !v.IsInt() || !v.Num().IsUint64() {
		return 0, errors.New("-max-spend has more than 6 decimals")
	}
	return v.Num().Uint64(), nil
}

func (r *clientRun) run(ctx context.Context, files []string) int {
	o := r.o
	if len(files) == 0 || (o.from == "" && len(files) != 1) {
		fmt.Fprint(r.stderr, clientUsage)
		return r.finish(exitUsage, errors.New("give one export file, or -from SOURCE and its dump files"))
	}
	var gate *client.Gate
	if o.failOn != "" {
		if r.op != "audit" {
			return r.finish(exitUsage, errors.New("-fail-on applies to audit"))
		}
		g, err := client.ParseGate(o.failOn)
		if err != nil {
			return r.finish(exitUsage, err)
		}
		gate = g
	}
	capUnits, err := usdcUnits(o.maxSpend)
	if err != nil {
		return r.finish(exitUsage, err)
	}
	body, err := r.readExport(files)
	if err != nil {
		return r.finish(exitUsage, err)
	}
	c := &client.Client{BaseURL: o.url, MaxSpendUnits: capUnits, SpendDecimals: x402.USDCDecimals,
		Progress: r.progress, PendingFor: o.pendingFor}
	if o.wallet != "" {
		w, err := client.LoadWallet(o.wallet)
		if err != nil {
			return r.finish(exitUsage, err)
		}
		c.Wallet = w
		r.progress("wallet " + w.PublicKey().String())
	}
	// The signed payment is kept beside the result before it is sent, so a lost answer can be
	// collected with -payment (the same export, within the service's resume window).
	c.OnPayment = func(header string) error {
		p := r.outPath() + ".payment"
		if err := os.WriteFile(p, []byte(header+"\n"), 0o600); err != nil {
			return err
		}
		r.progress("kept the signed payment in " + p + " (re-send it with -payment if the answer is lost)")
		return nil
	}
	if o.payment != "" {
		if r.op != "audit" {
			return r.finish(exitUsage, errors.New("-payment applies to audit"))
		}
		b, err := os.ReadFile(o.payment)
		if err != nil {
			return r.finish(exitUsage, fmt.Errorf("read the kept payment: %w", err))
		}
		c.Payment = strings.TrimSpace(string(b))
	}
	c.ChainFor = func(network string) client.ChainRPC {
		if o.rpcURL != "" {
			return rpc.New(o.rpcURL)
		}
		for _, n := range []x402.Network{x402.Mainnet, x402.Devnet} {
			if n.CAIP2 == network {
				return rpc.New(n.DefaultRPC)
			}
		}
		return nil
	}
	critDoc, pub, err := c.Criteria(ctx)
	if err != nil {
		return r.finish(exitFor(err), err)
	}
	var res *client.Result
	if r.op == "precheck" {
		res, err = c.Precheck(ctx, body)
	} else {
		res, err = c.Audit(ctx, body)
	}
	if err != nil {
		return r.finish(exitFor(err), err)
	}
	if res.Settlement != nil {
		r.sum.Payment = &paymentJSON{Units: res.Units, Asset: res.Asset, Network: res.Network,
			Transaction: res.Settlement.Transaction, Payer: res.Settlement.Payer}
	}
	if err := r.save(res.Body, critDoc); err != nil {
		return r.finish(exitUsage, err)
	}
	v, err := client.Verify(res.Body, pub)
	if err != nil {
		return r.finish(exitVerify, err)
	}
	r.sum.Verified = &verifiedJSON{KeyID: v.KeyID, Kind: v.Kind, CriteriaRevision: v.CriteriaRevision}
	r.progress("verify: OK, signed by " + v.KeyID)
	var head struct {
		Verdict string `json:"verdict_line"`
	}
	_ = json.Unmarshal(res.Body, &head)
	r.sum.Verdict = head.Verdict
	code := exitOK
	if gate != nil {
		fo := &failOnJSON{Gate: o.failOn}
		out, err := gate.Check(res.Body)
		switch {
		case errors.Is(err, client.ErrNotAssessable):
			fo.Status, code = "NOT ASSESSABLE", exitNotAssessable
		case err != nil:
			return r.finish(exitUsage, err)
		default:
			fo.Value, fo.Crossed, fo.Status = out.Value, out.Crossed, "ASSESSABLE"
			if out.Crossed {
				code = exitGateCrossed
			}
		}
		r.sum.FailOn = fo
	}
	if !o.jsonOut {
		r.printSummary(res.Body, pub)
	}
	return r.finish(code, nil)
}

// readExport reads the one export file, or packs the native dump files (hash-only by default).
func (r *clientRun) readExport(files []string) ([]byte, error) {
	if r.o.from == "" {
		b, err := os.ReadFile(files[0])
		if err != nil {
			return nil, fmt.Errorf("read export: %w", err)
		}
		r.sum.SentBytes = len(b)
		return b, nil
	}
	hashOnly := !r.o.fullText
	b, n, err := packNative(pack.Source(r.o.from), files, hashOnly)
	if err != nil {
		return nil, err
	}
	r.sum.HashOnly, r.sum.SentBytes = &hashOnly, len(b)
	form := "hash-only"
	if !hashOnly {
		form = "full text"
	}
	r.progress(fmt.Sprintf("packed %d files from %s into %d records (%s, %d bytes)", len(files), r.o.from, n, form, len(b)))
	return b, nil
}

// packNative is the one call into the pack package.
func packNative(src pack.Source, files []string, hashOnly bool) ([]byte, int, error) {
	in := pack.Inputs{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, 0, fmt.Errorf("read dump: %w", err)
		}
		in.Records = append(in.Records, pack.File{Name: filepath.Base(f), Data: b})
	}
	res, err := pack.Pack(in, pack.Options{Source: src, HashOnly: hashOnly})
	if err != nil {
		return nil, 0, err
	}
	b, err := res.Submission.Marshal()
	if err != nil {
		return nil, 0, err
	}
	if err := pack.CheckCaps(len(res.Submission.Records), b); err != nil {
		return nil, 0, err
	}
	return b, len(res.Submission.Records), nil
}

// save writes the signed result byte for byte, and the /criteria document beside it.
func (r *clientRun) outPath() string {
	if r.o.out != "" {
		return r.o.out
	}
	return "scope-hygiene-" + r.op + ".json"
}

func (r *clientRun) save(doc, criteria []byte) error {
	out := r.outPath()
	crit := strings.TrimSuffix(out, ".json") + ".criteria.json"
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		return fmt.Errorf("save result: %w", err)
	}
	if err := os.WriteFile(crit, criteria, 0o644); err != nil {
		return fmt.Errorf("save criteria: %w", err)
	}
	r.sum.Saved, r.sum.Criteria = out, crit
	r.progress("saved " + out + " and the criteria document " + crit)
	return nil
}

// factorFigures are the words of each factor's figures in the summary, with the report members
// they read in order.
var factorFigures = map[string]struct {
	format  string
	members []string
}{
	"scope_presence":       {"%d of %d eligible records scoped, %d distinct scopes", []string{"scoped", "eligible", "distinct_scopes"}},
	"unscoped_rate":        {"%d of %d eligible records unscoped", []string{"unscoped", "eligible"}},
	"cross_scope_clusters": {"%d candidate clusters: %d undeclared, %d marked shared, %d ambiguous", []string{"candidate", "undeclared", "marked_shared", "ambiguous"}},
	"scope_conflicts":      {"%d conflicts", []string{"conflicts"}},
	"duplicates":           {"%d excess duplicates among %d live records", []string{"excess", "live"}},
}

// factorFigureWords renders an ASSESSABLE factor's counts ("" when the document does not carry them, as
// in a pre-check result).
func factorFigureWords(factor string, m map[string]json.RawMessage) string {
	ff, ok := factorFigures[factor]
	if !ok {
		return ""
	}
	args := make([]any, len(ff.members))
	for i, k := range ff.members {
		var n int64
		if json.Unmarshal(m[k], &n) != nil {
			return ""
		}
		args[i] = n
	}
	return ", " + fmt.Sprintf(ff.format, args...)
}

// printSummary prints, for people, what was verified and paid and each factor's status, one by
// one. A NOT ASSESSABLE factor is printed with its reason, never as a number.
func (r *clientRun) printSummary(doc []byte, pub ed25519.PublicKey) {
	s := r.sum
	tw := tabwriter.NewWriter(r.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "verified\tOK, %s signed by %s (criteria revision %s)\n", s.Verified.Kind, s.Verified.KeyID, s.Verified.CriteriaRevision)
	fmt.Fprintf(tw, "saved\t%s (key: %s)\n", s.Saved, s.Criteria)
	if p := s.Payment; p != nil {
		fmt.Fprintf(tw, "paid\t%d units of %s on %s\n", p.Units, p.Asset, p.Network)
		fmt.Fprintf(tw, "transaction\t%s (payer %s)\n", p.Transaction, p.Payer)
	}
	if s.Verdict != "" {
		fmt.Fprintf(tw, "verdict\t%s\n", s.Verdict)
	}
	var rep struct {
		Factors map[string]map[string]json.RawMessage `json:"factors"`
	}
	if json.Unmarshal(doc, &rep) == nil && rep.Factors != nil {
		for _, f := range []string{"scope_presence", "unscoped_rate", "cross_scope_clusters", "scope_conflicts", "duplicates"} {
			m, ok := rep.Factors[f]
			if !ok {
				continue
			}
			var status, reason string
			json.Unmarshal(m["status"], &status)
			json.Unmarshal(m["reason"], &reason)
			if status == "ASSESSABLE" {
				fmt.Fprintf(tw, "%s\t%s%s\n", f, status, factorFigureWords(f, m))
			} else {
				fmt.Fprintf(tw, "%s\t%s: %s\n", f, status, reason)
			}
		}
	}
	if fo := s.FailOn; fo != nil {
		switch {
		case fo.Status == "NOT ASSESSABLE":
			fmt.Fprintf(tw, "fail-on\t%s: the factor is NOT ASSESSABLE, no figure to compare\n", fo.Gate)
		case fo.Crossed:
			fmt.Fprintf(tw, "fail-on\t%s: figure %s, crossed\n", fo.Gate, fo.Value)
		default:
			fmt.Fprintf(tw, "fail-on\t%s: figure %s, not crossed\n", fo.Gate, fo.Value)
		}
	}
	tw.Flush()
}
