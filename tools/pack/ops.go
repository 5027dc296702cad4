package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
	"github.com/scopehygiene/scope-hygiene/pack/portability"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/schema"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

const opsUsage = `usage: pack OPERATION [flags] PACKAGE

Operations on a package folder (docs/portability.md). Each appends one signed event to the
folder's event log (events.jsonl) and never edits the sealed bytes.
  describe    --snapshot-ref REF [--selection-ref REF] [--capture-interval I] [--baseline REF: refused]
  bind        [--criteria criteria.json] [--schema ID@REVISION=sha256:HEX]... [--semantics a,b]
  seal        [--key KEY]  the key the manifest is signed with (default: none, the package unsigned)
  assess      [--key KEY] [--evaluator NAME]
  conditions  --recipient R --permitted-purpose P (--grant REF | --policy REF) --expires T
              [--recipient-key KEY|criteria.json] [--tenant T] [--duty D]... [--prohibition D]...
  preflight   --service URL | --profile FILE  [--member submission.json]
  attempt     --recipient R [--member submission.json] [--attempt-id ID] [--window 1h]
  receipt     --attempt ID --report REPORT --report-key KEY|criteria.json
  supersede   --by NEXT-PACKAGE --reason TEXT
  withdraw    --reason TEXT [--notice REF]
  dispose     --reason TEXT --retention-policy REF [--hold REF]...
Every operation takes:
  --sign-key KEY      the actor's Ed25519 private key (PKCS #8 PEM): every event is signed
  --role ROLE         custodian, export_curator, integrity_reviewer, receiving_operator, policy_reviewer
  --purpose TEXT      why, and --decision REF: the decision that authorised it
  --expect REF        the revision reference you expect current (pack verify prints it): a mismatch
                      is refused and nothing is written; --expect-head REF also checks the log head
  --trust KEY         a further key whose events are trusted when the log is replayed (repeatable)
  --time T            the event's time, RFC 3339 (default now)
Exit codes: 0 recorded; 1 refused or denied; 2 usage or unreadable input.
`

var operations = []string{"describe", "bind", "seal", "assess", "conditions", "preflight", "attempt", "receipt", "supersede", "withdraw", "dispose"}

// opsFlags are the flags of the package operations; each operation reads its own.
type opsFlags struct {
	signKey, role, purpose, decision, expect, expectHead, at                    string
	snapshot, selection, interval, baseline, criteria, semantics                string
	key, evaluator, recipient, recipientKey, permitted, grant, policy, tenant   string
	expires, service, profile, member, attemptID, window, report, reportKey, by string
	reason, notice, retention                                                   string
	trust, schemas, duties, prohibitions, holds                                 keyList
}

func (c *opsFlags) register(fs *flag.FlagSet) {
	for _, s := range []struct {
		p    *string
		name string
	}{{&c.signKey, "sign-key"}, {&c.role, "role"}, {&c.purpose, "purpose"}, {&c.decision, "decision"}, {&c.expect, "expect"},
		{&c.expectHead, "expect-head"}, {&c.at, "time"}, {&c.snapshot, "snapshot-ref"}, {&c.selection, "selection-ref"},
		{&c.interval, "capture-interval"}, {&c.baseline, "baseline"}, {&c.criteria, "criteria"}, {&c.semantics, "semantics"},
		{&c.key, "key"}, {&c.evaluator, "evaluator"}, {&c.recipient, "recipient"}, {&c.recipientKey, "recipient-key"},
		{&c.permitted, "permitted-purpose"}, {&c.grant, "grant"}, {&c.policy, "policy"}, {&c.tenant, "tenant"},
		{&c.expires, "expires"}, {&c.service, "service"}, {&c.profile, "profile"}, {&c.member, "member"},
		{&c.attemptID, "attempt-id"}, {&c.window, "window"}, {&c.report, "report"}, {&c.reportKey, "report-key"},
		{&c.by, "by"}, {&c.reason, "reason"}, {&c.notice, "notice"}, {&c.retention, "retention-policy"}} {
		fs.StringVar(s.p, s.name, "", "")
	}
	fs.StringVar(&c.attemptID, "attempt", "", "")
	fs.Var(&c.trust, "trust", "")
	fs.Var(&c.schemas, "schema", "")
	fs.Var(&c.duties, "duty", "")
	fs.Var(&c.prohibitions, "prohibition", "")
	fs.Var(&c.holds, "hold", "")
}

// usageError is a mistake in the command line: printed after the operation's name, exit code 2.
type usageError string

func (e usageError) Error() string { return string(e) }

