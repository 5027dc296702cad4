// Command pack turns native memory-store dumps into one submission for the
// memory-scope-hygiene/v1 audit, on the caller's machine.
//
// Usage:
//
//	pack --from SOURCE [options] FILES...
//
// SOURCE is one of mem0-platform, mem0-oss, graphiti, zep-cloud, letta-af, letta-api,
// claims-jsonl. The submission is written to stdout, or to -o FILE together with an inventory
// FILE-without-.json + ".inventory.json" (source files, sizes, SHA-256, counts, fields dropped or
// derived, unresolved references, the SHA-256 of the exact submission bytes). The inventory stays
// with the caller. --package DIR writes a Memory Portability Package instead, and
// "pack verify DIR" re-checks one (docs/pack.md). Run "pack -h" for every option.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/internal/buildinfo"
	"github.com/scopehygiene/scope-hygiene/pack"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

const usageHead = `pack: turn native memory-store dumps into one scope-hygiene submission, locally.

Usage:
  pack --from SOURCE [options] FILES...
  pack -version    module version, VCS revision and the embedded criteria's id, revision, digest

Sources (FILES are the main dumps):
  mem0-platform  get_all pages (POST /v3/memories/, {count,next,results} envelopes or arrays);
                 --history adds history/events dumps (a latest DELETE marks the record deleted)
  mem0-oss       OSS get_all results ({"results": [...]}) ; --history: history.db rows as JSON
  graphiti       EntityEdge dumps (uuid, group_id, fact, episodes, ...);
                 --episodes / --nodes resolve episode_group_ids / endpoint_group_ids
  zep-cloud      Zep Cloud v3 edge listings; the scope of each listing is stamped as graph_id,
                 from --graph-id / --user-id or a file name ...graph=<id>.json / ...user=<id>.json
                 (a user graph is stamped graph_id "user:<id>" plus user_id "<id>")
  letta-af       Letta agent files (.af, double-encoded files accepted); --passages and
                 --archives add archival passages with the archive-to-agent resolution (L-3)
  letta-api      Letta API dumps: a bundle {agents, blocks, passages, archives_agents} or lists
                 of those objects; --passages / --archives as above
  claims-jsonl   generic claim lines passed through (id, content_text, any published field)
  mem0-history   Mem0 OSS history.db (or its rows as JSON Lines) -> a mutation-log export for
                 memory-forget-envelope/v1 (POST /v1/forget-envelope/...); no memory text is copied

Nothing is guessed: scope keys are copied only where the native format carries them (or stamped
from what you state), and what a format lacks stays absent; the inventory says so.

Package: --package DIR writes a Memory Portability Package (manifest.json, manifest.sig.json,
the submission part(s), inventory.json), signed with --sign-key KEY or explicitly --unsigned.
  pack verify [--key KEY] [--sources DIR] [--report REPORT --report-key KEY] DIR   (pack verify -h)
  pack describe|bind|seal|assess|conditions|preflight|attempt|receipt|supersede|withdraw|dispose
       [flags] DIR   record one operation in the package's signed event log   (pack describe -h)
See docs/pack.md and docs/portability.md.

Caps: a submission over 1,000 records or 262,144 bytes is refused; --split (with -o) writes parts
FILE.part1.json, FILE.part2.json, ... that each fit.

Options:
`

