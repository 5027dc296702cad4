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
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gagliardetto/solana-go/rpc"

	"github.com/scopehygiene/scope-hygiene/client"
	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/server/api"
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

type clientOpts struct {
	url, wallet, rpcURL, out, from, failOn, maxSpend, payment, criteria string
	fullText, jsonOut                                                   bool
	pendingFor                                                          time.Duration
}

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
	// Accept flags after the file names too ("audit export.json -wallet k.json").
	var files []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usageTo(stdout)
				return exitOK
			}
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	r := &clientRun{op: op, o: o, stdout: stdout, stderr: stderr, usage: func() { usageTo(stderr) }}
	return r.run(ctx, files)
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
	fs.StringVar(&o.url, "url", defURL, "base URL of the service (env SCOPE_HYGIENE_URL)")
	fs.StringVar(&o.wallet, "wallet", "", "solana-keygen JSON keypair: proves the caller and pays (required by a priced audit)")
	fs.StringVar(&o.rpcURL, "rpc", "", "Solana JSON-RPC URL used to build the payment (default: the public endpoint of the network the 402 names)")
	fs.StringVar(&o.out, "o", "", "where to save the signed result (default scope-hygiene-<op>.json)")
	fs.StringVar(&o.from, "from", "", "pack a native dump first: "+sourceList())
	fs.BoolVar(&o.fullText, "full-text", false, "with -from: send content text (default: hash-only, no content leaves this machine)")
	fs.StringVar(&o.failOn, "fail-on", "", "audit: exit 1 when one figure crosses your threshold, e.g. undeclared>0 (one factor at a time; figures: "+strings.Join(client.GateNames(), ", ")+", or factor.member); the free pre-check runs first, and a factor it states NOT ASSESSABLE is never paid for (exit 7)")
	fs.StringVar(&o.maxSpend, "max-spend", "0.05", "the most one audit may cost, in USDC; a 402 asking more is refused before signing")
	fs.DurationVar(&o.pendingFor, "pending-for", 2*time.Minute, "how long to follow a pending settlement before giving up (the transaction id is printed)")
	fs.StringVar(&o.payment, "payment", "", "audit: re-send a payment kept from an earlier run (<o>.payment) to collect the report it paid for, without paying again")
	fs.BoolVar(&o.jsonOut, "json", false, "print one JSON object on stdout (for machines): the outcome, the verdict line and every factor as signed")
	fs.StringVar(&o.criteria, "criteria", "", "the rule set, by criteria id from GET /criteria/index (default: the primary criteria; for a mutation log, the rule set served for its format)")
	return fs
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
	usage  func() // prints the usage and every flag on stderr
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
	// CriteriaID is the rule set the export was sent to.
	CriteriaID string `json:"criteria_id,omitempty"`
	// Factors are every factor of the verified result, exactly as signed (a pre-check states each
	// factor's status and reason; a report adds its figures). NOT ASSESSABLE carries no number.
	Factors json.RawMessage `json:"factors,omitempty"`
	// PaidNothing says -fail-on stopped after the free pre-check: nothing was paid.
	PaidNothing bool `json:"paid_nothing,omitempty"`
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
		r.usage()
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
	if code, err := r.pickRuleSet(ctx, c, body); err != nil {
		return r.finish(code, err)
	}
	critDoc, pub, err := c.Criteria(ctx)
	if err != nil {
		return r.finish(exitFor(err), err)
	}
	crit := readCriteria(critDoc)
	r.sum.CriteriaID = crit.ID
	priced := crit.Price.Units > 0
	if r.op == "audit" && priced && c.Wallet == nil && c.Payment == "" {
		return r.finish(exitUsage, fmt.Errorf("an audit under %s costs %s: give -wallet KEY.json to pay (or -payment FILE to collect a report already paid for)", crit.ID, crit.Price.Label))
	}
	// -fail-on on a priced audit: the free pre-check first, and nothing paid for a factor it
	// states NOT ASSESSABLE. (An unpriced audit costs nothing, and shares the pre-check's
	// allowance, whose interval a pre-check right before it would spend.)
	if gate != nil && priced && c.Payment == "" {
		pre, err := c.Precheck(ctx, body)
		var ce *client.Error
		if errors.As(err, &ce) && ce.Rule == api.RuleFreeTierInterval && crit.FreeTier.MinIntervalMS > 0 {
			wait := time.Duration(crit.FreeTier.MinIntervalMS)*time.Millisecond + 200*time.Millisecond
			r.progress(fmt.Sprintf("fail-on: free pre-checks are %d ms apart; running it again in %s", crit.FreeTier.MinIntervalMS, wait))
			select {
			case <-ctx.Done():
				return r.finish(exitUnreachable, ctx.Err())
			case <-time.After(wait):
			}
			pre, err = c.Precheck(ctx, body)
		}
		if err != nil {
			return r.finish(exitFor(err), err)
		}
		ok, err := gate.Assessable(pre.Body)
		if err != nil {
			return r.finish(exitUsage, err)
		}
		if !ok {
			return r.stopAtPrecheck(pre.Body, critDoc, pub, crit)
		}
		r.progress("fail-on: the pre-check states " + gate.Factor + " ASSESSABLE; auditing")
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
		Verdict string          `json:"verdict_line"`
		Factors json.RawMessage `json:"factors"`
	}
	_ = json.Unmarshal(res.Body, &head)
	r.sum.Verdict, r.sum.Factors = head.Verdict, head.Factors
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
		r.printSummary(res.Body, crit)
	}
	return r.finish(code, nil)
}

