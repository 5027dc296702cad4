package main

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scopehygiene/scope-hygiene/pack/bagit"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
	"github.com/scopehygiene/scope-hygiene/pack/portability"
	"github.com/scopehygiene/scope-hygiene/schema"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

const verifyUsage = `usage: pack verify [--key KEY] [--event-key KEY]... [--sources DIR] [--report REPORT --report-key KEY] PACKAGE

Re-computes every digest of the package, checks the manifest against the published schema and
its signature, replays the event log and shows the package's state, and lists each mismatch.
  --key KEY         the operator's Ed25519 key (public or private PEM): anything but a signature
                    by this key that verifies fails (unsigned, invalid, unknown key, MAC-only);
                    the key is also trusted for the event log
  --event-key KEY   a further key trusted for the event log (repeatable)
  --sources DIR     also re-check the input files: only regular files directly inside DIR, each
                    read no further than its declared size (labelled inputs are found by size and
                    digest; kept names only as plain names inside DIR)
  --report REPORT   a signed audit report: checks its signature against --report-key (a PEM key,
                    or the criteria document saved from GET /criteria) and binds it only through
                    a receipt in the log that links it to an attempt of this revision
Exit codes: 0 verified; 1 a mismatch, an unbound report, or a withdrawn or disposed package;
2 usage or unreadable input.
`

type keyList []string

func (k *keyList) String() string     { return strings.Join(*k, ",") }
func (k *keyList) Set(s string) error { *k = append(*k, s); return nil }

var (
	pubSchemaOnce sync.Once
	pubSchemas    map[string]*jsonschema.Schema
	pubSchemaErr  error
)

// publishedSchema compiles the embedded schema/pack-NAME.schema.json.
func publishedSchema(name string) (*jsonschema.Schema, error) {
	pubSchemaOnce.Do(func() {
		pubSchemas = map[string]*jsonschema.Schema{}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		for _, n := range []string{"manifest", "signature", "event", "records"} {
			b, ok := schema.Get("pack-" + n + schema.Suffix)
			if !ok {
				pubSchemaErr = errors.New("pack: the published schema pack-" + n + " is not embedded")
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				pubSchemaErr = fmt.Errorf("pack: schema pack-%s: %w", n, err)
				return
			}
			url := schema.IDBase + "pack-" + n + schema.Suffix
			if err := c.AddResource(url, doc); err != nil {
				pubSchemaErr = fmt.Errorf("pack: schema pack-%s: %w", n, err)
				return
			}
			if pubSchemas[n], err = c.Compile(url); err != nil {
				pubSchemaErr = fmt.Errorf("pack: schema pack-%s: %w", n, err)
				return
			}
		}
	})
	return pubSchemas[name], pubSchemaErr
}

// schemaProblems validates b against a published pack schema; it names the failing locations,
// never the values.
func schemaProblems(name, file string, b []byte) []string {
	s, err := publishedSchema(name)
	if err != nil {
		return []string{err.Error()}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return []string{file + ": not JSON"}
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		locs := map[string]bool{}
		if errors.As(err, &ve) {
			for _, l := range leafLocations(ve) {
				locs[l] = true
			}
		}
		ls := sortedNames(locs)
		if len(ls) > 5 {
			ls = append(ls[:5], fmt.Sprintf("and %d more", len(ls)-5))
		}
		return []string{fmt.Sprintf("%s: does not validate against schema/pack-%s.schema.json at %s", file, name, strings.Join(ls, ", "))}
	}
	return nil
}

func leafLocations(ve *jsonschema.ValidationError) []string {
	if len(ve.Causes) == 0 {
		return []string{"/" + strings.Join(ve.InstanceLocation, "/")}
	}
	var out []string
	for _, c := range ve.Causes {
		out = append(out, leafLocations(c)...)
	}
	return out
}

// verifyFlags are the flags of pack verify.
type verifyFlags struct {
	key, sources, report, reportKey string
	eventKeys                       keyList
}