// opsCmd runs one package operation: its flags, the replayed package, the operation's input
// from its flags, portability.Apply, the event appended to the log and printed.
func opsCmd(op string, args []string, stdout, stderr io.Writer, client *http.Client) int {
	fs := flag.NewFlagSet("pack "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, opsUsage) }
	var c opsFlags
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		return opsFailed(stderr, op, usageError("give exactly one package folder (pack "+op+" -h)"))
	}
	if c.signKey == "" || c.role == "" || c.purpose == "" || c.decision == "" || c.expect == "" {
		return opsFailed(stderr, op, usageError("--sign-key, --role, --purpose, --decision and --expect are required"))
	}
	priv, err := readPrivateKey(c.signKey)
	if err != nil {
		return opsFailed(stderr, op, err)
	}
	now, err := c.eventTime()
	if err != nil {
		return opsFailed(stderr, op, err)
	}
	trusted, err := c.trustedKeys(op, priv)
	if err != nil {
		return opsFailed(stderr, op, err)
	}
	f, err := openFolder(fs.Arg(0))
	if err != nil {
		return opsFailed(stderr, op, err)
	}
	st, err := portability.Open(portability.Package{Files: f.files, Log: f.log}, trusted)
	if err != nil {
		fmt.Fprintln(stderr, "pack "+op+":", err)
		return 1
	}
	req := portability.Request{Op: op, Actor: portability.Actor{Role: c.role, Purpose: c.purpose, DecisionRef: c.decision},
		ExpectRevision: c.expect, ExpectHead: c.expectHead, Time: now}
	if input := opInputs[op]; input != nil {
		if err := input(&c, &req, opContext{st: st, f: f, client: client}); err != nil {
			return opsFailed(stderr, op, err)
		}
	}
	return applyOp(stdout, stderr, op, st, f, req, priv)
}

// opsFailed prints why an operation could not start and returns exit code 2.
func opsFailed(stderr io.Writer, op string, err error) int {
	if u, ok := err.(usageError); ok {
		fmt.Fprintf(stderr, "pack %s: %s\n", op, string(u))
	} else {
		fmt.Fprintln(stderr, err)
	}
	return 2
}

// trustedKeys are the keys whose events are trusted when the log is replayed: the actor's and
// every --trust key.
func (c *opsFlags) trustedKeys(op string, priv ed25519.PrivateKey) ([]ed25519.PublicKey, error) {
	trusted := []ed25519.PublicKey{priv.Public().(ed25519.PublicKey)}
	for _, k := range c.trust {
		p, err := sign.ReadPublicKey(k)
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", op, err)
		}
		trusted = append(trusted, p)
	}
	return trusted, nil
}

// eventTime is --time, or now to the second.
func (c *opsFlags) eventTime() (time.Time, error) {
	if c.at == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	t, err := time.Parse(time.RFC3339, c.at)
	if err != nil {
		return t, usageError("--time is not an RFC 3339 time")
	}
	return t, nil
}

// applyOp applies the request, appends its event to the folder's log and prints it.
func applyOp(stdout, stderr io.Writer, op string, st *portability.State, f *folder, req portability.Request, priv ed25519.PrivateKey) int {
	line, ev, err := portability.Apply(st, f.files, req, priv)
	if line != nil {
		if aerr := f.appendLog(line); aerr != nil {
			fmt.Fprintln(stderr, aerr)
			return 1
		}
	}
	var ref *portability.Refusal
	switch {
	case errors.As(err, &ref):
		fmt.Fprintf(stdout, "pack %s: REFUSED (recorded as event %d)\n", op, ev.Seq)
		for _, r := range ref.Reasons {
			fmt.Fprintf(stdout, "  refused      %s\n", r)
		}
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "pack %s: %v\n", op, err)
		return 1
	}
	printEvent(stdout, op, ev, portability.Package{Files: f.files, Log: f.log})
	return 0
}

// opContext is what an operation's input may read besides its flags.
type opContext struct {
	st     *portability.State
	f      *folder
	client *http.Client
}