type config struct {
	from, out, inventory, variant, graphID, userID, manifestFile, declared string
	declaredSet                                                            bool
	hashOnly, keepMetadata, split, scopeFiltered, multiScope               bool
	history, episodes, nodes, passages, archives, agentIDs                 multi
	globalScopes, globalKeys, globalKeyFiles, globalHashes, claimIDs       multi
	privateScopes                                                          multi
	files                                                                  []string
	pkg                                                                    packageFlags
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func newFlags(c *config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("pack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageHead)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.from, "from", "", "source format (required): "+sourceList())
	fs.StringVar(&c.out, "o", "", "write the submission to this file (and the inventory next to it); default stdout")
	fs.StringVar(&c.inventory, "inventory", "", "write the inventory to this file (default with -o: <FILE without .json>.inventory.json; none on stdout)")
	fs.BoolVar(&c.hashOnly, "hash-only", false, "hash_only form: content_hash (SHA-256 hex of the exact UTF-8 text, computed locally) replaces content_text; metadata reduced to the shared/sharing markers")
	fs.BoolVar(&c.keepMetadata, "keep-metadata", false, "with --hash-only: keep metadata in full (it may hold free text)")
	fs.BoolVar(&c.split, "split", false, "split an over-cap pack into parts that each fit (needs -o)")
	fs.StringVar(&c.variant, "variant", "", "override the source's default variant (mem0: platform|oss; zep_graphiti: graphiti|zep_cloud; letta: mixed|blocks|passages)")
	fs.Var(&c.history, "history", "Mem0 history/events dump (repeatable)")
	fs.Var(&c.episodes, "episodes", "Graphiti episode listing with uuid and group_id (repeatable)")
	fs.Var(&c.nodes, "nodes", "Graphiti node listing with uuid and group_id (repeatable)")
	fs.Var(&c.passages, "passages", "Letta passages dump: a list, or {agent_id: [passages]} per-agent listings (repeatable)")
	fs.Var(&c.archives, "archives", "Letta archive-to-agent resolution: archives_agents rows, {archive_id, agent_ids} objects or {archive_id: [agent ids]} (repeatable)")
	fs.StringVar(&c.graphID, "graph-id", "", "zep-cloud: the standalone graph every listing came from")
	fs.StringVar(&c.userID, "user-id", "", "zep-cloud: the user whose graph every listing came from")
	fs.Var(&c.agentIDs, "agent-id", "letta-af: LOCAL=SERVER maps a file-local agent id as emitted (agent-0, or af2:agent-0 with several files) to its server id (repeatable)")
	fs.StringVar(&c.manifestFile, "manifest", "", "JSON file with manifest members (declared_scope_keys, global_scopes, global_content_keys as text, global_content_hashes, global_claim_ids, private_scopes, scope_filtered, multi_scope)")
	fs.Func("declared-scope-keys", "manifest declared_scope_keys, comma-separated (an empty value declares no keys)", func(s string) error {
		c.declared, c.declaredSet = s, true
		return nil
	})
	fs.Var(&c.globalScopes, "global-scope", "manifest global_scopes entry (repeatable)")
	fs.Var(&c.globalKeys, "global-content-key", "manifest global_content_keys entry as text; hashed in hash-only form (repeatable)")
	fs.Var(&c.globalKeyFiles, "global-content-keys-file", "JSON array of content texts for global_content_keys; hashed in hash-only form (repeatable)")
	fs.Var(&c.globalHashes, "global-content-hash", "manifest global_content_keys entry already hashed (hash-only form; repeatable)")
	fs.Var(&c.claimIDs, "global-claim-id", "manifest global_claim_ids entry (repeatable)")
	fs.Var(&c.privateScopes, "private-scope", "manifest private_scopes entry (repeatable)")
	fs.BoolVar(&c.scopeFiltered, "scope-filtered", false, "manifest scope_filtered: the Mem0 dump was filtered to some scopes")
	fs.BoolVar(&c.multiScope, "multi-scope", false, "manifest multi_scope: declare a multi-scope Zep/Graphiti submission")
	c.pkg.register(fs)
	return fs
}

func sourceList() string {
	var s []string
	for _, x := range pack.Sources {
		s = append(s, string(x))
	}
	return strings.Join(s, "|")
}

// parseArgs parses flags interspersed with file arguments ("--" ends the flags).
func parseArgs(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := newFlags(c, stderr)
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			c.files = append(c.files, rest...)
			break
		}
		c.files = append(c.files, rest[0])
		args = rest[1:]
	}
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-version" || args[0] == "--version") {
		return buildinfo.Print("pack", stdout, stderr)
	}
	if len(args) > 0 && args[0] == "verify" {
		return verifyCmd(args[1:], stdout, stderr)
	}
	if len(args) > 0 && slices.Contains(operations, args[0]) {
		return opsCmd(args[0], args[1:], stdout, stderr, &http.Client{Timeout: 30 * time.Second})
	}
	c, err := parseArgs(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := c.pack(stdout, stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func readFiles(names []string) ([]pack.File, error) {
	var out []pack.File
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("pack: read %s: %w", n, errors.Unwrap(err))
		}
		out = append(out, pack.File{Name: n, Data: b})
	}
	return out, nil
}

