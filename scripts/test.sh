#!/usr/bin/env bash
# The one command that runs every test of the project on a fresh machine (README).
# It installs and starts what the tests need, then runs vet, the race-enabled Go suite and the
# criteria corpus. Exit status is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

export SCOPE_HYGIENE_PG_DSN="${SCOPE_HYGIENE_PG_DSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
export SCOPE_HYGIENE_REQUIRE_BROWSER=1   # the web page's browser suite fails, not skips, without chromium
scripts/services.sh

echo "== gofmt, go vet, staticcheck"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './server/x402/e2e/node_modules/*'))
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; exit 1; fi
go vet ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.7.0 ./...

echo "== go test -race"
go test -race -count=1 -timeout 15m ./...

echo "== rules test (corpus re-pass, pin, coverage)"
go run ./tools/rules test --coverage
for f in criteria/*.yaml; do
	echo "== rules test --criteria $f (its own corpus, pin, coverage)"
	go run ./tools/rules test --criteria "$f" --coverage
done

echo "== fault suite (kill -9, idle flood, store away and back, hung PostgreSQL)"
SCOPE_HYGIENE_SERVICES_STARTED=1 scripts/faults.sh

echo "== x402 end to end (node + LiteSVM)"
scripts/x402-e2e.sh
echo "== MCP conformance (npm @modelcontextprotocol/conformance against the real binary)" && scripts/mcp-conformance.sh
echo "== node checks (MCP TypeScript SDK host and Inspector CLI, x402 discovery, Redocly, openapi-typescript + tsc)" && scripts/node-checks.sh
