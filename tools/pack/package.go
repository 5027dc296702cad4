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
	"sort"
	"time"

	"go.yaml.in/yaml/v3"

	scopehygiene "github.com/scopehygiene/scope-hygiene"
	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
	"github.com/scopehygiene/scope-hygiene/pack/portability"
)

// packageFlags are the options of a Memory Portability Package (--package DIR).
type packageFlags struct {
	dir, signKey, id, kind, captureTime, cutoff, hashSourceKey string
	emptyReason, supersedes, layout                            string
	unsigned, hashSource, keepNames                            bool
	now                                                        func() time.Time
}

func (p *packageFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.dir, "package", "", "write a Memory Portability Package to this new directory (manifest, detached signature, submission part(s), inventory); see docs/pack.md")
	fs.StringVar(&p.signKey, "sign-key", "", "--package: sign the manifest with this Ed25519 private key (PKCS #8 PEM)")
	fs.BoolVar(&p.unsigned, "unsigned", false, "--package: declare the package explicitly unsigned")
	fs.StringVar(&p.id, "package-id", "", "--package: the package identity of revision 1 (default: a fresh urn:uuid; never derived from names or content)")
	fs.StringVar(&p.supersedes, "supersedes", "", "--package: write the next revision of the package in this folder (same id, revision + 1, its prior_revision_ref)")
	fs.BoolVar(&p.keepNames, "keep-names", false, "--package: keep input file names as given in the manifest and inventory (default: positional labels records-1, history-1, ...)")
	fs.StringVar(&p.emptyReason, "empty-selection-reason", "", "--package: accept inputs holding no records, as an empty authorized selection with this reason")
	fs.StringVar(&p.layout, "layout", "", "--package: \"bagit\" writes the package as an RFC 8493 bag (the package in data/)")
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
	if p.dir == "" && (p.signKey != "" || p.unsigned || p.id != "" || p.kind != "" || p.keepNames || p.emptyReason != "" || p.supersedes != "" || p.layout != "") {
		return errors.New("pack: --sign-key, --unsigned, --package-id, --package-kind, --keep-names, --empty-selection-reason, --supersedes and --layout apply to --package DIR")
	}
	if p.layout != "" && p.layout != "bagit" {
		return errors.New("pack: --layout takes bagit")
	}
	if p.id != "" && p.supersedes != "" {
		return errors.New("pack: a later revision keeps the id of the package it supersedes: give --package-id or --supersedes")
	}
	opt.AllowEmpty = p.emptyReason != ""
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
	po := mpp.Options{
		ID: p.id, Revision: 1, Kind: p.kind, CaptureTime: capture, Cutoff: cutoff, TargetCriteriaID: target,
		KeepNames: p.keepNames, EmptySelectionReason: p.emptyReason,
	}
	if p.supersedes != "" {
		prior, err := openFolder(p.supersedes)
		if err != nil {
			return err
		}
		st, err := portability.Open(portability.Package{Files: prior.files}, nil)
		if err != nil {
			return err
		}
		po.ID, po.Revision, po.PriorRevisionRef = st.PackageID, st.Revision+1, st.RevisionRef
	}
	if po.ID == "" {
		if po.ID, err = portability.NewPackageID(nil); err != nil {
			return err
		}
	}
	built, err := mpp.Build(res, in, parts, po)
	if err != nil {
		return err
	}
	sig, err := mpp.SignManifest(built.Files[mpp.ManifestName], priv)
	if err != nil {
		return err
	}
	built.Files[mpp.SignatureName] = sig
	if err := writeFolder(p.dir, built.Files, p.layout == "bagit", capture); err != nil {
		return err
	}
	state := "unsigned"
	if priv != nil {
		state = "signed by " + mpp.KeyID(priv.Public().(ed25519.PublicKey))
	}
	m := built.Manifest
	fmt.Fprintf(stderr, "pack: package %s revision %d (%s, draft) in %s: %d records in %d part(s), omissions %d blocking / %d non-blocking, revision ref %s, %s\n",
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
