// Package faults is the fault suite of the real binary (build tag faults; run it with
// scripts/faults.sh): kill -9 under a bounded audit load, an idle-connection flood past the
// descriptor limit, a store that goes away and comes back, and a PostgreSQL that accepts and
// never answers, on SQLite and PostgreSQL where the store matters. Loopback only, bounded loops.
package faults
