// Package session is a paying caller's session: the state and the steps the `scope-hygiene
// client` command performs for one export. It reads (or packs) the export, picks the rule set,
// fetches the criteria and the key they publish, runs the free pre-check that guards a -fail-on
// audit, pre-checks or pays for the audit (keeping the signed payment for a retry), saves the
// signed result beside the criteria document, verifies it, compares the -fail-on figure, and ends
// with the summary and the exit code the command prints and returns.
package session

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go/rpc"

	"github.com/scopehygiene/scope-hygiene/client"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// Options are a session's settings, as the command's flags give them.
type Options struct {
	// Op is "precheck" or "audit".
	Op string
	// URL is the service's base URL.
	URL string
	// Wallet is a solana-keygen JSON keypair file: it proves the caller and pays ("" for none).
	Wallet string
	// RPC is the Solana JSON-RPC URL a payment is built with ("": the network's public endpoint).
	RPC string
	// Out is where the signed result is saved ("": scope-hygiene-<op>.json).
	Out string
	// From names the native source whose dump files are packed first ("": the file is an export).
	From string
	// FullText sends content text when packing (the default is hash-only).
	FullText bool
	// FailOn is a -fail-on gate such as "undeclared>0" (audit only).
	FailOn string
	// MaxSpend is the most one audit may cost, in USDC (a decimal, e.g. "0.05").
	MaxSpend string
	// PendingFor bounds how long a pending settlement is followed.
	PendingFor time.Duration
	// Payment is a file holding a payment kept from an earlier run, to re-send (audit only).
	Payment string
	// Criteria picks the rule set by criteria id ("": the primary, or the one for the export's format).
	Criteria string
}

// session is one run: its options, the client it drives, and what the steps have learned.
type session struct {
	o        Options
	op       string
	progress func(line string)
	c        *client.Client
	gate     *client.Gate
	crit     criteriaFacts
	critDoc  []byte
	pub      ed25519.PublicKey
	out      *Outcome
}

// Run performs one session on the export in files (one export, or with From the native dump
// files) and returns how it ended. Progress receives one line per step (nil: silent); no line
// carries export content.
func Run(ctx context.Context, o Options, files []string, progress func(line string)) *Outcome {
	if progress == nil {
		progress = func(string) {}
	}
	s := &session{o: o, op: o.Op, progress: progress, out: &Outcome{}}
	code, err := s.run(ctx, files)
	if err != nil {
		code = exitFor(err)
	}
	s.out.end(s.op, code, err)
	return s.out
}

func (s *session) run(ctx context.Context, files []string) (int, error) {
	body, err := s.prepare(files)
	if err != nil {
		return 0, err
	}
	if err := s.pickRuleSet(ctx, body); err != nil {
		return 0, err
	}
	if err := s.readCriteria(ctx); err != nil {
		return 0, err
	}
	priced := s.crit.Price.Units > 0
	if s.op == "audit" && priced && s.c.Wallet == nil && s.c.Payment == "" {
		return 0, usage(fmt.Errorf("an audit under %s costs %s: give -wallet KEY.json to pay (or -payment FILE to collect a report already paid for)", s.crit.ID, s.crit.Price.Label))
	}
	// -fail-on on a priced audit: the free pre-check first, and nothing paid for a factor it
	// states NOT ASSESSABLE. (An unpriced audit costs nothing, and shares the pre-check's
	// allowance, whose interval a pre-check right before it would spend.)
	if s.gate != nil && priced && s.c.Payment == "" {
		pre, err := s.guardPrecheck(ctx, body)
		if err != nil {
			return 0, err
		}
		if pre != nil {
			return s.stopAtPrecheck(pre)
		}
	}
	res, err := s.call(ctx, body)
	if err != nil {
		return 0, err
	}
	if err := s.keep(res.Body); err != nil {
		return 0, err
	}
	s.progress("verify: OK, signed by " + s.out.Summary.Verified.KeyID)
	return s.compare(res.Body)
}

