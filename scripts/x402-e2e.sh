#!/usr/bin/env bash
# x402 end to end: installs the pinned npm packages (npm ci from the lockfile: @x402/fetch,
# @x402/svm, @x402/core 2.27.0, litesvm 1.5.0, @solana/kit 8.4.0) and runs the real x402 client
# against the real server settling on LiteSVM, all on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null 2>&1 || { echo "x402-e2e: node is required (v20+) and was not found" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "x402-e2e: npm is required and was not found" >&2; exit 1; }
# npm ci is the install. litesvm 1.5.0 lists optional per-platform binaries of which only some
# are published (linux-x64-gnu, darwin-x64, ...); npm cannot lock the missing ones and then
# refuses npm ci as "out of sync". In that one case fall back to npm install, which still takes
# every version from the committed lockfile (package.json pins exact versions too).
cd server/x402/e2e
if ! npm ci --no-audit --no-fund --loglevel=error 2>/tmp/x402-npm-ci.log; then
  if grep -q "Missing: litesvm-" /tmp/x402-npm-ci.log; then
    echo "x402-e2e: npm ci refused the lockfile over litesvm's unpublished optional binaries; installing from the lockfile with npm install" >&2
    npm install --no-audit --no-fund --no-save --loglevel=error
  else
    cat /tmp/x402-npm-ci.log >&2
    exit 1
  fi
fi
cd ../../..
X402_E2E=1 go test -count=1 -timeout 9m ./server/x402/e2e/

# The Go client: its sign-in-with-x proofs cross-checked with the real @x402/extensions, and the
# README's "Pay for an audit locally" commands (dev-chain, a paid audit, verify) with the client's
# spend cap, -fail-on, tampered-report and canary tests against the real binary on LiteSVM.
(cd client/testdata/siwsjs && npm ci --no-audit --no-fund --loglevel=error)
X402_E2E=1 go test -count=1 -timeout 8m -run 'TestProofVerifiesWithRealX402Extensions|TestDevChainReadmeAndClient' ./client/ ./tools/scope-hygiene/