func (c *config) options() (pack.Options, error) {
	src := pack.Source(c.from)
	known := false
	for _, s := range pack.Sources {
		known = known || s == src
	}
	if !known {
		return pack.Options{}, fmt.Errorf("pack: --from must be one of %s", sourceList())
	}
	opt := pack.Options{Source: src, HashOnly: c.hashOnly, KeepMetadata: c.keepMetadata, Variant: c.variant, GraphID: c.graphID, UserID: c.userID}
	if err := c.pkg.packOptions(&opt, c.hashOnly); err != nil {
		return opt, err
	}
	if (c.graphID != "" || c.userID != "") && src != pack.ZepCloud {
		return opt, errors.New("pack: --graph-id / --user-id are for --from zep-cloud")
	}
	if c.keepMetadata && !c.hashOnly {
		return opt, errors.New("pack: --keep-metadata applies to --hash-only")
	}
	if len(c.agentIDs) > 0 {
		if src != pack.LettaAF {
			return opt, errors.New("pack: --agent-id is for --from letta-af")
		}
		opt.AgentAliases = map[string]string{}
		for _, a := range c.agentIDs {
			l, r, ok := strings.Cut(a, "=")
			if !ok || l == "" || r == "" {
				return opt, errors.New("pack: --agent-id takes LOCAL=SERVER")
			}
			opt.AgentAliases[l] = r
		}
	}
	m := &opt.Manifest
	if c.manifestFile != "" {
		if err := readManifest(c.manifestFile, m); err != nil {
			return opt, err
		}
	}
	if c.declaredSet {
		m.DeclaredSet = true
		m.DeclaredScopeKeys = nil
		for _, k := range strings.Split(c.declared, ",") {
			if k = strings.TrimSpace(k); k != "" {
				m.DeclaredScopeKeys = append(m.DeclaredScopeKeys, k)
			}
		}
	}
	m.GlobalScopes = append(m.GlobalScopes, c.globalScopes...)
	m.GlobalContentKeys = append(m.GlobalContentKeys, c.globalKeys...)
	for _, f := range c.globalKeyFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return opt, fmt.Errorf("pack: read %s: %w", f, errors.Unwrap(err))
		}
		var keys []string
		if err := json.Unmarshal(b, &keys); err != nil {
			return opt, fmt.Errorf("pack: %s: expected a JSON array of strings", f)
		}
		m.GlobalContentKeys = append(m.GlobalContentKeys, keys...)
	}
	m.GlobalContentHashes = append(m.GlobalContentHashes, c.globalHashes...)
	m.GlobalClaimIDs = append(m.GlobalClaimIDs, c.claimIDs...)
	m.PrivateScopes = append(m.PrivateScopes, c.privateScopes...)
	m.ScopeFiltered = m.ScopeFiltered || c.scopeFiltered
	m.MultiScope = m.MultiScope || c.multiScope
	return opt, nil
}

type manifestFile struct {
	DeclaredScopeKeys   *[]string `json:"declared_scope_keys"`
	GlobalScopes        []string  `json:"global_scopes"`
	GlobalContentKeys   []string  `json:"global_content_keys"`
	GlobalContentHashes []string  `json:"global_content_hashes"`
	GlobalClaimIDs      []string  `json:"global_claim_ids"`
	PrivateScopes       []string  `json:"private_scopes"`
	ScopeFiltered       bool      `json:"scope_filtered"`
	MultiScope          bool      `json:"multi_scope"`
}

func readManifest(name string, m *pack.ManifestOptions) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("pack: read %s: %w", name, errors.Unwrap(err))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var mf manifestFile
	if err := dec.Decode(&mf); err != nil {
		return fmt.Errorf("pack: %s: not a manifest object of the published members", name)
	}
	if mf.DeclaredScopeKeys != nil {
		m.DeclaredSet, m.DeclaredScopeKeys = true, *mf.DeclaredScopeKeys
	}
	m.GlobalScopes, m.GlobalContentKeys, m.GlobalContentHashes = mf.GlobalScopes, mf.GlobalContentKeys, mf.GlobalContentHashes
	m.GlobalClaimIDs, m.PrivateScopes = mf.GlobalClaimIDs, mf.PrivateScopes
	m.ScopeFiltered, m.MultiScope = mf.ScopeFiltered, mf.MultiScope
	return nil
}

