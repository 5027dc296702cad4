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
	"net/url"
	"os"
	"slices"
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

// opsCmd runs one package operation.
func opsCmd(op string, args []string, stdout, stderr io.Writer, client *http.Client) int {
	fs := flag.NewFlagSet("pack "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, opsUsage) }
	var c struct {
		signKey, role, purpose, decision, expect, expectHead, at                    string
		snapshot, selection, interval, baseline, criteria, semantics                string
		key, evaluator, recipient, recipientKey, permitted, grant, policy, tenant   string
		expires, service, profile, member, attemptID, window, report, reportKey, by string
		reason, notice, retention                                                   string
		trust, schemas, duties, prohibitions, holds                                 keyList
	}
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "pack %s: %s\n", op, msg)
		return 2
	}
	if fs.NArg() != 1 {
		return usage("give exactly one package folder (pack " + op + " -h)")
	}
	if c.signKey == "" || c.role == "" || c.purpose == "" || c.decision == "" || c.expect == "" {
		return usage("--sign-key, --role, --purpose, --decision and --expect are required")
	}
	priv, err := readPrivateKey(c.signKey)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	now := time.Now().UTC().Truncate(time.Second)
	if c.at != "" {
		if now, err = time.Parse(time.RFC3339, c.at); err != nil {
			return usage("--time is not an RFC 3339 time")
		}
	}
	trusted := []ed25519.PublicKey{priv.Public().(ed25519.PublicKey)}
	for _, k := range c.trust {
		p, err := sign.ReadPublicKey(k)
		if err != nil {
			fmt.Fprintln(stderr, "pack "+op+":", err)
			return 2
		}
		trusted = append(trusted, p)
	}
	f, err := openFolder(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	st, err := portability.Open(portability.Package{Files: f.files, Log: f.log}, trusted)
	if err != nil {
		fmt.Fprintln(stderr, "pack "+op+":", err)
		return 1
	}
	req := portability.Request{Op: op, Actor: portability.Actor{Role: c.role, Purpose: c.purpose, DecisionRef: c.decision},
		ExpectRevision: c.expect, ExpectHead: c.expectHead, Time: now}
	pubKey := func(path string) (ed25519.PublicKey, error) {
		if path == "" {
			return nil, nil
		}
		return sign.ReadPublicKey(path)
	}
	switch op {
	case "describe":
		req.Describe = &portability.DescribeInput{SnapshotRef: c.snapshot, SelectionQueryRef: c.selection, BaselineRef: c.baseline, CaptureInterval: c.interval}
	case "bind":
		in, err := bindInput(c.criteria, c.schemas, c.semantics)
		if err != nil {
			return usage(err.Error())
		}
		req.Bind = in
	case "seal":
		k, err := pubKey(c.key)
		if err != nil {
			return usage(err.Error())
		}
		req.Seal = &portability.SealInput{PackageKey: k}
	case "assess":
		k, err := pubKey(c.key)
		if err != nil {
			return usage(err.Error())
		}
		req.Assess = &portability.AssessInput{TrustedKey: k, Evaluator: c.evaluator}
	case "conditions":
		exp, err := time.Parse(time.RFC3339, c.expires)
		if c.expires != "" && err != nil {
			return usage("--expires is not an RFC 3339 time")
		}
		in := &portability.ConditionsInput{Recipient: c.recipient, Tenant: c.tenant, Purpose: c.permitted, GrantRef: c.grant,
			PolicyRef: c.policy, Duties: c.duties, Prohibitions: c.prohibitions, ExpiresAt: exp}
		if c.recipientKey != "" {
			k, err := sign.ReadPublicKey(c.recipientKey)
			if err != nil {
				return usage(err.Error())
			}
			in.RecipientKeyID = mpp.KeyID(k)
		}
		req.Conditions = in
	case "preflight":
		member := c.member
		if member == "" {
			member = onlyPart(st.Manifest)
		}
		var p *portability.DestinationProfile
		switch {
		case c.service != "" && c.profile == "":
			p, err = serviceProfile(client, c.service, f.files[member], member)
		case c.profile != "" && c.service == "":
			p, err = fileProfile(c.profile)
		default:
			return usage("give --service URL or --profile FILE")
		}
		if err != nil {
			fmt.Fprintln(stderr, "pack preflight:", err)
			return 2
		}
		req.Preflight = p
	case "attempt":
		w := time.Hour
		if c.window != "" {
			if w, err = time.ParseDuration(c.window); err != nil || w <= 0 {
				return usage("--window is a positive duration")
			}
		}
		member := c.member
		if member == "" {
			member = onlyPart(st.Manifest)
		}
		req.Attempt = &portability.AttemptInput{AttemptID: c.attemptID, Recipient: c.recipient, Member: member, NotBefore: now, NotAfter: now.Add(w)}
	case "receipt":
		rb, err := os.ReadFile(c.report)
		if err != nil {
			return usage("--report: the report cannot be read")
		}
		rpub, err := sign.ReadPublicKey(c.reportKey)
		if err != nil {
			return usage(err.Error())
		}
		in := &portability.ReceiptInput{AttemptID: c.attemptID, Kind: portability.ReceiptKindReport, Report: rb}
		if a, ok := st.Attempts[c.attemptID]; ok {
			in.Recomputed = recompute(f.files[a.Member], rb)
		}
		if blk, err := sign.Verify(rb, rpub); err == nil {
			in.SignatureVerified, in.SignerKeyID, in.SignatureValue = true, blk.KeyID, blk.Value
		} else if blk, _, _, merr := sign.Message(rb); merr == nil {
			in.SignerKeyID, in.SignatureValue = blk.KeyID, blk.Value
		}
		req.Receipt = in
	case "supersede":
		next, err := openFolder(c.by)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		req.Supersede = &portability.SupersedeInput{Successor: next.files[mpp.ManifestName], Reason: c.reason}
	case "withdraw", "dispose":
		req.Close = &portability.CloseInput{Reason: c.reason, NoticeRef: c.notice, RetentionPolicyRef: c.retention, Holds: c.holds}
	}
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
		if mm.Role == "submission_part" {
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

// fileProfile reads a destination profile file (the DestinationProfile members, as JSON).
func fileProfile(path string) (*portability.DestinationProfile, error) {
	b, err := readBounded(path, 1<<20)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p portability.DestinationProfile
	if err := dec.Decode(&p); err != nil || p.Destination == "" {
		return nil, errors.New("--profile: not a destination profile (destination, profile_ref, supported, required_semantics, withdrawn, dry_run)")
	}
	return &p, nil
}

// serviceBodyLimit bounds what is read of a service's answer.
const serviceBodyLimit = 4 << 20

// serviceProfile builds the memory-scope-hygiene/v1 destination profile from a running
// service: its published criteria document (the profile) and its free pre-check of the member
// (the dry run, signature checked with the criteria document's key). No audit is run.
func serviceProfile(client *http.Client, base string, member []byte, memberName string) (*portability.DestinationProfile, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("--service is an http or https URL")
	}
	if member == nil {
		return nil, errors.New("the package has no such member")
	}
	get := func(method, path string, body []byte) ([]byte, error) {
		req, err := http.NewRequest(method, strings.TrimSuffix(base, "/")+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s %s: the service did not answer", method, path)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, serviceBodyLimit))
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s %s: status %d", method, path, resp.StatusCode)
		}
		return b, nil
	}
	cb, err := get(http.MethodGet, "/criteria", nil)
	if err != nil {
		return nil, err
	}
	var doc struct {
		ID       string                     `json:"criteria_id"`
		Revision string                     `json:"criteria_revision"`
		Digest   string                     `json:"criteria_digest"`
		Matrix   map[string]json.RawMessage `json:"assessability_matrix"`
		Key      sign.PublicKey             `json:"report_signing_key"`
	}
	if err := json.Unmarshal(cb, &doc); err != nil || doc.ID == "" {
		return nil, errors.New("GET /criteria: not a criteria document")
	}
	key, err := doc.Key.Decode()
	if err != nil {
		return nil, errors.New("GET /criteria: no usable report signing key")
	}
	p := &portability.DestinationProfile{Destination: doc.ID, ProfileRef: doc.Digest,
		Criteria: &portability.Pin{ID: doc.ID, Revision: doc.Revision, Digest: doc.Digest}, RecipientKeyID: mpp.KeyID(key),
		RequiredSemantics: []string{"submission:" + doc.ID}, Withdrawn: []string{}}
	for fam := range doc.Matrix {
		p.Supported = append(p.Supported, portability.Representation{Family: fam})
	}
	sort.Slice(p.Supported, func(i, j int) bool { return p.Supported[i].Family < p.Supported[j].Family })
	pb, err := get(http.MethodPost, "/precheck", member)
	if err != nil {
		return nil, err
	}
	if _, err := sign.Verify(pb, key); err != nil {
		return nil, errors.New("POST /precheck: the answer's signature does not verify under the criteria document's key")
	}
	var pc struct {
		Records int    `json:"records"`
		Family  string `json:"family"`
		Form    string `json:"form"`
		Variant string `json:"variant"`
		Factors map[string]struct {
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"factors"`
	}
	if err := json.Unmarshal(pb, &pc); err != nil {
		return nil, errors.New("POST /precheck: not a pre-check answer")
	}
	d := &portability.DryRun{Member: memberName, Records: pc.Records, Family: pc.Family, Form: pc.Form, Variant: pc.Variant}
	names := make([]string, 0, len(pc.Factors))
	for n := range pc.Factors {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		d.Findings = append(d.Findings, portability.Finding{Name: n, Status: pc.Factors[n].Status, Reason: pc.Factors[n].Reason})
	}
	p.DryRun = d
	return p, nil
}
