package store

// SQL of the write keys, shared by both backends (positional parameters are rewritten by each).

// ReplaySQL counts one retry of a live, unspent key and returns the write it stands for:
// $1 key, $2 now (ms), $3 MaxReplays.
const ReplaySQL = `UPDATE write_keys SET replays = replays + 1
	WHERE wkey = $1 AND expires_ms > $2 AND replays < $3
	RETURNING coalesce(ledger_id, 0), used`

// PutKeySQL stores a key for a committed write, renewing a spent or expired one:
// $1 key, $2 ledger id or NULL, $3 used, $4 expiry (ms).
const PutKeySQL = `INSERT INTO write_keys (wkey, ledger_id, used, replays, expires_ms) VALUES ($1, $2, $3, 0, $4)
	ON CONFLICT (wkey) DO UPDATE SET ledger_id = excluded.ledger_id, used = excluded.used,
	replays = 0, expires_ms = excluded.expires_ms`

// FindKeySQL reads a live key without counting a retry: $1 key, $2 now (ms).
const FindKeySQL = `SELECT coalesce(ledger_id, 0), used FROM write_keys WHERE wkey = $1 AND expires_ms > $2`

// ProbeSQL commits the readiness probe's row: $1 now (ms).
const ProbeSQL = `INSERT INTO ready_probe (id, at_ms) VALUES (1, $1)
	ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms`