// verifyCmd verifies a package folder: its sealed members and their schemas, its signature, its
// sources and its report when given, and the replayed event log; it prints every mismatch.
func verifyCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pack verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, verifyUsage) }
	var c verifyFlags
	fs.StringVar(&c.key, "key", "", "")
	fs.Var(&c.eventKeys, "event-key", "")
	fs.StringVar(&c.sources, "sources", "", "")
	fs.StringVar(&c.report, "report", "", "")
	fs.StringVar(&c.reportKey, "report-key", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 || (c.report != "") != (c.reportKey != "") {
		fs.Usage()
		return 2
	}
	dir := fs.Arg(0)
	f, err := openFolder(dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	pub, trusted, err := c.keys()
	if err != nil {
		fmt.Fprintln(stderr, "pack verify:", err)
		return 2
	}
	mismatches, err := folderProblems(dir, f)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	v := mpp.Verify(f.files, pub, nil)
	sourcesChecked := c.sources != "" && v.Manifest != nil
	if sourcesChecked {
		srcs, probs := readSources(c.sources, v.Manifest)
		mismatches = append(mismatches, probs...)
		v = mpp.Verify(f.files, pub, srcs)
	}
	mismatches = append(mismatches, v.Mismatches...)
	var st *portability.State
	if v.Manifest != nil {
		var probs []string
		st, probs = replayLog(f, trusted)
		mismatches = append(mismatches, probs...)
	}
	var rb *reportResult
	if c.report != "" && v.Manifest != nil {
		if rb, err = checkReport(c.report, c.reportKey, st, v.Manifest, f.files); err != nil {
			fmt.Fprintln(stderr, "pack verify:", err)
			return 2
		}
		mismatches = append(mismatches, rb.problems...)
	}
	printVerification(stdout, dir, v, st, len(trusted) > 0, rb, sourcesChecked, mismatches)
	if len(mismatches) > 0 {
		return 1
	}
	return 0
}

// keys are the operator's key (--key, nil when not given) and the keys trusted for the event
// log: the operator's and every --event-key.
func (c *verifyFlags) keys() (ed25519.PublicKey, []ed25519.PublicKey, error) {
	var pub ed25519.PublicKey
	var trusted []ed25519.PublicKey
	if c.key != "" {
		var err error
		if pub, err = sign.ReadPublicKey(c.key); err != nil {
			return nil, nil, err
		}
		trusted = append(trusted, pub)
	}
	for _, k := range c.eventKeys {
		p, err := sign.ReadPublicKey(k)
		if err != nil {
			return nil, nil, err
		}
		trusted = append(trusted, p)
	}
	return pub, trusted, nil
}

// folderProblems are what the folder's shape and the published schemas say before the package
// is verified: stray entries, the bag's own checks (a bagged folder), and the schema of the
// manifest, the signature and the record index.
func folderProblems(dir string, f *folder) ([]string, error) {
	mismatches := append([]string{}, f.odd...)
	if f.bag {
		all, err := readBag(dir)
		if err != nil {
			return nil, err
		}
		for _, p := range bagit.Validate(all) {
			mismatches = append(mismatches, "bag: "+p)
		}
	}
	for _, m := range []struct{ schema, file string }{{"manifest", mpp.ManifestName}, {"signature", mpp.SignatureName}, {"records", mpp.RecordIndexName}} {
		if b, ok := f.files[m.file]; ok {
			mismatches = append(mismatches, schemaProblems(m.schema, m.file, b)...)
		}
	}
	return mismatches, nil
}

// replayLog replays the folder's event log with the trusted keys: the state (nil when the log
// cannot be read) and the log's problems (its events' schema, untrusted events when keys were
// given, a state not acceptable for use).
func replayLog(f *folder, trusted []ed25519.PublicKey) (*portability.State, []string) {
	var problems []string
	st, err := portability.Open(portability.Package{Files: f.files, Log: f.log}, trusted)
	if err != nil {
		problems = append(problems, err.Error())
	}
	if st == nil {
		return nil, problems
	}
	for _, line := range bytes.SplitAfter(f.log, []byte("\n")) {
		if len(line) > 0 {
			if p := schemaProblems("event", mpp.EventLogName, line); p != nil {
				problems = append(problems, p...)
				break
			}
		}
	}
	if len(trusted) > 0 {
		problems = append(problems, st.Problems...)
	}
	if !st.Acceptable() {
		problems = append(problems, "the package is "+st.ShownState()+": it is not acceptable for use")
	}
	return st, problems
}

// reportResult is what verification could say about a report.
type reportResult struct {
	verified   bool
	keyID      string
	binding    *portability.ReportBinding
	consistent string // the part it is consistent with ("" none), informative only
	problems   []string
}

func checkReport(path, keyPath string, st *portability.State, m *mpp.Manifest, files map[string][]byte) (*reportResult, error) {
	rb, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, errors.Unwrap(err))
	}
	rpub, err := sign.ReadPublicKey(keyPath)
	if err != nil {
		return nil, err
	}
	r := &reportResult{}
	blk, err := sign.Verify(rb, rpub)
	if err != nil {
		r.problems = append(r.problems, "report: "+err.Error())
	} else {
		r.verified, r.keyID = true, blk.KeyID
	}
	rc := mpp.CheckReport(m, rb, "")
	if len(rc.Mismatches) == 0 {
		r.consistent = rc.Part
	}
	if st == nil {
		r.problems = append(r.problems, "report: not bound: the package's log could not be read")
		return r, nil
	}
	r.binding = st.BindReport(rb, r.verified, r.keyID, func(member string) *bool { return recompute(files[member], rb) })
	for _, p := range r.binding.Problems {
		r.problems = append(r.problems, "report: "+p)
	}
	if !r.binding.Bound && r.consistent == "" {
		for _, p := range rc.Mismatches {
			r.problems = append(r.problems, "report: "+p)
		}
	}
	return r, nil
}