// opInputs set each operation's input on the request from the flags.
var opInputs = map[string]func(c *opsFlags, req *portability.Request, x opContext) error{
	"describe": func(c *opsFlags, req *portability.Request, _ opContext) error {
		req.Describe = &portability.DescribeInput{SnapshotRef: c.snapshot, SelectionQueryRef: c.selection, BaselineRef: c.baseline, CaptureInterval: c.interval}
		return nil
	},
	"bind": func(c *opsFlags, req *portability.Request, _ opContext) (err error) {
		req.Bind, err = bindInput(c.criteria, c.schemas, c.semantics)
		return asUsage(err)
	},
	"seal": func(c *opsFlags, req *portability.Request, _ opContext) error {
		k, err := optionalKey(c.key)
		req.Seal = &portability.SealInput{PackageKey: k}
		return asUsage(err)
	},
	"assess": func(c *opsFlags, req *portability.Request, _ opContext) error {
		k, err := optionalKey(c.key)
		req.Assess = &portability.AssessInput{TrustedKey: k, Evaluator: c.evaluator}
		return asUsage(err)
	},
	"conditions": (*opsFlags).conditionsInput,
	"preflight":  (*opsFlags).preflightInput,
	"attempt":    (*opsFlags).attemptInput,
	"receipt":    (*opsFlags).receiptInput,
	"supersede": func(c *opsFlags, req *portability.Request, _ opContext) error {
		next, err := openFolder(c.by)
		if err != nil {
			return err
		}
		req.Supersede = &portability.SupersedeInput{Successor: next.files[mpp.ManifestName], Reason: c.reason}
		return nil
	},
	"withdraw": (*opsFlags).closeInput,
	"dispose":  (*opsFlags).closeInput,
}

// asUsage makes err, if any, a usage error.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError(err.Error())
}

// optionalKey reads the public key at path; no path, no key.
func optionalKey(path string) (ed25519.PublicKey, error) {
	if path == "" {
		return nil, nil
	}
	return sign.ReadPublicKey(path)
}

func (c *opsFlags) conditionsInput(req *portability.Request, _ opContext) error {
	exp, err := time.Parse(time.RFC3339, c.expires)
	if c.expires != "" && err != nil {
		return usageError("--expires is not an RFC 3339 time")
	}
	in := &portability.ConditionsInput{Recipient: c.recipient, Tenant: c.tenant, Purpose: c.permitted, GrantRef: c.grant,
		PolicyRef: c.policy, Duties: c.duties, Prohibitions: c.prohibitions, ExpiresAt: exp}
	if c.recipientKey != "" {
		k, err := sign.ReadPublicKey(c.recipientKey)
		if err != nil {
			return asUsage(err)
		}
		in.RecipientKeyID = mpp.KeyID(k)
	}
	req.Conditions = in
	return nil
}

// memberOr is --member, or the package's first submission part.
func (c *opsFlags) memberOr(m *mpp.Manifest) string {
	if c.member != "" {
		return c.member
	}
	return onlyPart(m)
}

func (c *opsFlags) preflightInput(req *portability.Request, x opContext) error {
	member := c.memberOr(x.st.Manifest)
	var p *portability.DestinationProfile
	var err error
	switch {
	case c.service != "" && c.profile == "":
		p, err = serviceProfile(x.client, c.service, x.f.files[member], member)
	case c.profile != "" && c.service == "":
		p, err = fileProfile(c.profile)
	default:
		return usageError("give --service URL or --profile FILE")
	}
	if err != nil {
		return fmt.Errorf("pack preflight: %w", err)
	}
	req.Preflight = p
	return nil
}

func (c *opsFlags) attemptInput(req *portability.Request, x opContext) error {
	w := time.Hour
	if c.window != "" {
		var err error
		if w, err = time.ParseDuration(c.window); err != nil || w <= 0 {
			return usageError("--window is a positive duration")
		}
	}
	req.Attempt = &portability.AttemptInput{AttemptID: c.attemptID, Recipient: c.recipient, Member: c.memberOr(x.st.Manifest), NotBefore: req.Time, NotAfter: req.Time.Add(w)}
	return nil
}

func (c *opsFlags) receiptInput(req *portability.Request, x opContext) error {
	rb, err := os.ReadFile(c.report)
	if err != nil {
		return usageError("--report: the report cannot be read")
	}
	rpub, err := sign.ReadPublicKey(c.reportKey)
	if err != nil {
		return asUsage(err)
	}
	in := &portability.ReceiptInput{AttemptID: c.attemptID, Kind: portability.ReceiptKindReport, Report: rb}
	if a, ok := x.st.Attempts[c.attemptID]; ok {
		in.Recomputed = recompute(x.f.files[a.Member], rb)
	}
	if blk, err := sign.Verify(rb, rpub); err == nil {
		in.SignatureVerified, in.SignerKeyID, in.SignatureValue = true, blk.KeyID, blk.Value
	} else if blk, _, _, merr := sign.Message(rb); merr == nil {
		in.SignerKeyID, in.SignatureValue = blk.KeyID, blk.Value
	}
	req.Receipt = in
	return nil
}

