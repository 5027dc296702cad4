package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	scopehygiene "github.com/scopehygiene/scope-hygiene"
	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

// packageFlags are the options of a Memory Portability Package (--package DIR).
type packageFlags struct {
	dir, signKey, id, kind, captureTime, cutoff, hashSourceKey string
	unsigned, hashSource                                       bool
	revision                                                   int
	now                                                        func() time.Time
}

func (p *packageFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.dir, "package", "", "write a Memory Portability Package to this new directory (manifest, detached signature, submission part(s), inventory); see docs/pack.md")
	fs.StringVar(&p.signKey, "sign-key", "", "--package: sign the manifest with this Ed25519 private key (PKCS #8 PEM)")
	fs.BoolVar(&p.unsigned, "unsigned", false, "--package: declare the package explicitly unsigned")
	fs.StringVar(&p.id, "package-id", "", "--package: the package identity (default: derived from the input digests, source, form and cutoff)")
	fs.IntVar(&p.revision, "revision", 1, "--package: the package revision")
	fs.StringVar(&p.kind, "package-kind", "", "--package: snapshot or selection (default: selection for a scope-filtered pack or search results, else snapshot)")
	fs.StringVar(&p.captureTime, "capture-time", "", "capture time, RFC 3339 (default: now)")
	fs.StringVar(&p.cutoff, "cutoff", "", "the time the dump stands for, RFC 3339 (default: the capture time); Mem0 expiration dates before it mark memories expired")
	fs.BoolVar(&p.hashSource, "hash-source", false, "with --hash-only: replace each source value by its HMAC-SHA-256 under a key (equality kept, text gone)")
	fs.StringVar(&p.hashSourceKey, "hash-source-key", "", "with --hash-source: file holding the key (default: a fresh random key, never written)")
}

func (p *packageFlags) times() (capture, cutoff time.Time, err error) {
	now := time.Now
	if p.now != nil {
		now = p.now
	}
	capture = now().UTC().Truncate(time.Second)
	if p.captureTime != "" {
		if capture, err = time.Parse(time.RFC3339, p.captureTime); err != nil {
			return capture, cutoff, errors.New("pack: --capture-time is not an RFC 3339 time")
		}
	}
	cutoff = capture
	if p.cutoff != "" {
		if cutoff, err = time.Parse(time.RFC3339, p.cutoff); err != nil {
			return capture, cutoff, errors.New("pack: --cutoff is not an RFC 3339 time")
		}
	}
	return capture, cutoff, nil
}

// packOptions sets the pack options the package flags carry (the cutoff, the source key).
func (p *packageFlags) packOptions(opt *pack.Options, hashOnly bool) error {
	_, cutoff, err := p.times()
	if err != nil {
		return err
	}
	opt.Cutoff = cutoff
	if p.hashSourceKey != "" && !p.hashSource {
		return errors.New("pack: --hash-source-key needs --hash-source")
	}
	if p.hashSource {
		if !hashOnly {
			return errors.New("pack: --hash-source applies to --hash-only")
		}
		if p.hashSourceKey != "" {
			k, err := os.ReadFile(p.hashSourceKey)
			if err != nil {
				return fmt.Errorf("pack: read %s: %w", p.hashSourceKey, errors.Unwrap(err))
			}
			if len(k) < 16 {
				return errors.New("pack: the --hash-source-key file holds fewer than 16 bytes")
			}
			opt.HashSourceKey = k
		} else {
			opt.HashSourceKey = make([]byte, 32)
			if _, err := rand.Read(opt.HashSourceKey); err != nil {
				return fmt.Errorf("pack: source key: %w", err)
			}
		}
	}
	if p.dir == "" && (p.signKey != "" || p.unsigned || p.id != "" || p.kind != "") {
		return errors.New("pack: --sign-key, --unsigned, --package-id and --package-kind apply to --package DIR")
	}
	if p.dir != "" && (p.signKey == "") == !p.unsigned {
		return errors.New("pack: a package is signed (--sign-key KEY) or explicitly --unsigned: give exactly one")
	}
	return nil
}

// criteriaID reads the criteria id from the embedded criteria file (the target of every package).
func criteriaID() (string, error) {
	var c struct {
		ID string `yaml:"criteria_id"`
	}
	if err := yaml.Unmarshal(scopehygiene.CriteriaYAML, &c); err != nil || c.ID == "" {
		return "", errors.New("pack: the embedded criteria carry no criteria_id")
	}
	return c.ID, nil
}

func readPrivateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pack: read %s: %w", path, errors.Unwrap(err))
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("pack: %s: not a PEM PRIVATE KEY block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pack: %s: not a PKCS #8 key", path)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("pack: %s: not an Ed25519 key", path)
	}
	return priv, nil
}

// write builds the package and writes it to a new directory (refusing an existing one).
func (p *packageFlags) write(res *pack.Result, in pack.Inputs, split bool, stderr io.Writer) error {
	capture, cutoff, err := p.times()
	if err != nil {
		return err
	}
	target, err := criteriaID()
	if err != nil {
		return err
	}
	var priv ed25519.PrivateKey
	if p.signKey != "" {
		if priv, err = readPrivateKey(p.signKey); err != nil {
			return err
		}
	}
	parts := []*pack.Submission{res.Submission}
	body, err := res.Submission.Marshal()
	if err != nil {
		return err
	}
	if err := pack.CheckCaps(len(res.Submission.Records), body); err != nil {
		if !split {
			return err
		}
		subs, notes, err := pack.Split(res.Submission)
		if err != nil {
			return err
		}
		parts = subs
		res.Inventory.SetOutputs(nil, notes)
		for _, n := range notes {
			fmt.Fprintln(stderr, "pack:", n)
		}
	}
	built, err := pack.BuildPackage(res, in, parts, pack.PackageOptions{
		ID: p.id, Revision: p.revision, Kind: p.kind, CaptureTime: capture, Cutoff: cutoff, TargetCriteriaID: target,
	})
	if err != nil {
		return err
	}
	sig, err := pack.SignManifest(built.Files[pack.ManifestName], priv)
	if err != nil {
		return err
	}
	built.Files[pack.SignatureName] = sig
	if err := os.Mkdir(p.dir, 0o700); err != nil {
		return fmt.Errorf("pack: package directory: %w", errors.Unwrap(err))
	}
	for _, name := range sortedNames(built.Files) {
		if err := os.WriteFile(filepath.Join(p.dir, name), built.Files[name], 0o600); err != nil {
			return fmt.Errorf("pack: write %s: %w", name, errors.Unwrap(err))
		}
	}
	state := "unsigned"
	if priv != nil {
		state = "signed by " + pack.KeyID(priv.Public().(ed25519.PublicKey))
	}
	m := built.Manifest
	fmt.Fprintf(stderr, "pack: package %s revision %d (%s) in %s: %d records in %d part(s), omissions %d blocking / %d non-blocking, manifest %s, %s\n",
		m.PackageID, m.Revision, m.PackageKind, p.dir, m.Totals.Records, m.Totals.Parts, m.Totals.OmissionsBlocking, m.Totals.OmissionsNonBlocking, built.Digest, state)
	return nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// readDir reads every regular file of a package directory (a subdirectory is a mismatch).
func readDir(dir string) (map[string][]byte, []string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("pack: read package %s: %w", dir, errors.Unwrap(err))
	}
	files := map[string][]byte{}
	var odd []string
	for _, e := range ents {
		if !e.Type().IsRegular() {
			odd = append(odd, e.Name()+": not a regular file")
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, nil, fmt.Errorf("pack: read %s: %w", e.Name(), errors.Unwrap(err))
		}
		files[e.Name()] = b
	}
	return files, odd, nil
}

const verifyUsage = `usage: pack verify [--key KEY] [--sources DIR] [--report REPORT --report-key KEY [--part FILE]] PACKAGE

Re-computes every digest of the package, checks the manifest's signature, and lists each mismatch.
  --key KEY         the operator's Ed25519 key (public or private PEM) the package must be signed with
  --sources DIR     also re-check the input files (by their recorded names, under DIR) and each
                    record's source bytes
  --report REPORT   a signed audit report of this package: checks its signature against
                    --report-key (a PEM key, or the criteria document saved from GET /criteria),
                    that its criteria id is the package's target, and that its record count and
                    every record id it names match the part it was made from (--part names it)
Exit codes: 0 verified; 1 a mismatch; 2 usage or unreadable input.
`

func verifyCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pack verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, verifyUsage) }
	key := fs.String("key", "", "")
	sources := fs.String("sources", "", "")
	report := fs.String("report", "", "")
	reportKey := fs.String("report-key", "", "")
	part := fs.String("part", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 || (*report != "") != (*reportKey != "") || (*part != "" && *report == "") {
		fs.Usage()
		return 2
	}
	dir := fs.Arg(0)
	files, odd, err := readDir(dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var pub ed25519.PublicKey
	if *key != "" {
		if pub, err = sign.ReadPublicKey(*key); err != nil {
			fmt.Fprintln(stderr, "pack verify:", err)
			return 2
		}
	}
	var srcs map[string][]byte
	if *sources != "" {
		srcs = map[string][]byte{}
	}
	v := pack.VerifyPackage(files, pub, nil)
	if srcs != nil && v.Manifest != nil {
		for _, in := range v.Manifest.Inputs {
			if b, err := os.ReadFile(filepath.Join(*sources, in.File)); err == nil {
				srcs[in.File] = b
			} else if b, err := os.ReadFile(filepath.Join(*sources, filepath.Base(in.File))); err == nil {
				srcs[in.File] = b
			}
		}
		v = pack.VerifyPackage(files, pub, srcs)
	}
	mismatches := append(odd, v.Mismatches...)
	var rc *pack.ReportCheck
	if *report != "" && v.Manifest != nil {
		rb, err := os.ReadFile(*report)
		if err != nil {
			fmt.Fprintf(stderr, "pack verify: read %s: %v\n", *report, errors.Unwrap(err))
			return 2
		}
		rpub, err := sign.ReadPublicKey(*reportKey)
		if err != nil {
			fmt.Fprintln(stderr, "pack verify:", err)
			return 2
		}
		if _, err := sign.Verify(rb, rpub); err != nil {
			mismatches = append(mismatches, "report: "+err.Error())
		}
		rc = pack.CheckReport(v.Manifest, rb, *part)
		for _, m := range rc.Mismatches {
			mismatches = append(mismatches, "report: "+m)
		}
	}
	printVerification(stdout, dir, v, rc, len(srcs) > 0, mismatches)
	if len(mismatches) > 0 {
		return 1
	}
	return 0
}

func printVerification(w io.Writer, dir string, v *pack.Verification, rc *pack.ReportCheck, sources bool, mismatches []string) {
	if len(mismatches) == 0 {
		fmt.Fprintf(w, "OK %s\n", dir)
	} else {
		fmt.Fprintf(w, "FAIL %s: %d mismatch(es)\n", dir, len(mismatches))
	}
	if m := v.Manifest; m != nil {
		fmt.Fprintf(w, "  package      %s revision %d (%s)\n", m.PackageID, m.Revision, m.PackageKind)
		fmt.Fprintf(w, "  source       %s, captured %s, cutoff %s, pack %s\n", m.SourceSystem, m.CaptureTime, m.Cutoff, m.PackVersion)
		fmt.Fprintf(w, "  target       %s (%s, %s, %s)\n", m.TargetCriteriaID, m.Family, m.Form, m.Variant)
		fmt.Fprintf(w, "  records      %d in %d part(s); %d input file(s), %d bytes in, %d bytes out\n", m.Totals.Records, m.Totals.Parts, m.Totals.InputFiles, m.Totals.InputBytes, m.Totals.OutputBytes)
		fmt.Fprintf(w, "  omissions    %d blocking, %d non-blocking\n", m.Totals.OmissionsBlocking, m.Totals.OmissionsNonBlocking)
		fmt.Fprintf(w, "  manifest     %s\n", v.Digest)
		switch {
		case !v.Signed:
			fmt.Fprintln(w, "  signature    UNSIGNED (declared)")
		case v.SignedBy != "":
			fmt.Fprintf(w, "  signature    Ed25519, %s, verified\n", v.SignedBy)
		default:
			fmt.Fprintln(w, "  signature    Ed25519, NOT verified")
		}
		if sources {
			fmt.Fprintln(w, "  sources      re-checked")
		} else {
			fmt.Fprintln(w, "  sources      not re-checked (no --sources)")
		}
	}
	if rc != nil {
		p := rc.Part
		if p == "" {
			p = "no part"
		}
		fmt.Fprintf(w, "  report       %d records, %d record ids named, made from %s\n", rc.Records, rc.IDsNamed, p)
	}
	for _, m := range mismatches {
		fmt.Fprintf(w, "  mismatch     %s\n", strings.TrimSpace(m))
	}
}
