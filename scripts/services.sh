#!/usr/bin/env bash
# Starts the services the tests talk to when they are not already running (PostgreSQL).
set -euo pipefail
pg_up() { (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; }
if ! pg_up; then
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  ver=$(ls /etc/postgresql | sort -V | tail -1)
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
pg_up || { echo "PostgreSQL is not reachable on 127.0.0.1:5432" >&2; exit 1; }

# The web page's browser tests drive Debian's chromium (web/browser_test.go).
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