func (c *opsFlags) closeInput(req *portability.Request, _ opContext) error {
	req.Close = &portability.CloseInput{Reason: c.reason, NoticeRef: c.notice, RetentionPolicyRef: c.retention, Holds: c.holds}
	return nil
}

// printEvent prints a recorded event as words: its result, state and the record's members.
func printEvent(w io.Writer, op string, ev *portability.Event, p portability.Package) {
	fmt.Fprintf(w, "pack %s: %s (event %d, %s, state %s -> %s)\n", op, strings.ToUpper(ev.Result), ev.Seq, ev.ActorRole, ev.StateBefore, ev.StateAfter)
	fmt.Fprintf(w, "  revision     %s\n", ev.RevisionRef)
	if n := bytes.Count(p.Log, []byte("\n")); n > 0 {
		lines := bytes.SplitAfter(p.Log, []byte("\n"))
		fmt.Fprintf(w, "  log head     %s\n", lineRefOf(lines[n-1]))
	}
	var rec map[string]any
	_ = json.Unmarshal(ev.Record, &rec)
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasSuffix(k, "sha256") || k == "signature_value" {
			continue // digests and signatures stay in the log, for machines
		}
		v := rec[k]
		if m, ok := v.(map[string]any); ok && k == "loss_report" {
			parts, _ := m["parts"].([]any)
			v = fmt.Sprintf("%s blocking, %s non-blocking, in %d part(s) listed in the log", words(m["blocking"]), words(m["non_blocking"]), len(parts))
		}
		fmt.Fprintf(w, "  %-24s %s\n", strings.ReplaceAll(k, "_", " "), words(v))
	}
}

func lineRefOf(line []byte) string { return "sha256:" + pack.SHA256Hex(line) }

// words renders a record value for people: lists one item after another, objects as name: value.
func words(v any) string {
	switch t := v.(type) {
	case nil:
		return "none"
	case string:
		return t
	case bool:
		if t {
			return "yes"
		}
		return "no"
	case float64:
		return fmt.Sprintf("%d", int64(t))
	case []any:
		if len(t) == 0 {
			return "none"
		}
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = words(x)
		}
		return strings.Join(parts, "; ")
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, strings.ReplaceAll(k, "_", " ")+" "+words(t[k]))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

func onlyPart(m *mpp.Manifest) string {
	for _, mm := range m.Members {
		if mm.Role == mpp.RoleSubmissionPart {
			return mm.Path
		}
	}
	return ""
}

// bindInput pins the criteria (a saved GET /criteria document, or the embedded criteria) and the
// published package schemas by id, revision and digest.
func bindInput(criteriaFile string, pins keyList, semantics string) (*portability.BindInput, error) {
	in := &portability.BindInput{}
	if criteriaFile != "" {
		b, err := os.ReadFile(criteriaFile)
		if err != nil {
			return nil, errors.New("--criteria: the file cannot be read")
		}
		var d struct {
			ID       string `json:"criteria_id"`
			Revision string `json:"criteria_revision"`
			Digest   string `json:"criteria_digest"`
		}
		if json.Unmarshal(b, &d) != nil || d.ID == "" {
			return nil, errors.New("--criteria: not a criteria document (GET /criteria)")
		}
		in.Criteria = portability.Pin{ID: d.ID, Revision: d.Revision, Digest: d.Digest}
	} else {
		ps, err := rules.Default()
		if err != nil {
			return nil, fmt.Errorf("the embedded criteria: %w", err)
		}
		in.Criteria = portability.Pin{ID: ps.ID(), Revision: ps.Revision(), Digest: ps.Digest()}
	}
	for _, n := range []string{"pack-manifest", "pack-signature", "pack-event", "pack-records"} {
		b, _ := schema.Get(n + schema.Suffix)
		in.Schemas = append(in.Schemas, portability.Pin{ID: schema.IDBase + n + schema.Suffix, Revision: mpp.PackageProfile, Digest: "sha256:" + pack.SHA256Hex(b)})
	}
	for _, p := range pins {
		id, rest, ok1 := strings.Cut(p, "@")
		rev, dig, ok2 := strings.Cut(rest, "=")
		if !ok1 || !ok2 {
			return nil, errors.New("--schema takes ID@REVISION=sha256:HEX")
		}
		in.Schemas = append(in.Schemas, portability.Pin{ID: id, Revision: rev, Digest: dig})
	}
	for _, s := range strings.Split(semantics, ",") {
		if s = strings.TrimSpace(s); s != "" {
			in.Semantics = append(in.Semantics, s)
		}
	}
	return in, nil
}
