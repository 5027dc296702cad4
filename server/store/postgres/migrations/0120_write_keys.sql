-- Idempotency keys of consuming writes (store.WriteKey, docs/api.md "Idempotent writes"): a
-- SHA-256 digest of the key, the ledger row of a house audit or the free-tier count of a free
-- use, how many retries it answered, and when it expires (then swept). No caller text, no
-- wallet, no address, no export data. Times are Unix milliseconds.
CREATE TABLE write_keys (
    wkey       TEXT    PRIMARY KEY,
    ledger_id  BIGINT,
    used       INTEGER NOT NULL DEFAULT 0,
    replays    INTEGER NOT NULL DEFAULT 0,
    expires_ms BIGINT  NOT NULL
);
CREATE INDEX write_keys_expires ON write_keys (expires_ms);
-- The readiness write probe's one row (/readyz): each probe commits a new time over it.
CREATE TABLE ready_probe (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    at_ms BIGINT  NOT NULL
);
