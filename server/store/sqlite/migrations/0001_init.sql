-- Ledger: exactly the criteria's custody.ledger_closed_fields, plus the surrogate key id.
-- Adding a column here is a criteria/handling version change (the list is closed).
CREATE TABLE ledger (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    payer_wallet        TEXT,
    ts                  TEXT    NOT NULL,
    day                 TEXT    NOT NULL,
    price_usdc_units    INTEGER NOT NULL CHECK (price_usdc_units >= 0),
    cad_rate            TEXT,
    cad_rate_date       TEXT,
    cad_basis           TEXT,
    cad_pending         INTEGER NOT NULL CHECK (cad_pending IN (0, 1)),
    refund              INTEGER NOT NULL DEFAULT 0 CHECK (refund IN (0, 1)),
    payment_tx          TEXT,
    solana_fee_lamports INTEGER CHECK (solana_fee_lamports >= 0),
    criteria_version    TEXT    NOT NULL,
    verdict_line        TEXT    NOT NULL,
    op                  TEXT    NOT NULL,
    undeclared_clusters INTEGER CHECK (undeclared_clusters >= 0),
    house               INTEGER NOT NULL CHECK (house IN (0, 1))
);
CREATE INDEX ledger_day ON ledger (day);

-- Free-tier state per caller key (a digest of the wallet or client address, never the raw value).
CREATE TABLE free_tier (
    caller_key TEXT    PRIMARY KEY,
    day        TEXT    NOT NULL,
    used       INTEGER NOT NULL,
    last_ms    INTEGER NOT NULL
);

-- Allowed free calls per UTC day, all callers together (tripwire: free use > 10x paid use).
CREATE TABLE free_calls_daily (
    day   TEXT    PRIMARY KEY,
    calls INTEGER NOT NULL
);
