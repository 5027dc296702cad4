package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/postgres"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
)

// config is the serve command's configuration. Every flag has an env var SCOPE_HYGIENE_<NAME>;
// a flag given on the command line wins over the env var, which wins over the default.
type config struct {
	Addr         string
	Store        string
	KeyFile      string
	CriteriaFile string
	// CorpusDir is the corpus the revision must re-pass before it serves (default: embedded).
	CorpusDir string
	// StoppedRevisions are criteria revisions the operator has stopped serving (tripwire 3).
	StoppedRevisions string
	HouseTokenFile   string
	HouseToken       string
	RequestTimeout   time.Duration
	ShutdownTimeout  time.Duration
	TrustProxy       bool
	// MCPConformanceTools adds the MCP conformance suite's error tool to /mcp (its CI run only).
	MCPConformanceTools bool
	LogLevel            string
	// Limits of the service (docs/api.md, Limits).
	MaxConns          int
	MaxInflightAudits int
	// MaxInflightPrechecks caps concurrent pre-checks of every criteria.
	MaxInflightPrechecks int
	// BodyBudgetMB bounds the request body bytes held at once, in MiB.
	BodyBudgetMB int
	// BodyTimeout is the time a request body has to arrive.
	BodyTimeout time.Duration
	// HouseTokenFailuresPerMinute and HouseTokenFailureBurst are the per-address budget of failed
	// house-token attempts.
	HouseTokenFailuresPerMinute int
	HouseTokenFailureBurst      int
	// MemoryLimitMB is the Go runtime's soft memory limit in MiB (0: none set here).
	MemoryLimitMB         int
	UnpaidAuditsPerMinute int
	UnpaidAuditBurst      int
	StoreRetryAfter       time.Duration
	CORSOrigins           string
	MetricsAddr           string
	// PublicBaseURL is the service's public origin (absolute x402 resource.url, sign-in-with-x
	// domain and uri).
	PublicBaseURL string
	// ProofKeyFile holds the sign-in-with-x nonce HMAC key (replicas share it).
	ProofKeyFile string
	// ProofBudget is the per-address budget of challenges and failed proofs a minute.
	ProofBudget int
	// Pay configures x402 payments (x402.go).
	Pay payConfig
}

