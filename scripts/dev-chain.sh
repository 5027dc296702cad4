#!/usr/bin/env bash
# A paid audit on one machine: installs the local chain's npm packages when missing (LiteSVM and
# its JSON-RPC facade, pinned in server/x402/e2e), then runs `scope-hygiene dev-chain`: a local
# Solana with the USDC mint, a payer wallet holding USDC and a funded fee payer, and the service
# with payments on against it, on 127.0.0.1. It prints the two lines to type next; Ctrl-C stops it.
# Flags pass through (scope-hygiene dev-chain -h).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null 2>&1 || { echo "dev-chain: node is required (v20+) and was not found" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "dev-chain: npm is required and was not found" >&2; exit 1; }
if [ ! -d server/x402/e2e/node_modules/litesvm ]; then
  echo "dev-chain: installing the local chain's npm packages (server/x402/e2e)" >&2
  # Same install as scripts/x402-e2e.sh: npm ci, or npm install from the lockfile when npm ci
  # refuses litesvm's unpublished optional binaries.
  (cd server/x402/e2e && { npm ci --no-audit --no-fund --loglevel=error 2>/dev/null ||
    npm install --no-audit --no-fund --no-save --loglevel=error; } >&2)
fi
exec go run ./tools/scope-hygiene dev-chain "$@"
