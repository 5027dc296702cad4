-- Day-0 (the criteria's kill line): the first outside paid settle, the ledger row of a paid audit
-- that is not a house row (a house audit, or a payment on any network but mainnet, which the
-- payment gate books as a house row) and carries its payment transaction. One row, written by the
-- trigger in the same transaction as that ledger row and never moved afterwards (replicas racing
-- for it: the first to commit keeps it); the kill-line tripwires count from it. A ledger that had
-- such rows before this migration gets its first.
CREATE TABLE day0 (
    id         INTEGER     PRIMARY KEY CHECK (id = 1),
    ts         TIMESTAMPTZ NOT NULL,
    payment_tx TEXT        NOT NULL,
    ledger_id  BIGINT      NOT NULL
);
INSERT INTO day0 (id, ts, payment_tx, ledger_id)
    SELECT 1, ts, payment_tx, id FROM ledger
    WHERE op = 'audit' AND NOT house AND payment_tx IS NOT NULL
    ORDER BY ts, id LIMIT 1;
-- SET search_path FROM CURRENT: the trigger writes the day0 table of the ledger's own schema,
-- whatever the search_path of the session that inserts the row.
CREATE OR REPLACE FUNCTION ledger_day0() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO day0 (id, ts, payment_tx, ledger_id) VALUES (1, NEW.ts, NEW.payment_tx, NEW.id)
        ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER ledger_day0 AFTER INSERT ON ledger FOR EACH ROW
    WHEN (NEW.op = 'audit' AND NOT NEW.house AND NEW.payment_tx IS NOT NULL)
    EXECUTE FUNCTION ledger_day0();
