#!/usr/bin/env bash
# Tools nobody here wrote, against the real binary on loopback (server/mcp/hosttest): the official
# MCP TypeScript SDK as a host paying with the x402 client on the LiteSVM facade, the MCP
# Inspector CLI, @x402/extensions' discovery checks, Redocly's lint of schema/openapi.json and
# openapi-typescript + tsc on answers captured from the binary. Every npm version is pinned in
# server/mcp/hosttest/package.json and its lockfile; the facade's packages are server/x402/e2e's.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null 2>&1 || { echo "node-checks: node is required (v20+) and was not found" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "node-checks: npm is required and was not found" >&2; exit 1; }
# npm ci (a clean install from the lockfile) unless this lockfile is already what is installed:
# the install takes most of this script's time.
(cd server/mcp/hosttest && {
  sum=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ "$(cat node_modules/.installed-lock-sha256 2>/dev/null)" != "$sum" ]; then
    npm ci --no-audit --no-fund --loglevel=error && echo "$sum" >node_modules/.installed-lock-sha256
  fi
})
if [ ! -d server/x402/e2e/node_modules/litesvm ]; then
  # As scripts/x402-e2e.sh installs it (npm install from the lockfile when npm ci refuses
  # litesvm's unpublished optional binaries).
  log=$(mktemp)
  (cd server/x402/e2e && { npm ci --no-audit --no-fund --loglevel=error 2>"$log" ||
    { grep -q "Missing: litesvm-" "$log" && npm install --no-audit --no-fund --no-save --loglevel=error; }; })
  rm -f "$log"
fi
MCP_HOSTTEST=1 go test -count=1 -timeout 5m ./server/mcp/hosttest/