// envName maps a flag name to its env var: store → SCOPE_HYGIENE_STORE.
func envName(flagName string) string {
	return "SCOPE_HYGIENE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// serveFlags declares the serve flags on fs, with defaults taken from the environment.
func serveFlags(fs *flag.FlagSet, c *config, getenv func(string) string) error {
	var errs []string
	str := func(p *string, name, def, help string) {
		if v := getenv(envName(name)); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, help+" (env "+envName(name)+")")
	}
	dur := func(p *time.Duration, name string, def time.Duration, help string) {
		if v := getenv(envName(name)); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				errs = append(errs, envName(name)+": not a duration")
			} else {
				def = d
			}
		}
		fs.DurationVar(p, name, def, help+" (env "+envName(name)+")")
	}
	boolean := func(p *bool, name string, def bool, help string) {
		if v := getenv(envName(name)); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, envName(name)+": not a boolean")
			} else {
				def = b
			}
		}
		fs.BoolVar(p, name, def, help+" (env "+envName(name)+")")
	}
	str(&c.Addr, "addr", "127.0.0.1:8080", "listen address")
	str(&c.Store, "store", "sqlite:var/scope-hygiene.db", "ledger and free-tier store: sqlite:<file> or a postgres:// URL")
	str(&c.KeyFile, "key-file", "var/signing-key.pem", "Ed25519 report-signing key (PEM PKCS #8); generated on first run when missing")
	str(&c.CriteriaFile, "criteria", "", "criteria file to serve (default: the embedded criteria.yaml)")
	str(&c.CorpusDir, "corpus", "", "corpus directory the criteria must re-pass before serving (default: the embedded corpus)")
	str(&c.StoppedRevisions, "stopped-revisions", "", "comma-separated criteria revisions that must not serve (tripwire 3: stop-serving under an affected version); a criteria served beside v1 is named id@revision, e.g. memory-forget-envelope/v1@1.0.0")
	str(&c.HouseTokenFile, "house-token-file", "", "file holding the operator's house-audit bearer token (house audits disabled when empty; env SCOPE_HYGIENE_HOUSE_TOKEN also works)")
	dur(&c.RequestTimeout, "request-timeout", 10*time.Second, "per-request handler timeout")
	dur(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "graceful shutdown deadline")
	boolean(&c.TrustProxy, "trust-proxy", false, "take the client address from X-Forwarded-For (free-tier key without caller); only behind a trusted proxy")
	boolean(&c.MCPConformanceTools, "mcp-conformance-tools", false, "also list test_error_handling, the tool the MCP conformance suite's tools-call-error calls (scripts/mcp-conformance.sh only)")
	str(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	integer := func(p *int, name string, def int, help string) {
		if v := getenv(envName(name)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				errs = append(errs, envName(name)+": not a whole number")
			} else {
				def = n
			}
		}
		fs.IntVar(p, name, def, help+" (env "+envName(name)+")")
	}
	integer(&c.MaxConns, "max-conns", 0, "cap on open connections; at the cap the longest-idle connection is closed, or a new one gets 503 (0: the descriptor limit less 64)")
	integer(&c.MaxInflightAudits, "max-inflight-audits", api.DefaultMaxInflightAudits, "cap on concurrent /audit requests; past it a fast 503 with Retry-After")
	integer(&c.MaxInflightPrechecks, "max-inflight-prechecks", api.DefaultMaxInflightPrechecks, "cap on concurrent pre-checks (every criteria's, MCP's included); past it a fast 503 with Retry-After")
	integer(&c.BodyBudgetMB, "body-budget-mb", api.DefaultBodyBudgetBytes>>20, "MiB of request bodies held at once across all connections (being read or evaluated); past it a new body gets a fast 503 with Retry-After")
	dur(&c.BodyTimeout, "body-timeout", api.DefaultBodyTimeout, "time a request body has to arrive after its headers; past it a static 408 and the connection closes")
	integer(&c.HouseTokenFailuresPerMinute, "house-token-failures-per-minute", api.DefaultHouseTokenFailuresPerMinute, "per client address: failed house-token attempts a minute; past the budget a 429 with Retry-After")
	integer(&c.HouseTokenFailureBurst, "house-token-failure-burst", api.DefaultHouseTokenFailureBurst, "per client address: failed house-token attempts allowed at once")
	integer(&c.MemoryLimitMB, "memory-limit-mb", 0, "soft limit in MiB of the memory the Go runtime holds (heap, stacks; not the binary's own pages): near it the collector runs more often, so the process stays within a container's memory; 0: none (GOMEMLIMIT still applies)")
	integer(&c.UnpaidAuditsPerMinute, "unpaid-audits-per-minute", 120, "per client address: /audit calls without payment or house token per minute (0: no budget)")
	integer(&c.UnpaidAuditBurst, "unpaid-audit-burst", 60, "per client address: unpaid /audit calls allowed at once")
	dur(&c.StoreRetryAfter, "store-retry-after", api.DefaultRetryAfter, "Retry-After of a 503 when the store fails")
	str(&c.CORSOrigins, "cors-origins", "", "comma-separated browser origins allowed to call the API (no CORS when empty)")
	str(&c.MetricsAddr, "metrics-addr", "", "serve /metrics on this address only (default: on -addr)")
	str(&c.PublicBaseURL, "public-base-url", "", "public origin of the service, e.g. https://audit.example.com (absolute x402 resource.url, and the only sign-in-with-x domain and uri; required with payments; without payments the default is http://<request Host>, for local use)")
	str(&c.ProofKeyFile, "siwx-key-file", "var/siwx.key", "HMAC key of sign-in-with-x nonces (hex, >= 32 bytes), shared by replicas; generated when missing; env SCOPE_HYGIENE_SIWX_KEY also works")
	budget := 30
	if v := getenv(envName("siwx-budget")); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n <= 0 {
			errs = append(errs, envName("siwx-budget")+": not a positive integer")
		} else {
			budget = n
		}
	}
	fs.IntVar(&c.ProofBudget, "siwx-budget", budget, "sign-in-with-x challenges and failed proofs per client address a minute, per replica (env "+envName("siwx-budget")+")")
	payFlags(fs, &c.Pay, getenv)
	c.HouseToken = getenv("SCOPE_HYGIENE_HOUSE_TOKEN")
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// loadHouseToken reads the house token file when one is configured.
func (c *config) loadHouseToken() error {
	if c.HouseTokenFile == "" {
		return nil
	}
	b, err := os.ReadFile(c.HouseTokenFile)
	if err != nil {
		return fmt.Errorf("house token: %w", err)
	}
	c.HouseToken = strings.TrimSpace(string(b))
	if c.HouseToken == "" {
		return fmt.Errorf("house token file %s is empty", c.HouseTokenFile)
	}
	return nil
}

// MinHouseTokenBytes is the shortest house token serve accepts: a bearer that unlocks free
// audits must not be guessable.
const MinHouseTokenBytes = 32

// checkHouseToken refuses a configured house token shorter than MinHouseTokenBytes.
func (c *config) checkHouseToken() error {
	if c.HouseToken != "" && len(c.HouseToken) < MinHouseTokenBytes {
		return fmt.Errorf("house token is %d bytes; at least %d are required (or leave it unset to disable house audits)",
			len(c.HouseToken), MinHouseTokenBytes)
	}
	return nil
}

// openStore opens the configured backend.
func openStore(ctx context.Context, spec string) (store.Store, error) {
	switch {
	case strings.HasPrefix(spec, "sqlite:"):
		return sqlite.Open(ctx, strings.TrimPrefix(spec, "sqlite:"))
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return postgres.Open(ctx, spec)
	}
	return nil, fmt.Errorf("store: want sqlite:<file> or a postgres:// URL")
}

// openExistingStore opens the configured backend for an operator command: a SQLite file that
// does not exist is an error, never a new empty ledger.
func openExistingStore(ctx context.Context, spec string) (store.Store, error) {
	if strings.HasPrefix(spec, "sqlite:") {
		return sqlite.OpenExisting(ctx, strings.TrimPrefix(spec, "sqlite:"))
	}
	return openStore(ctx, spec)
}

// storeFlag declares only the store flag (for the ledger command).
func storeFlag(fs *flag.FlagSet, p *string) {
	def := "sqlite:var/scope-hygiene.db"
	if v := os.Getenv(envName("store")); v != "" {
		def = v
	}
	fs.StringVar(p, "store", def, "ledger store: sqlite:<file> or a postgres:// URL (env "+envName("store")+")")
}