func printVerification(w io.Writer, dir string, v *mpp.Verification, st *portability.State, trusted bool, rb *reportResult, sources bool, mismatches []string) {
	if len(mismatches) == 0 {
		fmt.Fprintf(w, "OK %s\n", dir)
	} else {
		fmt.Fprintf(w, "FAIL %s: %d mismatch(es)\n", dir, len(mismatches))
	}
	if m := v.Manifest; m != nil {
		fmt.Fprintf(w, "  package      %s revision %d (%s)\n", m.PackageID, m.Revision, m.PackageKind)
		if m.PriorRevisionRef != "" {
			fmt.Fprintf(w, "  prior        %s\n", m.PriorRevisionRef)
		}
		fmt.Fprintf(w, "  source       %s, captured %s, cutoff %s, pack %s, input names %s\n", m.SourceSystem, m.CaptureTime, m.Cutoff, m.PackVersion, m.NamePolicy)
		fmt.Fprintf(w, "  target       %s (%s, %s, %s)\n", m.TargetCriteriaID, m.Family, m.Form, m.Variant)
		fmt.Fprintf(w, "  records      %d in %d part(s); %d input file(s), %d bytes in, %d bytes out\n", m.Totals.Records, m.Totals.Parts, m.Totals.InputFiles, m.Totals.InputBytes, m.Totals.OutputBytes)
		if m.EmptySelection != "" {
			fmt.Fprintf(w, "  selection    empty, authorized: %s\n", m.EmptySelection)
		}
		fmt.Fprintf(w, "  omissions    %d blocking, %d non-blocking\n", m.Totals.OmissionsBlocking, m.Totals.OmissionsNonBlocking)
		fmt.Fprintf(w, "  revision     %s\n", v.Digest)
		switch v.Signature {
		case mpp.SigVerified:
			fmt.Fprintf(w, "  signature    Ed25519, %s, verified\n", v.SignedBy)
		case mpp.SigUnsigned:
			fmt.Fprintln(w, "  signature    UNSIGNED (declared)")
		default:
			fmt.Fprintf(w, "  signature    NOT verified: %s\n", v.Signature)
		}
		if sources {
			fmt.Fprintln(w, "  sources      re-checked")
		} else {
			fmt.Fprintln(w, "  sources      not re-checked (no --sources)")
		}
	}
	if st != nil {
		switch {
		case len(st.Events) == 0:
			fmt.Fprintf(w, "  state        %s (no event log)\n", st.ShownState())
		case !trusted:
			fmt.Fprintf(w, "  state        %s; %d event(s) not checked (no --key or --event-key)\n", st.ShownState(), len(st.Events))
		default:
			fmt.Fprintf(w, "  state        %s (%d event(s), %d by trusted keys)\n", st.ShownState(), len(st.Events), len(st.Events)-st.Untrusted)
		}
		if st.SupersededBy != "" {
			fmt.Fprintf(w, "  superseded   by %s\n", st.SupersededBy)
		}
	}
	if rb != nil {
		switch {
		case rb.binding != nil && rb.binding.Bound:
			fmt.Fprintf(w, "  report       bound to attempt %s (%s)\n", rb.binding.AttemptID, rb.binding.Member)
			for _, b := range rb.binding.What {
				fmt.Fprintf(w, "    bound      %s\n", b)
			}
			for _, b := range rb.binding.NotBound {
				fmt.Fprintf(w, "    not bound  %s\n", b)
			}
		case rb.consistent != "":
			fmt.Fprintf(w, "  report       NOT bound to this package; its counts and ids are consistent with %s, which proves no link\n", rb.consistent)
		default:
			fmt.Fprintln(w, "  report       NOT bound to this package")
		}
	}
	for _, m := range mismatches {
		fmt.Fprintf(w, "  mismatch     %s\n", strings.TrimSpace(m))
	}
}