// prepare checks the options, reads the export and builds the client.
func (s *session) prepare(files []string) ([]byte, error) {
	if s.o.FailOn != "" {
		if s.op != "audit" {
			return nil, usage(errors.New("-fail-on applies to audit"))
		}
		g, err := client.ParseGate(s.o.FailOn)
		if err != nil {
			return nil, usage(err)
		}
		s.gate = g
	}
	capUnits, err := usdcUnits(s.o.MaxSpend)
	if err != nil {
		return nil, usage(err)
	}
	body, err := s.readExport(files)
	if err != nil {
		return nil, usage(err)
	}
	s.c = &client.Client{BaseURL: s.o.URL, MaxSpendUnits: capUnits, SpendDecimals: x402.USDCDecimals,
		Progress: s.progress, PendingFor: s.o.PendingFor, OnPayment: s.keepPayment, ChainFor: s.chainFor}
	if s.o.Wallet != "" {
		w, err := client.LoadWallet(s.o.Wallet)
		if err != nil {
			return nil, usage(err)
		}
		s.c.Wallet = w
		s.progress("wallet " + w.PublicKey().String())
	}
	if s.o.Payment != "" {
		if s.op != "audit" {
			return nil, usage(errors.New("-payment applies to audit"))
		}
		b, err := os.ReadFile(s.o.Payment)
		if err != nil {
			return nil, usage(fmt.Errorf("read the kept payment: %w", err))
		}
		s.c.Payment = strings.TrimSpace(string(b))
	}
	return body, nil
}

// keepPayment keeps the signed payment beside the result before it is sent, so a lost answer can
// be collected with -payment (the same export, within the service's resume window).
func (s *session) keepPayment(header string) error {
	p := s.outPath() + ".payment"
	if err := os.WriteFile(p, []byte(header+"\n"), 0o600); err != nil {
		return err
	}
	s.progress("kept the signed payment in " + p + " (re-send it with -payment if the answer is lost)")
	return nil
}

// chainFor is the chain reader a payment on network is built with: -rpc, or the public endpoint
// of a network the service's x402 knows.
func (s *session) chainFor(network string) client.ChainRPC {
	if s.o.RPC != "" {
		return rpc.New(s.o.RPC)
	}
	for _, n := range []x402.Network{x402.Mainnet, x402.Devnet} {
		if n.CAIP2 == network {
			return rpc.New(n.DefaultRPC)
		}
	}
	return nil
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

// criteriaFacts are what a session reads in a criteria document.
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

func parseCriteria(doc []byte) criteriaFacts {
	var c criteriaFacts
	_ = json.Unmarshal(doc, &c)
	return c
}

// readCriteria fetches the chosen rule set's criteria document and the key it publishes.
func (s *session) readCriteria(ctx context.Context) error {
	doc, pub, err := s.c.Criteria(ctx)
	if err != nil {
		return err
	}
	s.critDoc, s.pub, s.crit = doc, pub, parseCriteria(doc)
	s.out.Summary.CriteriaID = s.crit.ID
	s.out.factorRules = s.crit.Texts.FactorRules
	return nil
}

// pickRuleSet points the client at the rule set of -criteria, or, for an export that names a
// format (a mutation log), at the served rule set whose document has that format. Without either
// the client keeps the primary criteria's routes.
func (s *session) pickRuleSet(ctx context.Context, body []byte) error {
	var top struct {
		Format string `json:"format"`
	}
	_ = json.Unmarshal(body, &top)
	if s.o.Criteria == "" && top.Format == "" {
		return nil
	}
	idx, err := s.c.Index(ctx)
	if err != nil {
		return err
	}
	for _, e := range idx {
		if s.o.Criteria != "" {
			if e.CriteriaID == s.o.Criteria {
				s.c.Routes = e.Routes
				s.progress("rule set " + e.CriteriaID + " (" + e.Precheck + ", " + e.Audit + ")")
				return nil
			}
			continue
		}
		probe := *s.c
		probe.Routes = e.Routes
		probe.Progress = nil
		doc, _, err := probe.Criteria(ctx)
		if err != nil {
			return err
		}
		if parseCriteria(doc).Format == top.Format {
			s.c.Routes = e.Routes
			s.progress("a " + top.Format + ": rule set " + e.CriteriaID + " (" + e.Precheck + ", " + e.Audit + ")")
			return nil
		}
	}
	if s.o.Criteria != "" {
		return usage(fmt.Errorf("-criteria: the service serves no rule set %q (GET /criteria/index)", s.o.Criteria))
	}
	return usage(errors.New("the service serves no rule set for this export's format (GET /criteria/index)"))
}
