package portability

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// lifecycleModel is the test's own reading of profile.json: the state a package is in and what
// each operation needs, kept apart from the implementation it checks.
type lifecycleModel struct {
	state    string
	recorded map[string]int
	closed   string // withdrawn or disposed, claimed by any event
	poisoned bool   // an untrusted event is in the log: nothing more is appended
}

var modelOps = map[string]struct {
	roles, from []string
	to          string
	once        bool
	after       []string
}{
	"describe":   {[]string{"export_curator", "custodian"}, []string{"draft"}, "", true, nil},
	"bind":       {[]string{"export_curator"}, []string{"draft"}, "", true, []string{"describe"}},
	"seal":       {[]string{"custodian"}, []string{"draft"}, "sealed", false, []string{"describe", "bind"}},
	"assess":     {[]string{"integrity_reviewer"}, []string{"sealed"}, "", false, nil},
	"conditions": {[]string{"policy_reviewer"}, []string{"sealed"}, "", true, nil},
	"preflight":  {[]string{"receiving_operator"}, []string{"sealed"}, "", false, []string{"conditions"}},
	"attempt":    {[]string{"custodian"}, []string{"sealed"}, "", false, []string{"conditions", "preflight"}},
	"receipt":    {[]string{"receiving_operator"}, []string{"sealed", "superseded"}, "", false, []string{"attempt"}},
	"supersede":  {[]string{"custodian"}, []string{"sealed"}, "superseded", false, nil},
	"withdraw":   {[]string{"custodian"}, []string{"sealed", "superseded"}, "withdrawn", false, nil},
	"dispose":    {[]string{"custodian"}, []string{"draft", "sealed", "superseded", "withdrawn"}, "disposed", false, nil},
}

var fuzzOps = []string{"describe", "bind", "seal", "assess", "conditions", "preflight", "attempt", "receipt", "supersede", "withdraw", "dispose"}
var fuzzRoles = []string{"custodian", "export_curator", "integrity_reviewer", "receiving_operator", "policy_reviewer", "intruder"}

func (m *lifecycleModel) allows(op, role string) bool {
	o := modelOps[op]
	if !slices.Contains(o.roles, role) || !slices.Contains(o.from, m.state) || (o.once && m.recorded[op] > 0) {
		return false
	}
	for _, a := range o.after {
		if m.recorded[a] == 0 {
			return false
		}
	}
	return true
}

