package portability

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

const claims = `{"id":"c1","content_text":"a","tenant":"t0"}
{"id":"c2","content_text":"a","tenant":"t1"}
{"id":"c3","content_text":"b","tenant":"t1"}
`

// build packs claim lines into a package's sealed files, signed with priv (nil: unsigned).
func build(t testing.TB, lines string, priv ed25519.PrivateKey, rev int, prior string) map[string][]byte {
	t.Helper()
	in := pack.Inputs{Records: []pack.File{{Name: "secret-name.jsonl", Data: []byte(lines)}}}
	opt := pack.Options{Source: pack.ClaimsJSONL}
	opt.Manifest.DeclaredSet, opt.Manifest.DeclaredScopeKeys = true, []string{"tenant"}
	res, err := pack.Pack(in, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := mpp.Build(res, in, []*pack.Submission{res.Submission}, mpp.Options{ID: "urn:uuid:test", Revision: rev, PriorRevisionRef: prior, CaptureTime: t0, TargetCriteriaID: "memory-scope-hygiene/v1"})
	if err != nil {
		t.Fatal(err)
	}
	sig, err := mpp.SignManifest(b.Files[mpp.ManifestName], priv)
	if err != nil {
		t.Fatal(err)
	}
	b.Files[mpp.SignatureName] = sig
	return b.Files
}

func key(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// folder is a package folder in memory: sealed files and the log, appended to.
type folder struct {
	files map[string][]byte
	log   []byte
	keys  []ed25519.PublicKey
}

func (f *folder) state(t testing.TB) *State {
	t.Helper()
	st, err := Open(Package{Files: f.files, Log: f.log}, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (f *folder) do(t testing.TB, priv ed25519.PrivateKey, req Request) error {
	t.Helper()
	st := f.state(t)
	if req.ExpectRevision == "" {
		req.ExpectRevision = st.RevisionRef
	}
	if req.Time.IsZero() {
		req.Time = t0
	}
	if req.Actor.Purpose == "" {
		req.Actor.Purpose, req.Actor.DecisionRef = "transfer to the auditor", "decision-1"
	}
	line, _, err := Apply(st, f.files, req, priv)
	f.log = append(f.log, line...)
	return err
}

func role(r string) Actor { return Actor{Role: r} }

var profile = DestinationProfile{Destination: "memory-scope-hygiene/v1", ProfileRef: "sha256:crit",
	Criteria: &Pin{ID: "memory-scope-hygiene/v1", Revision: "1.0.1", Digest: "sha256:crit"}, RecipientKeyID: "",
	Supported: []Representation{{Family: "generic"}}, RequiredSemantics: []string{"submission:memory-scope-hygiene/v1"},
	DryRun: &DryRun{Member: "submission.json", Records: 3, Family: "generic", Form: "full_text", Variant: "claim-jsonl"}}

// sealed takes a fresh package through describe, bind, seal, conditions and preflight.
func sealed(t testing.TB, pub ed25519.PublicKey, priv ed25519.PrivateKey) *folder {
	f := &folder{files: build(t, claims, priv, 1, ""), keys: []ed25519.PublicKey{pub}}
	steps := []Request{
		{Op: "describe", Actor: role("export_curator"), Describe: &DescribeInput{SnapshotRef: "snap-1"}},
		{Op: "bind", Actor: role("export_curator"), Bind: &BindInput{Criteria: *profile.Criteria}},
		{Op: "seal", Actor: role("custodian"), Seal: &SealInput{PackageKey: pub}},
		{Op: "conditions", Actor: role("policy_reviewer"), Conditions: &ConditionsInput{Recipient: "memory-scope-hygiene/v1", Purpose: "audit", PolicyRef: "policy-7", ExpiresAt: t0.Add(48 * time.Hour)}},
		{Op: "preflight", Actor: role("receiving_operator"), Preflight: &profile},
	}
	for _, r := range steps {
		if err := f.do(t, priv, r); err != nil {
			t.Fatalf("%s: %v", r.Op, err)
		}
	}
	return f
}

func TestLifecycle(t *testing.T) {
	pub, priv := key(t)
	f := sealed(t, pub, priv)
	st := f.state(t)
	if st.Lifecycle != "sealed" || !st.Preflight.Ready || len(st.Problems) > 0 || !st.Acceptable() {
		t.Fatalf("state %s ready %v problems %v", st.Lifecycle, st.Preflight.Ready, st.Problems)
	}
	// the sealed bytes are what they were
	if !bytes.Equal(f.files[mpp.ManifestName], build(t, claims, nil, 1, "")[mpp.ManifestName]) {
		t.Fatal("manifest bytes changed")
	}
	// a stale expectation writes nothing
	line, _, err := Apply(st, f.files, Request{Op: "assess", Actor: Actor{"integrity_reviewer", "p", "d"}, ExpectRevision: "sha256:00", Time: t0, Assess: &AssessInput{}}, priv)
	if !errors.Is(err, ErrStale) || line != nil {
		t.Fatalf("stale: %v", err)
	}
	// a role the profile does not allow is denied, nothing written
	n := len(f.log)
	if err := f.do(t, priv, Request{Op: "withdraw", Actor: role("export_curator"), Close: &CloseInput{Reason: "x"}}); err == nil || len(f.log) != n {
		t.Fatal("withdraw by the curator was not denied")
	}
	// an audience change is a new revision
	if err := f.do(t, priv, Request{Op: "conditions", Actor: role("policy_reviewer"), Conditions: &ConditionsInput{Recipient: "other", Purpose: "p", PolicyRef: "x", ExpiresAt: t0.Add(time.Hour)}}); err == nil || !strings.Contains(err.Error(), "new revision") {
		t.Fatalf("second conditions: %v", err)
	}
	// withdraw closes it
	if err := f.do(t, priv, Request{Op: "withdraw", Actor: role("custodian"), Close: &CloseInput{Reason: "consent withdrawn"}}); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t); st.Lifecycle != "withdrawn" || st.Acceptable() {
		t.Fatalf("after withdraw: %s", st.Lifecycle)
	}
	// untrusted verification: the withdrawal claim still closes it
	st, err = Open(Package{Files: f.files, Log: f.log}, nil)
	if err != nil || st.Acceptable() || !strings.HasPrefix(st.ShownState(), "withdrawn") {
		t.Fatalf("untrusted: %v %s", err, st.ShownState())
	}
}

func TestRefusalsAreRecorded(t *testing.T) {
	pub, priv := key(t)
	f := &folder{files: build(t, claims, priv, 1, ""), keys: []ed25519.PublicKey{pub}}
	var ref *Refusal
	for _, in := range []DescribeInput{{}, {SnapshotRef: "s", BaselineRef: "pkg-0"}} {
		if err := f.do(t, priv, Request{Op: "describe", Actor: role("export_curator"), Describe: &in}); !errors.As(err, &ref) {
			t.Fatalf("describe %+v: %v", in, err)
		}
	}
	if st := f.state(t); len(st.Events) != 2 || st.Events[1].Result != ResultRefused || st.Describe != nil {
		t.Fatal("refusals not recorded as refused")
	}
	// seal before bind is denied
	if err := f.do(t, priv, Request{Op: "seal", Actor: role("custodian"), Seal: &SealInput{PackageKey: pub}}); err == nil || !strings.Contains(err.Error(), "needs describe") {
		t.Fatalf("seal early: %v", err)
	}
	// sealing a package whose signature is stripped needs it unsigned-by-declaration: a key given and
	// no signature is refused
	f2 := &folder{files: build(t, claims, nil, 1, ""), keys: []ed25519.PublicKey{pub}}
	f2.do(t, priv, Request{Op: "describe", Actor: role("export_curator"), Describe: &DescribeInput{SnapshotRef: "s"}})
	f2.do(t, priv, Request{Op: "bind", Actor: role("export_curator"), Bind: &BindInput{Criteria: *profile.Criteria}})
	if err := f2.do(t, priv, Request{Op: "seal", Actor: role("custodian"), Seal: &SealInput{PackageKey: pub}}); !errors.As(err, &ref) {
		t.Fatalf("seal of an unsigned package with a key: %v", err)
	}
}

func TestPreflightRefuses(t *testing.T) {
	pub, priv := key(t)
	for name, c := range map[string]struct {
		mut  func(*DestinationProfile)
		when time.Time
		want string
	}{
		"unknown semantics": {func(p *DestinationProfile) { p.RequiredSemantics = []string{"vector:embedding-v3"} }, t0, "required semantics"},
		"expired":           {func(*DestinationProfile) {}, t0.Add(72 * time.Hour), "expired"},
		"withdrawn record":  {func(p *DestinationProfile) { p.Withdrawn = []string{"c2"} }, t0, "withdrawn items"},
		"withdrawn package": {func(p *DestinationProfile) { p.Withdrawn = []string{"urn:uuid:test"} }, t0, "withdrawn"},
	} {
		f := sealed(t, pub, priv)
		p := profile
		c.mut(&p)
		err := f.do(t, priv, Request{Op: "preflight", Actor: role("receiving_operator"), Preflight: &p, Time: c.when})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// a dry run of another count blocks, recorded as blocked
	f := sealed(t, pub, priv)
	p := profile
	d := *p.DryRun
	d.Records = 2
	p.DryRun = &d
	if err := f.do(t, priv, Request{Op: "preflight", Actor: role("receiving_operator"), Preflight: &p}); err != nil {
		t.Fatal(err)
	}
	st := f.state(t)
	if st.Preflight.Ready || st.Events[len(st.Events)-1].Result != ResultBlocked {
		t.Fatal("a dry run of another count did not block")
	}
	if err := f.do(t, priv, Request{Op: "attempt", Actor: role("custodian"), Attempt: &AttemptInput{Recipient: "memory-scope-hygiene/v1", Member: "submission.json", NotBefore: t0, NotAfter: t0.Add(time.Hour)}}); err == nil {
		t.Fatal("an attempt after a blocked preflight")
	}
}

// fakeReport is a report-shaped document (the signature is vouched for by the test, as the
// caller vouches with the service's verifier).
func fakeReport(records int, at time.Time, sig string) []byte {
	b, _ := json.Marshal(map[string]any{"kind": "report", "criteria_id": "memory-scope-hygiene/v1", "family": "generic", "form": "full_text", "variant": "claim-jsonl",
		"records": records, "check_end": at.Format(time.RFC3339), "factors": map[string]any{},
		"signature": map[string]any{"alg": "Ed25519", "key_id": "ed25519:svc", "value": sig}})
	return b
}

func TestReceiptBinding(t *testing.T) {
	pub, priv := key(t)
	f := sealed(t, pub, priv)
	att := func(id string) error {
		return f.do(t, priv, Request{Op: "attempt", Actor: role("custodian"), Attempt: &AttemptInput{AttemptID: id, Recipient: "memory-scope-hygiene/v1", Member: "submission.json", NotBefore: t0, NotAfter: t0.Add(time.Hour)}})
	}
	if err := att("a1"); err != nil {
		t.Fatal(err)
	}
	if err := att("a2"); err != nil {
		t.Fatal(err)
	}
	rep := fakeReport(3, t0.Add(time.Minute), "SIG1")
	// not yet bound: no receipt
	if b := f.state(t).BindReport(rep, true, "ed25519:svc", nil); b.Bound || !strings.Contains(strings.Join(b.Problems, ";"), "not bound") {
		t.Fatalf("bound without a receipt: %+v", b)
	}
	rcpt := func(id string, r []byte, sig string) error {
		return f.do(t, priv, Request{Op: "receipt", Actor: role("receiving_operator"), Receipt: &ReceiptInput{AttemptID: id, Kind: ReceiptKindReport, Report: r, SignatureVerified: true, SignerKeyID: "ed25519:svc", SignatureValue: sig}})
	}
	if err := rcpt("a1", rep, "SIG1"); err != nil {
		t.Fatal(err)
	}
	if b := f.state(t).BindReport(rep, true, "ed25519:svc", nil); !b.Bound || b.AttemptID != "a1" {
		t.Fatalf("not bound: %+v", b)
	}
	// the same report for another attempt is refused
	if err := rcpt("a2", rep, "SIG1"); err == nil || !strings.Contains(err.Error(), "names this report's signature") {
		t.Fatalf("reused report: %v", err)
	}
	// a report of another export (2 records) is an unresolved discrepancy
	if err := rcpt("a2", fakeReport(2, t0.Add(time.Minute), "SIG2"), "SIG2"); err == nil {
		t.Fatal("a report of another export was attached")
	}
	// outside the window
	if err := rcpt("a2", fakeReport(3, t0.Add(2*time.Hour), "SIG3"), "SIG3"); err == nil || !strings.Contains(err.Error(), "window") {
		t.Fatalf("late report: %v", err)
	}
	// an unverified signature never binds
	if b := f.state(t).BindReport(rep, false, "ed25519:svc", nil); b.Bound {
		t.Fatal("an unverified report bound")
	}
	// the report of revision 1 does not bind revision 2
	f2 := sealed(t, pub, priv)
	if b := f2.state(t).BindReport(rep, true, "ed25519:svc", nil); b.Bound {
		t.Fatal("a receipt of another revision bound")
	}
}

func TestSupersede(t *testing.T) {
	pub, priv := key(t)
	f := sealed(t, pub, priv)
	st := f.state(t)
	next := build(t, claims+`{"id":"c4","content_text":"d","tenant":"t0"}`+"\n", priv, 2, st.RevisionRef)
	wrong := build(t, claims, priv, 2, "sha256:00")
	if err := f.do(t, priv, Request{Op: "supersede", Actor: role("custodian"), Supersede: &SupersedeInput{Successor: wrong[mpp.ManifestName], Reason: "r"}}); err == nil {
		t.Fatal("a successor naming another prior was accepted")
	}
	if err := f.do(t, priv, Request{Op: "supersede", Actor: role("custodian"), Supersede: &SupersedeInput{Successor: next[mpp.ManifestName], Reason: "added c4"}}); err != nil {
		t.Fatal(err)
	}
	st = f.state(t)
	if st.Lifecycle != "superseded" || st.SupersededBy != "sha256:"+pack.SHA256Hex(next[mpp.ManifestName]) || !st.Acceptable() {
		t.Fatalf("superseded: %s %s", st.Lifecycle, st.SupersededBy)
	}
	// an assessment on a superseded revision is denied
	if err := f.do(t, priv, Request{Op: "assess", Actor: role("integrity_reviewer"), Assess: &AssessInput{TrustedKey: pub}}); err == nil {
		t.Fatal("assess after supersede")
	}
	// dispose with a hold is refused, then disposed
	if err := f.do(t, priv, Request{Op: "dispose", Actor: role("custodian"), Close: &CloseInput{Reason: "r", RetentionPolicyRef: "ret-1", Holds: []string{"legal-1"}}}); err == nil {
		t.Fatal("dispose under hold")
	}
	if err := f.do(t, priv, Request{Op: "dispose", Actor: role("custodian"), Close: &CloseInput{Reason: "r", RetentionPolicyRef: "ret-1"}}); err != nil {
		t.Fatal(err)
	}
	if st := f.state(t); st.Lifecycle != "disposed" || st.Acceptable() {
		t.Fatal("not disposed")
	}
}

func TestLogTamper(t *testing.T) {
	pub, priv := key(t)
	f := sealed(t, pub, priv)
	// an edited line breaks the signature; a dropped middle line breaks the chain
	lines := bytes.SplitAfter(f.log, []byte("\n"))
	edited := bytes.Replace(f.log, []byte(`"snap-1"`), []byte(`"snap-2"`), 1)
	if _, err := Open(Package{Files: f.files, Log: edited}, f.keys); err == nil {
		t.Fatal("an edited event verified")
	}
	dropped := append(append([]byte{}, lines[0]...), bytes.Join(lines[2:], nil)...)
	if _, err := Open(Package{Files: f.files, Log: dropped}, f.keys); err == nil {
		t.Fatal("a dropped event went unnoticed")
	}
	// an event by an untrusted key changes nothing
	_, other := key(t)
	st := f.state(t)
	line, _, err := Apply(st, f.files, Request{Op: "withdraw", Actor: Actor{"custodian", "p", "d"}, ExpectRevision: st.RevisionRef, Time: t0, Close: &CloseInput{Reason: "x"}}, other)
	if err != nil {
		t.Fatal(err)
	}
	st, err = Open(Package{Files: f.files, Log: append(f.log, line...)}, f.keys)
	if err != nil || st.Lifecycle != "sealed" || st.Untrusted != 1 || st.Acceptable() {
		t.Fatalf("untrusted withdraw: %v %s %d", err, st.Lifecycle, st.Untrusted)
	}
	// a changed sealed byte makes every event name another revision
	files := map[string][]byte{}
	for k, v := range f.files {
		files[k] = v
	}
	files[mpp.ManifestName] = bytes.Replace(files[mpp.ManifestName], []byte(`"revision":1`), []byte(`"revision":1 `), 1)
	st, _ = Open(Package{Files: files, Log: f.log}, f.keys)
	if len(st.Problems) == 0 || st.Lifecycle != "draft" {
		t.Fatal("a changed manifest kept its sealed state")
	}
}

func TestNewPackageID(t *testing.T) {
	a, _ := NewPackageID(nil)
	b, _ := NewPackageID(nil)
	if a == b || !strings.HasPrefix(a, "urn:uuid:") || len(a) != 45 {
		t.Fatalf("%s %s", a, b)
	}
}
