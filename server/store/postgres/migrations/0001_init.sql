-- Ledger: exactly the criteria's custody.ledger_closed_fields, plus the surrogate key id.
-- Adding a column here is a criteria/handling version change (the list is closed).
CREATE TABLE ledger (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    payer_wallet        TEXT,
    ts                  TIMESTAMPTZ NOT NULL,
    day                 DATE        NOT NULL,
    price_usdc_units    BIGINT      NOT NULL CHECK (price_usdc_units >= 0),
    cad_rate            NUMERIC,
    cad_rate_date       DATE,
    cad_basis           TEXT,
    cad_pending         BOOLEAN     NOT NULL,
    refund              BOOLEAN     NOT NULL DEFAULT FALSE,
    payment_tx          TEXT,
    solana_fee_lamports BIGINT CHECK (solana_fee_lamports >= 0),
    criteria_version    TEXT        NOT NULL,
    verdict_line        TEXT        NOT NULL,
    op                  TEXT        NOT NULL,
    undeclared_clusters INTEGER CHECK (undeclared_clusters >= 0),
    house               BOOLEAN     NOT NULL
);
CREATE INDEX ledger_day ON ledger (day);

-- Free-tier state per caller key (a digest of the wallet or client address, never the raw value).
CREATE TABLE free_tier (
    caller_key TEXT    PRIMARY KEY,
    day        DATE    NOT NULL,
    used       INTEGER NOT NULL,
    last_ms    BIGINT  NOT NULL
);

-- Allowed free calls per UTC day, all callers together (tripwire: free use > 10x paid use).
CREATE TABLE free_calls_daily (
    day   DATE   PRIMARY KEY,
    calls BIGINT NOT NULL
);
