#!/usr/bin/env bash
# The fault suite (faults/, docs/api.md "Fault suite"): the real binary killed with SIGKILL under
# a bounded audit load, flooded with idle connections past its descriptor limit, its store taken
# away and given back, and started against a PostgreSQL that accepts and never answers; on
# SQLite and PostgreSQL where the store matters; outsiders flooding it (slow uploads, a storm of
# maximum-size pre-checks, a 30,000-connection reconnecting idle flood, CL+TE smuggling:
# faults/flood_test.go, about 40 s; as root it raises net.core.somaxconn and
# net.ipv4.tcp_max_syn_backlog for the idle flood, as an operator would, and restores them).
# Loopback only, bounded, well under 5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

export SCOPE_HYGIENE_PG_DSN="${SCOPE_HYGIENE_PG_DSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
if [ "${SCOPE_HYGIENE_SERVICES_STARTED:-}" != 1 ]; then
  scripts/services.sh
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
go test -tags faults -count=1 -timeout 300s -v ./faults/ >"$out" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then cat "$out"; else grep -vE '^=== (RUN|PAUSE|CONT)' "$out"; fi
exit "$rc"
