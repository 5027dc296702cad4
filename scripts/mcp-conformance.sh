#!/usr/bin/env bash
# The MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# scripts/mcp-conformance/package.json and its lockfile) against the real binary's /mcp: builds
# scope-hygiene, serves it on loopback over a throwaway SQLite store, runs every server scenario
# with the baseline scripts/mcp-conformance/expected-failures.yaml (scenarios that do not apply,
# each with its reason), and stops the server. Results land in var/mcp-conformance/.
# 0.1.12 is the newest 0.1.x that runs on Node 20 (later ones need Node 22's fs.globSync).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null 2>&1 || { echo "mcp-conformance: node is required (v20+) and was not found" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "mcp-conformance: npm is required and was not found" >&2; exit 1; }
(cd scripts/mcp-conformance && npm ci --no-audit --no-fund --loglevel=error)

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/scope-hygiene" ./tools/scope-hygiene
# -mcp-conformance-tools adds test_error_handling, the tool tools-call-error calls by name: our
# own tools' errors are isError results too, but the scenario knows only the reference names.
SCOPE_HYGIENE_MCP_CONFORMANCE_TOOLS=true SCOPE_HYGIENE_ADDR=127.0.0.1:0 SCOPE_HYGIENE_STORE="sqlite:$work/db.sqlite" SCOPE_HYGIENE_KEY_FILE="$work/sign.pem" \
  "$work/scope-hygiene" serve >"$work/serve.log" 2>&1 &
server_pid=$!
addr=""
for _ in $(seq 1 100); do
  addr=$(sed -n 's/.*"msg":"serving","addr":"\([^"]*\)".*/\1/p' "$work/serve.log" | head -1)
  [ -n "$addr" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { echo "mcp-conformance: the server did not start" >&2; cat "$work/serve.log" >&2; exit 1; }

mkdir -p var/mcp-conformance
cd scripts/mcp-conformance
# The suite's per-scenario counts are reworded ("checks passed") so that no line of this output
# reads as the test runner's closing "N passed, M failed" line: the expected failures are
# scenarios that do not apply, not failed tests. The exit status is the suite's (pipefail).
npx --no-install conformance server --url "http://$addr/mcp" \
  --expected-failures expected-failures.yaml -o ../../var/mcp-conformance 2>&1 |
  sed -E 's/([0-9]+) passed, ([0-9]+) failed/\1 checks passed, \2 checks failed/g'
