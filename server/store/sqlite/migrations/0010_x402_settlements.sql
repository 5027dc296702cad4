-- x402 settlement state (server/x402): one row per payment transaction id, beside the ledger.
-- Payment state only: no export data, no content, no content hash. Times are Unix milliseconds.
CREATE TABLE x402_settlements (
    tx_sig              TEXT    PRIMARY KEY,
    challenge           TEXT    NOT NULL,
    challenge_expiry_ms INTEGER NOT NULL,
    payer               TEXT    NOT NULL,
    network             TEXT    NOT NULL,
    blockhash           TEXT    NOT NULL,
    expiry_height       INTEGER NOT NULL DEFAULT 0,
    status              TEXT    NOT NULL CHECK (status IN ('reserved', 'submitted', 'settled', 'delivered', 'released', 'failed')),
    reason              TEXT    NOT NULL DEFAULT '',
    fee_lamports        INTEGER CHECK (fee_lamports >= 0),
    slot                INTEGER NOT NULL DEFAULT 0,
    claims              INTEGER NOT NULL DEFAULT 0 CHECK (claims >= 0),
    ledger_id           INTEGER,
    created_ms          INTEGER NOT NULL,
    updated_ms          INTEGER NOT NULL,
    settled_ms          INTEGER
);
-- One live payment per issued challenge (a released reservation no longer holds it).
CREATE UNIQUE INDEX x402_settlements_live_challenge ON x402_settlements (challenge) WHERE status <> 'released';
CREATE INDEX x402_settlements_status ON x402_settlements (status, updated_ms);