func (c *config) pack(stdout, stderr io.Writer) error {
	if c.from == "" {
		return errors.New("pack: --from is required (see pack -h)")
	}
	if c.from == sourceMem0History {
		return c.packMem0History(stdout, stderr)
	}
	opt, err := c.options()
	if err != nil {
		return err
	}
	if c.split && c.out == "" && c.pkg.dir == "" {
		return errors.New("pack: --split needs -o FILE (parts are written as FILE.part1.json, ...)")
	}
	if c.pkg.dir != "" && c.out != "" {
		return errors.New("pack: give -o FILE or --package DIR, not both")
	}
	in, err := c.inputs()
	if err != nil {
		return err
	}
	res, err := pack.Pack(in, opt)
	if err != nil {
		return err
	}
	if c.pkg.dir != "" {
		return c.pkg.write(res, in, c.split, stderr)
	}
	parts, notes, err := c.writeSubmission(res.Submission, stdout, stderr)
	if err != nil {
		return err
	}
	res.Inventory.SetOutputs(parts, notes)
	return c.writeInventory(res, len(parts), stderr)
}

// inputs reads every input file the flags name (Mem0 history.db files as their rows).
func (c *config) inputs() (pack.Inputs, error) {
	var in pack.Inputs
	for _, x := range []struct {
		dst   *[]pack.File
		names []string
	}{{&in.Records, c.files}, {&in.History, c.history}, {&in.Episodes, c.episodes}, {&in.Nodes, c.nodes}, {&in.Passages, c.passages}, {&in.Archives, c.archives}} {
		var err error
		if *x.dst, err = readFiles(x.names); err != nil {
			return in, err
		}
	}
	return in, readHistoryDBs(in.History)
}

// writeSubmission writes the submission to -o (or stdout), split into parts with --split when
// it is over the caps; it returns the parts as the inventory lists them and the split's notes.
func (c *config) writeSubmission(sub *pack.Submission, stdout, stderr io.Writer) ([]pack.OutputPart, []string, error) {
	body, err := sub.Marshal()
	if err != nil {
		return nil, nil, err
	}
	if err := pack.CheckCaps(len(sub.Records), body); err != nil {
		if !c.split {
			return nil, nil, err
		}
		return c.writeParts(sub, stderr)
	}
	if c.out == "" {
		if _, err := stdout.Write(body); err != nil {
			return nil, nil, fmt.Errorf("pack: write stdout: %w", err)
		}
	} else if err := os.WriteFile(c.out, body, 0o600); err != nil {
		return nil, nil, fmt.Errorf("pack: write submission: %w", err)
	}
	return []pack.OutputPart{pack.Part(filepath.Base(c.out), len(sub.Records), body)}, nil, nil
}

// writeParts splits the submission and writes each part beside -o as FILE.partN.json.
func (c *config) writeParts(sub *pack.Submission, stderr io.Writer) ([]pack.OutputPart, []string, error) {
	subs, notes, err := pack.Split(sub)
	if err != nil {
		return nil, nil, err
	}
	base := strings.TrimSuffix(c.out, ".json")
	var parts []pack.OutputPart
	for k, s := range subs {
		b, err := s.Marshal()
		if err != nil {
			return nil, nil, err
		}
		if err := pack.CheckCaps(len(s.Records), b); err != nil {
			return nil, nil, fmt.Errorf("pack: part %d still over the caps: %w", k+1, err)
		}
		name := fmt.Sprintf("%s.part%d.json", base, k+1)
		if err := os.WriteFile(name, b, 0o600); err != nil {
			return nil, nil, fmt.Errorf("pack: write part: %w", err)
		}
		parts = append(parts, pack.Part(filepath.Base(name), len(s.Records), b))
	}
	for _, n := range notes {
		fmt.Fprintln(stderr, "pack:", n)
	}
	return parts, notes, nil
}

// writeInventory writes the inventory to --inventory or beside -o, and says what was packed.
func (c *config) writeInventory(res *pack.Result, nParts int, stderr io.Writer) error {
	invPath := c.inventory
	if invPath == "" && c.out != "" {
		invPath = strings.TrimSuffix(c.out, ".json") + ".inventory.json"
	}
	sub := res.Submission
	if invPath == "" {
		fmt.Fprintf(stderr, "pack: %d records packed (%s, %s); no inventory written (use -o or --inventory)\n", len(sub.Records), sub.Family, sub.Form)
		return nil
	}
	ib, err := res.Inventory.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(invPath, ib, 0o600); err != nil {
		return fmt.Errorf("pack: write inventory: %w", err)
	}
	fmt.Fprintf(stderr, "pack: %d records packed (%s, %s) in %d file(s); inventory %s\n", len(sub.Records), sub.Family, sub.Form, nParts, invPath)
	return nil
}