// stopAtPrecheck ends a -fail-on audit whose factor the free pre-check states NOT ASSESSABLE:
// the signed pre-check is saved and verified, nothing is paid, exit 7.
func (r *clientRun) stopAtPrecheck(pre, critDoc []byte, pub ed25519.PublicKey, crit criteriaFacts) int {
	r.op = "precheck"
	if err := r.save(pre, critDoc); err != nil {
		return r.finish(exitUsage, err)
	}
	v, err := client.Verify(pre, pub)
	if err != nil {
		return r.finish(exitVerify, err)
	}
	var head struct {
		Factors json.RawMessage `json:"factors"`
	}
	_ = json.Unmarshal(pre, &head)
	r.sum.Verified = &verifiedJSON{KeyID: v.KeyID, Kind: v.Kind, CriteriaRevision: v.CriteriaRevision}
	r.sum.Factors, r.sum.PaidNothing = head.Factors, true
	r.sum.FailOn = &failOnJSON{Gate: r.o.failOn, Status: "NOT ASSESSABLE"}
	r.progress("fail-on: the free pre-check states the factor NOT ASSESSABLE: nothing was paid")
	if !r.o.jsonOut {
		r.printSummary(pre, crit)
	}
	return r.finish(exitNotAssessable, nil)
}

// criteriaFacts are what the client reads in a criteria document.
type criteriaFacts struct {
	ID    string `json:"criteria_id"`
	Price struct {
		Units uint64 `json:"usdc_units_per_call"`
		Label string `json:"label"`
	} `json:"price"`
	Format   string `json:"format"`
	FreeTier struct {
		MinIntervalMS int64 `json:"min_interval_ms"`
	} `json:"free_tier"`
	Texts struct {
		FactorRules string `json:"factor_rules"`
	} `json:"texts"`
}

func readCriteria(doc []byte) criteriaFacts {
	var c criteriaFacts
	_ = json.Unmarshal(doc, &c)
	return c
}

// pickRuleSet points the client at the rule set of -criteria, or, for an export that names a
// format (a mutation log), at the served rule set whose document has that format. Without either
// the client keeps the primary criteria's routes.
func (r *clientRun) pickRuleSet(ctx context.Context, c *client.Client, body []byte) (int, error) {
	var top struct {
		Format string `json:"format"`
	}
	_ = json.Unmarshal(body, &top)
	if r.o.criteria == "" && top.Format == "" {
		return exitOK, nil
	}
	idx, err := c.Index(ctx)
	if err != nil {
		return exitFor(err), err
	}
	for _, e := range idx {
		if r.o.criteria != "" {
			if e.CriteriaID == r.o.criteria {
				c.Routes = e.Routes
				r.progress("rule set " + e.CriteriaID + " (" + e.Precheck + ", " + e.Audit + ")")
				return exitOK, nil
			}
			continue
		}
		probe := *c
		probe.Routes = e.Routes
		probe.Progress = nil
		doc, _, err := probe.Criteria(ctx)
		if err != nil {
			return exitFor(err), err
		}
		if readCriteria(doc).Format == top.Format {
			c.Routes = e.Routes
			r.progress("a " + top.Format + ": rule set " + e.CriteriaID + " (" + e.Precheck + ", " + e.Audit + ")")
			return exitOK, nil
		}
	}
	if r.o.criteria != "" {
		return exitUsage, fmt.Errorf("-criteria: the service serves no rule set %q (GET /criteria/index)", r.o.criteria)
	}
	return exitUsage, errors.New("the service serves no rule set for this export's format (GET /criteria/index)")
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

// factorOrder lists a result's factors in the order the criteria's factor_rules text numbers
// them ("(1) scope_presence: ...", "(5) reopens (terminal mode): ..."); a factor the text does not number goes last, by name. The
// order is the criteria's, not a ranking.
func factorOrder(factors map[string]map[string]json.RawMessage, rulesText string) []string {
	names := make([]string, 0, len(factors))
	for f := range factors {
		names = append(names, f)
	}
	at := func(f string) int {
		for _, after := range []string{":", " ("} { // "(5) reopens (terminal mode): ..."
			if i := strings.Index(rulesText, ") "+f+after); i >= 0 {
				return i
			}
		}
		return len(rulesText) + 1
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := at(names[i]), at(names[j]); a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	return names
}

// factorFigureWords renders an ASSESSABLE factor's counts ("" when the document does not carry them, as
// in a pre-check result). A factor without words of its own (the second rule set's) lists its
// counts, rates and seq lists by member name.
func factorFigureWords(factor string, m map[string]json.RawMessage) string {
	ff, ok := factorFigures[factor]
	if !ok {
		return memberWords(m)
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

// memberWords lists a factor's numbers, rates and lists of numbers by member name, in name order.
func memberWords(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		var n int64
		var rate struct {
			Numerator, Denominator *int64
			Value                  string
		}
		var list []int64
		switch {
		case json.Unmarshal(m[k], &n) == nil:
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		case json.Unmarshal(m[k], &rate) == nil && rate.Numerator != nil && rate.Denominator != nil && rate.Value != "":
			parts = append(parts, fmt.Sprintf("%s %s (%d of %d)", k, rate.Value, *rate.Numerator, *rate.Denominator))
		case json.Unmarshal(m[k], &list) == nil && len(list) > 0:
			s := make([]string, len(list))
			for i, v := range list {
				s[i] = fmt.Sprint(v)
			}
			parts = append(parts, k+" "+strings.Join(s, " "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// printSummary prints, for people, what was verified and paid and each factor's status, one by
// one. A NOT ASSESSABLE factor is printed with its reason, never as a number.
func (r *clientRun) printSummary(doc []byte, crit criteriaFacts) {
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
		for _, f := range factorOrder(rep.Factors, crit.Texts.FactorRules) {
			m := rep.Factors[f]
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