// FuzzLifecycle drives the operations in any order, by any role, with valid or broken inputs,
// trusted or untrusted keys, stale expectations and edits of the sealed bytes, and checks after
// every step that: no sealed byte was written; the log only grew by the line returned; the
// replayed state is the model's; a refused, denied or stale operation changed nothing; an
// untrusted event changed nothing; and nothing was sealed, trusted or attempted over edited
// bytes.
func FuzzLifecycle(f *testing.F) {
	pub, priv := key(f)
	_, stranger := key(f)
	base := build(f, claims, priv, 1, "")
	ref := "sha256:" + pack.SHA256Hex(base[mpp.ManifestName])
	next := build(f, claims+`{"id":"c9","content_text":"z","tenant":"t0"}`+"\n", priv, 2, ref)
	f.Add([]byte{0, 1, 0, 1, 1, 0, 2, 0, 0, 4, 4, 0, 5, 3, 0, 6, 0, 0, 7, 3, 0, 9, 0, 0, 3, 2, 0})
	f.Add([]byte{0, 1, 0, 1, 1, 0, 2, 0, 0, 12, 0, 0, 2, 0, 0, 3, 2, 0})
	f.Add([]byte{0, 1, 1, 0, 1, 0, 1, 1, 0, 2, 0, 4, 2, 0, 0, 8, 0, 0, 10, 0, 0})
	f.Add([]byte{0, 1, 0, 1, 1, 0, 2, 0, 0, 4, 4, 0, 5, 3, 2, 5, 3, 0, 6, 0, 0, 7, 3, 0, 7, 3, 0, 6, 0, 0, 7, 3, 1, 11, 0, 0, 8, 0, 0})
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) > 3*40 {
			prog = prog[:3*40]
		}
		files := maps.Clone(base)
		var log []byte
		m := &lifecycleModel{state: "draft", recorded: map[string]int{}}
		tampered := false
		attempts := 0
		for step := 0; step+2 < len(prog); step += 3 {
			sel, roleB, variant := int(prog[step]), prog[step+1], prog[step+2]
			now := t0.Add(time.Duration(step) * time.Second)
			if sel%13 == 12 { // an edit of the sealed bytes from outside
				files["submission.json"] = append(bytes.Clone(files["submission.json"][:len(files["submission.json"])-1]), '!')
				tampered = true
				continue
			}
			if sel%13 == 11 { // a stale expectation: nothing may be written
				st, _ := Open(Package{Files: files, Log: log}, []ed25519.PublicKey{pub})
				line, _, err := Apply(st, files, Request{Op: "describe", Actor: Actor{"custodian", "p", "d"}, ExpectRevision: "sha256:" + strconv.Itoa(step), Time: now, Describe: &DescribeInput{SnapshotRef: "s"}}, priv)
				if line != nil || !errors.Is(err, ErrStale) {
					t.Fatalf("step %d: a stale request wrote or was not refused as stale: %v", step, err)
				}
				continue
			}
			op := fuzzOps[sel%11]
			role := fuzzRoles[int(roleB)%len(fuzzRoles)]
			bad := variant&1 == 1
			signer := priv
			untrusted := variant&4 == 4
			if untrusted {
				signer = stranger
			}
			req := Request{Op: op, Actor: Actor{role, "fuzz", "decision"}, Time: now}
			switch op {
			case "describe":
				req.Describe = &DescribeInput{SnapshotRef: map[bool]string{false: "snap"}[bad]}
			case "bind":
				c := *profile.Criteria
				if bad {
					c.ID = "other"
				}
				req.Bind = &BindInput{Criteria: c}
			case "seal":
				req.Seal = &SealInput{PackageKey: map[bool]ed25519.PublicKey{false: pub}[bad]}
			case "assess":
				req.Assess = &AssessInput{TrustedKey: pub}
			case "conditions":
				exp := now.Add(48 * time.Hour)
				if bad {
					exp = now.Add(-time.Hour)
				}
				req.Conditions = &ConditionsInput{Recipient: "memory-scope-hygiene/v1", Purpose: "audit", PolicyRef: "p", ExpiresAt: exp}
			case "preflight":
				p := profile
				if bad {
					p.Withdrawn = []string{"c1"}
				}
				if variant&2 == 2 {
					d := *p.DryRun
					d.Records++
					p.DryRun = &d
				}
				req.Preflight = &p
			case "attempt":
				attempts++
				r := "memory-scope-hygiene/v1"
				if bad {
					r = "elsewhere"
				}
				req.Attempt = &AttemptInput{AttemptID: "a" + strconv.Itoa(attempts), Recipient: r, Member: "submission.json", NotBefore: now, NotAfter: now.Add(time.Hour)}
			case "receipt":
				sig := "S" + strconv.Itoa(step)
				if bad {
					sig = "S0"
				}
				req.Receipt = &ReceiptInput{AttemptID: "a" + strconv.Itoa(attempts), Kind: ReceiptKindReport, Report: fakeReport(3, now.Add(time.Second), sig), SignatureVerified: true, SignerKeyID: "ed25519:svc", SignatureValue: sig}
			case "supersede":
				s := next[mpp.ManifestName]
				if bad {
					s = base[mpp.ManifestName]
				}
				req.Supersede = &SupersedeInput{Successor: s, Reason: "r"}
			case "withdraw", "dispose":
				req.Close = &CloseInput{Reason: "r", RetentionPolicyRef: "ret"}
				if bad && op == "dispose" {
					req.Close.Holds = []string{"hold"}
				}
			}
			st, err := Open(Package{Files: files, Log: log}, []ed25519.PublicKey{pub})
			if err != nil {
				t.Fatalf("step %d: the log the operations wrote does not replay: %v", step, err)
			}
			req.ExpectRevision = st.RevisionRef
			before := maps.Clone(files)
			line, ev, err := Apply(st, files, req, signer)
			if !maps.EqualFunc(before, files, bytes.Equal) {
				t.Fatalf("step %d: %s wrote sealed bytes", step, op)
			}
			var refusal *Refusal
			switch {
			case err == nil || errors.As(err, &refusal):
				if m.poisoned || !m.allows(op, role) {
					t.Fatalf("step %d: %s by %s in %s was not denied (poisoned %v)", step, op, role, m.state, m.poisoned)
				}
				if line == nil || ev == nil {
					t.Fatalf("step %d: %s recorded nothing", step, op)
				}
			default:
				if line != nil {
					t.Fatalf("step %d: a denied %s returned a line", step, op)
				}
				if !m.poisoned && m.allows(op, role) {
					t.Fatalf("step %d: %s by %s in %s denied: %v", step, op, role, m.state, err)
				}
				continue
			}
			if err == nil && tampered && (op == "seal" || op == "attempt") {
				t.Fatalf("step %d: %s recorded over edited sealed bytes", step, op)
			}
			log = append(log, line...)
			if untrusted {
				m.poisoned = true
				if err == nil && (op == "withdraw" || op == "dispose") && m.closed != "disposed" {
					m.closed = map[string]string{"withdraw": "withdrawn", "dispose": "disposed"}[op]
				}
			} else if err == nil {
				m.recorded[op]++
				if o := modelOps[op]; o.to != "" {
					m.state = o.to
				}
				if op == "withdraw" || op == "dispose" {
					m.closed = m.state
				}
			}
			again, err := Open(Package{Files: files, Log: log}, []ed25519.PublicKey{pub})
			if err != nil {
				t.Fatalf("step %d: replay: %v", step, err)
			}
			if again.Lifecycle != m.state || again.ClosedClaim != m.closed {
				t.Fatalf("step %d: after %s the replayed state is %s (closed %q), the model's %s (closed %q)", step, op, again.Lifecycle, again.ClosedClaim, m.state, m.closed)
			}
			if again.Acceptable() != (m.closed == "" && m.state != "withdrawn" && m.state != "disposed") {
				t.Fatalf("step %d: acceptable %v in state %s closed %q", step, again.Acceptable(), m.state, m.closed)
			}
			if n := len(again.Assessments); tampered && op == "assess" && err == nil && !untrusted && n > 0 && again.Assessments[n-1].Trust == "accepted" {
				t.Fatalf("step %d: edited bytes assessed as trusted", step)
			}
		}
	})
}

