-- Day-0 (the criteria's kill line): the first outside paid settle, the ledger row of a paid audit
-- that is not a house row (a house audit, or a payment on any network but mainnet, which the
-- payment gate books as a house row) and carries its payment transaction. One row, written by the
-- trigger in the same transaction as that ledger row and never moved afterwards; the kill-line
-- tripwires count from it. A ledger that had such rows before this migration gets its first.
CREATE TABLE day0 (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    ts         TEXT    NOT NULL,
    payment_tx TEXT    NOT NULL,
    ledger_id  BIGINT  NOT NULL
);
INSERT INTO day0 (id, ts, payment_tx, ledger_id)
    SELECT 1, ts, payment_tx, id FROM ledger
    WHERE op = 'audit' AND house = 0 AND payment_tx IS NOT NULL
    ORDER BY ts, id LIMIT 1;
CREATE TRIGGER ledger_day0 AFTER INSERT ON ledger
    WHEN NEW.op = 'audit' AND NEW.house = 0 AND NEW.payment_tx IS NOT NULL
BEGIN
    INSERT INTO day0 (id, ts, payment_tx, ledger_id) VALUES (1, NEW.ts, NEW.payment_tx, NEW.id)
        ON CONFLICT (id) DO NOTHING;
END;