// FuzzOpen: an event log and a report of any bytes never panic the replay or the report binding,
// and whatever replays keeps to the profile: a state the profile names, closed claims never
// acceptable, and no state beyond draft without a trusted seal.
func FuzzOpen(f *testing.F) {
	pub, priv := key(f)
	fo := sealed(f, pub, priv)
	f.Add(fo.log, fakeReport(3, t0, "S"))
	f.Add(fo.log[:len(fo.log)/2], []byte(`{"signature":{"value":"x"}}`))
	f.Add([]byte("{}\n"), []byte("null"))
	f.Fuzz(func(t *testing.T, log, report []byte) {
		st, err := Open(Package{Files: fo.files, Log: log}, []ed25519.PublicKey{pub})
		if st == nil {
			t.Fatalf("no state: %v", err)
		}
		_ = st.BindReport(report, true, "ed25519:svc", func(string) *bool { return nil })
		if !slices.Contains(lifecycle.States, st.Lifecycle) {
			t.Fatalf("state %q is not in the profile", st.Lifecycle)
		}
		if st.ClosedClaim != "" && st.Acceptable() {
			t.Fatal("a closed claim verified as acceptable")
		}
		if st.Lifecycle != "draft" && st.Lifecycle != "disposed" && st.Seal == nil {
			t.Fatalf("state %s without a trusted seal", st.Lifecycle)
		}
	})
}
